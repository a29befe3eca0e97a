package jetstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// taskLog records what a task reports through its TaskInfo: metrics,
// failures and log entries, debug level included.
type taskLog struct {
	metrics map[string]any
	failed  []error
	logs    *observer.ObservedLogs
}

func (l *taskLog) info(index, parallelism int) dsl.TaskInfo {
	l.metrics, l.failed = map[string]any{}, nil
	core, logs := observer.New(zapcore.DebugLevel)
	l.logs = logs
	return dsl.TaskInfo{
		Component: "in", Index: index, Parallelism: parallelism, Logger: zap.New(core),
		Metric: func(name string, v any) { l.metrics[name] = v },
		Fail:   func(err error) { l.failed = append(l.failed, err) },
	}
}

// logged returns the messages logged at level.
func (l *taskLog) logged(level zapcore.Level) []string {
	var out []string
	for _, e := range l.logs.FilterLevelExact(level).All() {
		out = append(out, e.Message)
	}
	return out
}

// handSource is a spout task with no keeper: the test fills its buffer with
// messages it fetched itself. positioned makes it a task of a topology with
// state.
func handSource[T any](info dsl.TaskInfo, cfg config, translate func(Message) (T, error), positioned bool) *source[T] {
	s := &source[T]{
		info: info, log: info.Logger, cfg: cfg, translate: translate, poison: newPoison(),
		buf: newBuffer(cfg.buffer), open: tracker{}, space: make(chan struct{}, 1), settled: make(chan struct{}, 1),
	}
	if positioned {
		s.cur = &cursor{}
	}
	return s
}

func fill(b *buffer, msgs []jetstream.Msg, at time.Time) {
	for _, m := range msgs {
		b.push(m, at)
	}
}

func waitInfo(t *testing.T, srv *natsServer, c jetstream.Consumer, what string, cond func(*jetstream.ConsumerInfo) bool) {
	t.Helper()
	testsupport.WaitUntil(t, 5*time.Second, what, func() bool { return cond(srv.info(t, c)) })
}

// drain calls Next until it hands out nothing.
func drain[T any](s *source[T]) ([]*entry, []T) {
	var (
		es []*entry
		vs []T
	)
	for {
		e, v, ok := s.Next()
		if !ok {
			return es, vs
		}
		es, vs = append(es, e), append(vs, v)
	}
}

func asString(m Message) (string, error) { return string(m.Data), nil }

// Next hands out the buffered messages in order with their metadata, counts
// them open, tells the fetcher there is room, and reports none at once when
// the buffer is empty; Ack acks each on the server and settles the task once
// none is open.
func TestNextHandsOutAndAckAcks(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 2)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	s := handSource(l.info(0, 1), newConfig(nil), asString, false)
	if _, _, ok := s.Next(); ok {
		t.Fatal("Next on an empty buffer handed something out")
	}
	fill(s.buf, fetch(t, c, 2), time.Now())
	var es []*entry
	for i, want := range []string{"m1", "m2"} {
		e, v, ok := s.Next()
		if !ok || v != want || e.seq != uint64(i+1) || e.delivered != 1 {
			t.Fatalf("Next = %v %q %v, want %q at sequence %d, first delivery", e, v, ok, want, i+1)
		}
		testsupport.Recv(t, s.space, time.Second, "the fetcher told of room")
		es = append(es, e)
	}
	if n := s.inflight.Load(); n != 2 || len(s.open) != 2 {
		t.Fatalf("inflight %d, open %d; want 2", n, len(s.open))
	}
	s.Ack(es[0])
	select {
	case <-s.settled:
		t.Fatal("settled with a message still open")
	default:
	}
	waitInfo(t, srv, c, "the first ack", func(i *jetstream.ConsumerInfo) bool { return i.NumAckPending == 1 && i.AckFloor.Stream == 1 })
	s.Ack(es[1])
	testsupport.Recv(t, s.settled, time.Second, "settled once none is open")
	waitInfo(t, srv, c, "the second ack", func(i *jetstream.ConsumerInfo) bool { return i.NumAckPending == 0 && i.AckFloor.Stream == 2 })
}

