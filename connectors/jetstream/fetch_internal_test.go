package jetstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// The buffer reports its room, and an empty one has nothing to peek or pop.
func TestBuffer(t *testing.T) {
	b := newBuffer(3)
	if _, ok := b.peek(); ok {
		t.Fatal("peek of an empty buffer")
	}
	if _, ok := b.pop(); ok {
		t.Fatal("pop of an empty buffer")
	}
	b.push(nil, time.Unix(1, 0))
	b.push(nil, time.Unix(2, 0))
	if f := b.free(); f != 1 {
		t.Fatalf("free = %d with 2 of 3 taken, want 1", f)
	}
	if m, ok := b.pop(); !ok || !m.beat.Equal(time.Unix(1, 0)) {
		t.Fatalf("pop = %v %v, want the first pushed", m, ok)
	}
	if all := b.takeAll(); len(all) != 1 || b.free() != 0 {
		t.Fatalf("takeAll = %d messages, free after %d; want 1 and 0", len(all), b.free())
	}
}

// A refusal by the server is final; a server away or busy is not.
func TestFinal(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&jetstream.APIError{Code: 503}, false},
		{&jetstream.APIError{Code: 408}, false},
		{&jetstream.APIError{Code: 404}, true},
		{&jetstream.APIError{Code: 400}, true},
		{jetstream.ErrStreamNotFound, true},
		{jetstream.ErrInvalidConsumerName, true},
		{jetstream.ErrInvalidStreamName, true},
		{context.DeadlineExceeded, false},
	} {
		if got := final(c.err); got != c.want {
			t.Errorf("final(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// The keeper of a task without state sets up the shared consumer (explicit
// acks, the AckWait, unlimited deliveries, MaxAckPending = tasks x (max spout
// pending + buffer), the one filter subject), keeps the buffer full, posts a
// heartbeat every third of the AckWait, and at the end hands the buffered
// messages back at once, waits until the open ones are settled, and stops.
func TestKeeperRun(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 10)
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	info := l.info(0, 2).WithContext(ctx)
	info.Settings = dsl.Settings{MaxSpoutPending: 3, MessageTimeout: time.Hour}
	// The heartbeats posted run here, on the goroutine that calls Next as a
	// task's would: they keep the buffered messages from redelivery however
	// long this machine takes between the fetch and the stop.
	posted := make(chan func(dsl.Collector), 64)
	info.Post = func(f func(dsl.Collector)) {
		select {
		case posted <- f:
		default: // a full channel: the heartbeats to run are there already
		}
	}
	beats := 0
	runPosted := func() {
		for {
			select {
			case f := <-posted:
				f(nil)
				beats++
			default:
				return
			}
		}
	}
	s := handSource(info, newConfig([]Option{WithBuffer(4), WithAckWait(300 * time.Millisecond), WithFilterSubjects("s.a")}), asString, false)
	k := &keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.run(ctx)
	}()
	testsupport.WaitUntil(t, 5*time.Second, "the buffer filled", func() bool { return s.buf.free() == 0 })
	cons, err := srv.js.Consumer(ctxFor(t), "S", "d")
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	if cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.AckWait != 300*time.Millisecond || cfg.MaxDeliver != -1 || cfg.MaxAckPending != 2*(3+4) ||
		cfg.FilterSubject != "s.a" || len(cfg.FilterSubjects) != 0 {
		t.Fatalf("consumer config %+v", cfg)
	}
	if p := time.Duration(s.period.Load()); p != 100*time.Millisecond {
		t.Fatalf("heartbeat period %v, want a third of the AckWait", p)
	}
	if got := l.logged(zapcore.InfoLevel); len(got) != 1 || !strings.Contains(got[0], "AckWait is shorter than the message timeout") {
		t.Fatalf("info logs %q", got)
	}
	testsupport.WaitUntil(t, 5*time.Second, "two heartbeats posted", func() bool { runPosted(); return beats >= 2 })
	e, _, ok := s.Next()
	if !ok {
		t.Fatal("nothing to hand out")
	}
	testsupport.WaitUntil(t, 5*time.Second, "the buffer filled again", func() bool { runPosted(); return s.buf.free() == 0 })
	cancel()
	// The 4 buffered are handed back (redelivered at once), 1 stays open.
	testsupport.WaitUntil(t, 5*time.Second, "the buffer emptied", func() bool { _, ok := s.buf.peek(); return !ok })
	back := 0
	batch, err := cons.Fetch(10, jetstream.FetchMaxWait(testsupport.Scaled(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		// The open one may come back too once its AckWait passed: no heartbeat runs here.
		if md, _ := m.Metadata(); md.NumDelivered == 2 && md.Sequence.Stream != e.seq {
			back++
		}
	}
	if back != 4 {
		t.Fatalf("%d messages redelivered after the stop, want the 4 buffered", back)
	}
	select {
	case <-done:
		t.Fatal("the keeper stopped with a message open")
	default:
	}
	s.Ack(e)
	testsupport.Recv(t, done, 5*time.Second, "the keeper's end once nothing is open")
	if d := l.logged(zapcore.DebugLevel); len(d) != 0 {
		t.Fatalf("debug logs %q: no fetch failed, no retry", d)
	}
	if !srv.nc.IsConnected() || s.buf.free() != 0 {
		t.Fatal("the test's connection closed, or the buffer takes messages after the end")
	}
}

// A stop waits for open messages at most a message timeout and an AckWait.
func TestKeeperRunStopsWaitingAtItsBound(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 1)
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	info := l.info(0, 1).WithContext(ctx)
	info.Settings = dsl.Settings{MaxSpoutPending: 1, MessageTimeout: 200 * time.Millisecond}
	info.Post = func(func(dsl.Collector)) {}
	s := handSource(info, newConfig([]Option{WithAckWait(200 * time.Millisecond)}), asString, false)
	k := &keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.run(ctx)
	}()
	testsupport.WaitUntil(t, 5*time.Second, "the message buffered", func() bool { _, ok := s.buf.peek(); return ok })
	if _, _, ok := s.Next(); !ok {
		t.Fatal("nothing to hand out")
	}
	if got := l.logged(zapcore.InfoLevel); len(got) != 0 {
		t.Fatalf("logged %q with an AckWait no shorter than the message timeout", got)
	}
	stopped := time.Now()
	cancel()
	testsupport.Recv(t, done, 5*time.Second, "the keeper's end at its bound")
	if d := time.Since(stopped); d < 400*time.Millisecond {
		t.Fatalf("the keeper stopped %v after the stop with a message open, want at least the message timeout and an AckWait, 400ms", d)
	}
}

// A consumer the server refuses fails the task; a connection that cannot be
// opened too.
func TestKeeperRunFailures(t *testing.T) {
	srv := startServer(t)
	var l taskLog
	info := l.info(0, 1)
	info.Settings = dsl.Settings{MaxSpoutPending: 1, MessageTimeout: time.Second}
	s := handSource(info, newConfig(nil), asString, false)
	(&keeper[string]{src: s, url: srv.url, stream: "NONE", durable: "d"}).run(context.Background())
	if len(l.failed) != 1 || !strings.Contains(l.failed[0].Error(), `setting up consumer "d" on stream "NONE"`) {
		t.Fatalf("failed %v", l.failed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s = handSource(l.info(0, 1).WithContext(ctx), newConfig(nil), asString, false)
	(&keeper[string]{src: s, url: srv.url, stream: "NONE", durable: "d"}).run(ctx)
	if len(l.failed) != 0 {
		t.Fatalf("a task whose Context ended failed: %v", l.failed)
	}
	s = handSource(l.info(0, 1), newConfig([]Option{WithNATSOptions(nats.RootCAs(t.TempDir() + "/none.pem"))}), asString, false)
	(&keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}).run(context.Background())
	if len(l.failed) != 1 || !strings.Contains(l.failed[0].Error(), "connecting to") {
		t.Fatalf("failed %v", l.failed)
	}
}

// While the server has no JetStream (a 503, not a refusal), the consumer's
// set-up is retried after 50 ms, then twice as long each time; the end of
// the task's Context ends the retries.
func TestConsumerRetriesWithBackoff(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(testsupport.Scaled(10 * time.Second)) {
		t.Fatal("nats-server not ready")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, log string
		set       func(ctx context.Context, k *keeper[string]) error
	}{
		{"shared", "jetstream: consumer not set up yet; retrying", func(ctx context.Context, k *keeper[string]) error {
			_, _, err := k.consumer(ctx, nc)
			return err
		}},
		{"positioned", "jetstream: consumer not created yet; retrying", func(ctx context.Context, k *keeper[string]) error {
			_, _, err := k.positionedConsumer(ctx, js, 1, "")
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l taskLog
			s := handSource(l.info(0, 1), newConfig(nil), asString, c.name == "positioned")
			k := &keeper[string]{src: s, stream: "S", durable: "d"}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			began := time.Now()
			go func() { errc <- c.set(ctx, k) }()
			testsupport.WaitUntil(t, 5*time.Second, "four attempts", func() bool { return l.logs.FilterMessage(c.log).Len() >= 4 })
			if d := time.Since(began); d < 350*time.Millisecond {
				t.Fatalf("four attempts in %v, want at least the waits between them, 50+100+200 ms", d)
			}
			cancel()
			if err := testsupport.Recv(t, errc, 5*time.Second, "the end of the retries"); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want the Context's", err)
			}
		})
	}
}

// A fetch that fails (the consumer is gone) is retried after 50 ms, then
// twice as long each time, from the start and after a fetch that succeeded
// (lower bounds on the real clock; TestFetchBackoffStartsAnewAfterASuccess
// steps the waits themselves); the end of the task's Context ends the
// fetcher.
func TestFetchRetriesWithBackoff(t *testing.T) {
	for _, before := range []bool{true, false} {
		name := "after a success"
		if before {
			name = "from the start"
		}
		t.Run(name, func(t *testing.T) {
			srv := startServer(t)
			srv.stream(t, "S", "s", 1)
			cons := srv.consumer(t, "S", "d")
			var l taskLog
			// A buffer of one: the first fetch ends as soon as it has the message.
			s := handSource(l.info(0, 1), newConfig([]Option{WithBuffer(1)}), asString, false)
			k := &keeper[string]{src: s, stream: "S", durable: "d"}
			remove := func() {
				if err := srv.js.DeleteConsumer(ctxFor(t), "S", "d"); err != nil {
					t.Fatal(err)
				}
			}
			if before {
				remove()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			began := time.Now()
			go func() {
				defer close(done)
				k.fetch(ctx, cons)
			}()
			if !before {
				testsupport.WaitUntil(t, 5*time.Second, "the message fetched", func() bool { return s.buf.free() == 0 })
				began = time.Now()
				remove()
				if _, _, ok := s.Next(); !ok { // room: the fetcher fetches again
					t.Fatal("nothing to hand out")
				}
			}
			const failed = "jetstream: fetch failed; retrying"
			testsupport.WaitUntil(t, 5*time.Second, "four failed fetches", func() bool { return l.logs.FilterMessage(failed).Len() >= 4 })
			if d := time.Since(began); d < 350*time.Millisecond {
				t.Fatalf("four failed fetches in %v, want at least the waits between them, 50+100+200 ms", d)
			}
			cancel()
			testsupport.Recv(t, done, 5*time.Second, "the fetcher's end")
		})
	}
}

// The back-off between failed fetches doubles from 50 ms, and a fetch that
// succeeds starts it anew: stepped through the keeper's sleep, without a
// clock.
func TestFetchBackoffStartsAnewAfterASuccess(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 1)
	cons := srv.consumer(t, "S", "d")
	var l taskLog
	s := handSource(l.info(0, 1), newConfig([]Option{WithBuffer(1)}), asString, false)
	st := newSteppedSleep()
	k := &keeper[string]{src: s, stream: "S", durable: "d", sleep: st.sleep}
	remove := func() {
		if err := srv.js.DeleteConsumer(ctxFor(t), "S", "d"); err != nil {
			t.Fatal(err)
		}
	}
	remove()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.fetch(ctx, cons)
	}()
	for _, want := range []time.Duration{50, 100, 200} {
		if got := st.next(t, "a failed fetch's wait"); got != want*time.Millisecond {
			t.Fatalf("waited %v, want %v ms", got, want)
		}
		if want == 200 {
			srv.consumer(t, "S", "d") // the next fetch succeeds
		}
		st.resume <- struct{}{}
	}
	testsupport.WaitUntil(t, 5*time.Second, "the message fetched", func() bool { return s.buf.free() == 0 })
	remove()
	if _, _, ok := s.Next(); !ok { // room: the keeper fetches again, and fails
		t.Fatal("nothing to hand out")
	}
	if got := st.next(t, "the wait after the success"); got != 50*time.Millisecond {
		t.Fatalf("waited %v after a fetch that succeeded, want 50ms again", got)
	}
	cancel()
	testsupport.Recv(t, done, 5*time.Second, "the fetcher's end")
}

// steppedSleep stands in for the real wait of a keeper or a publisher: it
// hands each wait asked for to the test and returns when the test resumes
// it (true) or the caller's ctx ends (false).
type steppedSleep struct {
	waits  chan time.Duration
	resume chan struct{}
}

func newSteppedSleep() *steppedSleep {
	return &steppedSleep{waits: make(chan time.Duration), resume: make(chan struct{})}
}

func (s *steppedSleep) sleep(ctx context.Context, d time.Duration) bool {
	select {
	case s.waits <- d:
	case <-ctx.Done():
		return false
	}
	select {
	case <-s.resume:
		return true
	case <-ctx.Done():
		return false
	}
}

// next returns the next wait asked for, leaving the caller waiting.
func (s *steppedSleep) next(t *testing.T, what string) time.Duration {
	t.Helper()
	return testsupport.Recv(t, s.waits, 5*time.Second, what)
}