// A message the translator rejects is terminated on the server and counted;
// a run of rejects ends Next after 16 of them, so the task is not held.
func TestNextTerminatesRejectedMessages(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 20)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	s := handSource(l.info(0, 1), newConfig(nil), func(Message) (string, error) { return "", errors.New("no") }, false)
	fill(s.buf, fetch(t, c, 20), time.Now())
	if _, _, ok := s.Next(); ok {
		t.Fatal("Next handed out a rejected message")
	}
	if n := len(s.buf.items); n != 4 {
		t.Fatalf("%d messages left in the buffer after one Next, want 20-16 = 4", n)
	}
	if got := l.metrics["jetstream.terminated"]; got != int64(16) {
		t.Fatalf("jetstream.terminated = %v, want 16", got)
	}
	if s.inflight.Load() != 0 {
		t.Fatal("a rejected message counted open")
	}
	waitInfo(t, srv, c, "16 terminated", func(i *jetstream.ConsumerInfo) bool { return i.NumAckPending == 4 })
}

// Nack without state asks for a redelivery after the back-off of the
// message's delivery count; on its WithMaxDeliver-th delivery it terminates
// the message and reports it instead.
func TestNackRedeliversThenGivesUp(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 1)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	var given []Message
	cfg := newConfig([]Option{WithMaxDeliver(2), WithNackBackoff(time.Millisecond, time.Millisecond), WithGiveUp(func(m Message) { given = append(given, m) })})
	s := handSource(l.info(0, 1), cfg, asString, false)
	for d := uint64(1); d <= 2; d++ {
		fill(s.buf, fetch(t, c, 1), time.Now())
		e, _, ok := s.Next()
		if !ok || e.delivered != d {
			t.Fatalf("delivery %d: Next = %v %v", d, e, ok)
		}
		s.Nack(e)
		testsupport.Recv(t, s.settled, time.Second, "settled after the nack")
		if d == 1 && (len(given) != 0 || l.metrics["jetstream.gave-up"] != nil) {
			t.Fatal("given up on its first failure, with WithMaxDeliver(2)")
		}
	}
	if len(given) != 1 || given[0].StreamSeq != 1 || given[0].Delivered != 2 || string(given[0].Data) != "m1" || given[0].Stream != "S" || l.metrics["jetstream.gave-up"] != int64(1) {
		t.Fatalf("given up: %+v, metric %v; want the message at 1 of S, its data, delivered twice, once", given, l.metrics["jetstream.gave-up"])
	}
	waitInfo(t, srv, c, "the message terminated", func(i *jetstream.ConsumerInfo) bool {
		return i.NumAckPending == 0 && i.NumPending == 0 && i.NumRedelivered == 0
	})
}

// The nack's delay is the back-off of the delivery count: a message nacked
// on its first delivery with a base of an hour is not redelivered soon.
func TestNackDelaysTheRedelivery(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 1)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	s := handSource(l.info(0, 1), newConfig([]Option{WithNackBackoff(time.Hour, time.Hour)}), asString, false)
	fill(s.buf, fetch(t, c, 1), time.Now())
	e, _, _ := s.Next()
	s.Nack(e)
	if err := srv.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(1, jetstream.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		t.Fatalf("redelivered at once: %q", m.Data())
	}
}

// In a topology with state a task hands out only its own stream sequences
// (sequence mod parallelism = index), passing over the others, and its
// position moves past both; its acks and nacks go to no server, a rejected
// message is skipped, not terminated, and a nack counts a failure of the
// message unless the task's Context ended.
func TestPositionedNextOwnsItsSequences(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 6)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	info := l.info(1, 2).WithContext(ctx)
	s := handSource(info, newConfig([]Option{WithNackBackoff(time.Nanosecond, time.Nanosecond)}), func(m Message) (string, error) {
		if m.StreamSeq == 3 {
			return "", errors.New("no")
		}
		return string(m.Data), nil
	}, true)
	fill(s.buf, fetch(t, c, 6), time.Now())
	es, got := drain(s)
	if strings.Join(got, ",") != "m1,m5" || s.cur.next != 7 {
		t.Fatalf("task 1 of 2 handed out %v and stands at %d; want m1,m5 (3 rejected) at 7", got, s.cur.next)
	}
	if l.metrics["jetstream.terminated"] != int64(1) {
		t.Fatalf("jetstream.terminated = %v, want 1", l.metrics["jetstream.terminated"])
	}
	s.Ack(es[0])
	s.Nack(es[1])
	cancel()
	if _, _, fails, _ := s.poison.verdict(5, time.Now().Add(time.Second), &s.cfg); fails != 1 {
		t.Fatalf("the nack counted %d failures, want 1", fails)
	}
	if s.inflight.Load() != 0 || len(s.open) != 0 {
		t.Fatalf("inflight %d, open %d after the ack and nack", s.inflight.Load(), len(s.open))
	}
	// The state at the start is the state wanted: a sentinel's confirmed ack,
	// sent on the connection of the task's messages, makes sure the server
	// processed whatever the task sent before the check reads it.
	ackSentinel(t, srv, c, "s.a")
	if i := srv.info(t, c); i.NumAckPending != 6 || i.AckFloor.Stream != 0 {
		t.Fatalf("%d of the 6 acks pending, ack floor %d: the task acked, nacked or terminated a message", i.NumAckPending, i.AckFloor.Stream)
	}
}

// ackSentinel publishes one more message to subject of c's stream, fetches
// it and acks it with the server's confirmation: acks and naks sent before it
// on the same connection were processed by then. For explicit-ack consumers
// only (under AckAll the sentinel would ack what came before it).
func ackSentinel(t *testing.T, srv *natsServer, c jetstream.Consumer, subject string) {
	t.Helper()
	if _, err := srv.js.Publish(ctxFor(t), subject, []byte("sentinel")); err != nil {
		t.Fatal(err)
	}
	if err := fetch(t, c, 1)[0].DoubleAck(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
}

// A nack after the task's Context ended is a message abandoned with its
// incarnation, not a failure.
func TestPositionedNackAfterTheEndIsNoFailure(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 1)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	s := handSource(l.info(0, 1).WithContext(ctx), newConfig(nil), asString, true)
	fill(s.buf, fetch(t, c, 1), time.Now())
	e, _, _ := s.Next()
	cancel()
	s.Nack(e)
	if s.poison.failing.Load() != 0 {
		t.Fatal("a nack after the end counted as a failure")
	}
}

// A positioned task skips a message given up, moving its position past it
// and reporting it once with its failures, and holds a retry (and what
// follows it) until its back-off passed.
func TestPositionedNextSkipsAndHolds(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 3)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	var given []Message
	cfg := newConfig([]Option{WithMaxDeliver(2), WithNackBackoff(time.Hour, time.Hour), WithGiveUp(func(m Message) { given = append(given, m) })})
	s := handSource(l.info(0, 1), cfg, asString, true)
	past := time.Now().Add(-2 * time.Hour)
	s.poison.fail(1, past, &s.cfg)
	s.poison.fail(1, past, &s.cfg) // given up
	s.poison.fail(2, time.Now(), &s.cfg)
	fill(s.buf, fetch(t, c, 3), time.Now())
	if e, _, ok := s.Next(); ok {
		t.Fatalf("handed out %d, want 1 skipped and 2 held", e.seq)
	}
	if s.cur.next != 2 || len(s.buf.items) != 2 {
		t.Fatalf("position %d, %d buffered; want 2 and 2, the held retry first", s.cur.next, len(s.buf.items))
	}
	if len(given) != 1 || given[0].StreamSeq != 1 || given[0].Delivered != 2 || l.metrics["jetstream.gave-up"] != int64(1) {
		t.Fatalf("given up %v, metric %v; want 1 once, after 2 failures", given, l.metrics["jetstream.gave-up"])
	}
}

// Rewind sets where a positioned task starts, once, before its first Next;
// Position acks to the server what the previous checkpoint covered and
// returns the resume sequence.
func TestRewindAndPosition(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 4)
	c := srv.consumer(t, "S", "d", func(cc *jetstream.ConsumerConfig) { cc.AckPolicy = jetstream.AckAllPolicy })
	var l taskLog
	s := handSource(l.info(0, 1), newConfig(nil), asString, true)
	started := 0
	s.start = func() { started++ }
	if err := s.Rewind([]byte{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "8 bytes, got 3") {
		t.Fatalf("Rewind of 3 bytes: %v", err)
	}
	if err := s.Rewind([]byte{0, 0, 0, 0, 0, 0, 0, 3}); err != nil || s.cur.next != 3 || s.cur.marked != 3 {
		t.Fatalf("Rewind(3): %v, next %d, marked %d", err, s.cur.next, s.cur.marked)
	}
	s.Next()
	s.Next()
	if started != 1 || s.start != nil {
		t.Fatalf("the keeper started %d times", started)
	}
	if err := s.Rewind(make([]byte, 8)); err == nil || !strings.Contains(err.Error(), "after the first Next") {
		t.Fatalf("Rewind after Next: %v", err)
	}
	msgs := fetch(t, c, 4)
	fill(s.buf, msgs[:2], time.Now())
	drain(s)
	if p := s.Position(); string(p) != "\x00\x00\x00\x00\x00\x00\x00\x03" {
		t.Fatalf("Position = %x, want 3", p)
	}
	waitInfo(t, srv, c, "nothing acked before a checkpoint committed", func(i *jetstream.ConsumerInfo) bool { return i.AckFloor.Stream == 0 })
	fill(s.buf, msgs[2:], time.Now())
	drain(s)
	if p := s.Position(); string(p) != "\x00\x00\x00\x00\x00\x00\x00\x05" {
		t.Fatalf("Position = %x, want 5", p)
	}
	waitInfo(t, srv, c, "the first checkpoint's messages acked", func(i *jetstream.ConsumerInfo) bool { return i.AckFloor.Stream == 2 })
	if d := l.logged(zapcore.DebugLevel); len(d) != 0 {
		t.Fatalf("debug logs %q: the server took the ack", d)
	}
	// An ack the client refuses (the message was acked already) is logged.
	s.cur.covered = msgs[1] // acked by the Position before
	s.Position()
	if d := l.logged(zapcore.DebugLevel); len(d) != 1 || !strings.HasPrefix(d[0], "jetstream: ack of the committed position not sent") {
		t.Fatalf("debug logs %q, want the ack not sent", d)
	}
	// Without state there is no position.
	n := handSource(l.info(0, 1), newConfig(nil), asString, false)
	if n.Position() != nil || n.Rewind([]byte{1}) != nil {
		t.Fatal("a task without state has a position")
	}
}

// The spout's constructor fails its tasks with a bad option, an empty stream
// or durable name, or a nil translator for a T other than Message; it gives
// a task without a logger a silent one.
func TestSpoutArguments(t *testing.T) {
	toString := func(m Message) (string, error) { return string(m.Data), nil }
	for _, c := range []struct {
		name string
		spec *dsl.SpoutSpec
		want string // "" when the task starts
	}{
		{"valid", Spout[string]("nats://127.0.0.1:1", "S", "d", toString), ""},
		{"nil translator for Message", Spout[Message]("nats://127.0.0.1:1", "S", "d", nil), ""},
		{"nil translator for string", Spout[string]("nats://127.0.0.1:1", "S", "d", nil), `spout "in": jetstream: Spout[string]: a nil translate function needs T = jetstream.Message`},
		{"empty stream", Spout[string]("nats://127.0.0.1:1", "", "d", toString), `spout "in": jetstream: Spout: empty stream name`},
		{"empty durable", Spout[string]("nats://127.0.0.1:1", "S", "", toString), `spout "in": jetstream: Spout: empty durable consumer name for stream "S"`},
		{"bad option", Spout[string]("nats://127.0.0.1:1", "S", "d", toString, WithBuffer(0)), `spout "in": jetstream: WithBuffer(0)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l taskLog
			info := l.info(0, 1)
			info.Logger = nil
			info.Checkpointed = true // the keeper starts at the first Next: no connection here
			c.spec.Typed(info)
			switch {
			case c.want == "" && len(l.failed) != 0:
				t.Fatalf("failed: %v", l.failed)
			case c.want != "" && (len(l.failed) != 1 || !strings.HasPrefix(l.failed[0].Error(), c.want)):
				t.Fatalf("failed with %v, want one error starting %q", l.failed, c.want)
			}
		})
	}
	// The identity translator hands the message itself over.
	var cfg config
	m, err := identity[Message](&cfg)(Message{Subject: "s.a", StreamSeq: 3})
	if err != nil || m.Subject != "s.a" || m.StreamSeq != 3 || cfg.err != nil {
		t.Fatalf("identity = %+v, %v (config %v)", m, err, cfg.err)
	}
}

// A task without a logger logs to a silent one; a task with a bad option
// starts nothing and has no position.
func TestNewSourceWithABadOption(t *testing.T) {
	var l taskLog
	info := l.info(0, 1)
	info.Logger = nil
	s := newSource(info, "nats://127.0.0.1:1", "S", "d", asString, newConfig([]Option{WithBuffer(0)}), newPoison())
	if s.log == nil || s.cur != nil || s.start != nil || len(l.failed) != 1 {
		t.Fatalf("log %v, cursor %v, start set %v, failed %v", s.log, s.cur, s.start != nil, l.failed)
	}
}

// What the server did not take is logged (a failed ack or nak at debug, a
// failed terminate as a warning, since the message comes back); what it took
// is not.
func TestSpoutLogsWhatTheServerDidNotTake(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 8)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	reject := func(m Message) (string, error) {
		if m.StreamSeq%4 == 0 {
			return "", errors.New("no")
		}
		return string(m.Data), nil
	}
	s := handSource(l.info(0, 1), newConfig([]Option{WithMaxDeliver(1)}), reject, false)
	msgs := fetch(t, c, 8)
	// 1 acked, 2 given up, 3 nacked (by the mutant's rule, never: max deliver 1
	// gives every nack up), 4 rejected: all taken by the server.
	fill(s.buf, msgs[:4], time.Now())
	es, _ := drain(s)
	s.Ack(es[0])
	s.Nack(es[1])
	if d, w := l.logged(zapcore.DebugLevel), l.logged(zapcore.WarnLevel); len(d) != 0 || len(w) != 0 {
		t.Fatalf("logged debug %q, warnings %q for what the server took", d, w)
	}
	// 5..8 acked by someone else first: the server refuses each.
	for _, m := range msgs[4:] {
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	fill(s.buf, msgs[4:], time.Now())
	es, _ = drain(s)
	s.Ack(es[0])
	s.Nack(es[1])
	if d := l.logged(zapcore.DebugLevel); strings.Join(d, "|") != "jetstream: ack not sent" {
		t.Fatalf("debug %q, want the failed ack", d)
	}
	w := l.logged(zapcore.WarnLevel)
	if len(w) != 2 || !strings.HasPrefix(w[0], "jetstream: terminating a message failed") || !strings.HasPrefix(w[1], "jetstream: terminating a message given up failed") {
		t.Fatalf("warnings %q, want the failed terminate of the rejected message and of the one given up", w)
	}
	s.cfg.maxDeliver = -1
	fill(s.buf, msgs[6:7], time.Now())
	es, _ = drain(s)
	s.Nack(es[0])
	if d := l.logged(zapcore.DebugLevel); len(d) != 2 || d[1] != "jetstream: nak not sent; redelivery after AckWait" {
		t.Fatalf("debug %q, want the failed nak last", d)
	}
}

// The heartbeat sends an in-progress signal for each open or buffered
// message whose AckWait restarted a period or more ago, and restarts its
// count only when the server took the signal.
func TestSpoutHeartbeat(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 4)
	c := srv.consumer(t, "S", "d")
	var l taskLog
	s := handSource(l.info(0, 1), newConfig(nil), asString, false)
	s.period.Store(int64(time.Second))
	msgs := fetch(t, c, 4)
	t0 := time.Unix(1000, 0)
	fill(s.buf, msgs[:2], t0)
	es, _ := drain(s)
	es[1].beat = t0.Add(time.Millisecond) // less than a period before now
	fill(s.buf, msgs[2:], t0)
	s.buf.items[1].beat = t0.Add(time.Millisecond)
	now := t0.Add(time.Second)
	s.heartbeat(now)
	if !es[0].beat.Equal(now) || !es[1].beat.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("open beats %v %v; want the first restarted at %v, the second kept", es[0].beat, es[1].beat, now)
	}
	if b := s.buf.items; !b[0].beat.Equal(now) || !b[1].beat.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("buffered beats %v %v; want the first restarted at %v, the second kept", b[0].beat, b[1].beat, now)
	}
	// Messages the server no longer holds open take no signal.
	for _, m := range msgs {
		_ = m.Ack()
	}
	later := now.Add(time.Hour)
	s.heartbeat(later)
	if es[0].beat.Equal(later) || s.buf.items[0].beat.Equal(later) {
		t.Fatal("a beat restarted though the signal was refused")
	}
}
