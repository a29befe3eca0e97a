package jetstream

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// A task's consumers are named <durable>-t<index>-<16 hex digits>; no other
// name is the task's.
func TestOwnConsumer(t *testing.T) {
	k := &keeper[string]{src: &source[string]{info: dsl.TaskInfo{Index: 3}}, durable: "d"}
	if p := k.consumerPrefix(); p != "d-t3-" {
		t.Fatalf("prefix %q", p)
	}
	for name, want := range map[string]bool{
		"d-t3-0123456789abcdef":  true,
		"d-t3-0123456789abcde":   false,
		"d-t3-0123456789abcdef0": false,
		"d-t3-0123456789abcdeg":  false,
		"d-t4-0123456789abcdef":  false,
		"e-t3-0123456789abcdef":  false,
	} {
		if got := k.ownConsumer(name); got != want {
			t.Errorf("ownConsumer(%q) = %v, want %v", name, got, want)
		}
	}
}

// consumerNames lists the consumers of stream.
func consumerNames(t *testing.T, srv *natsServer, stream string) []string {
	t.Helper()
	st, err := srv.js.Stream(ctxFor(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	l := st.ConsumerNames(ctxFor(t))
	for n := range l.Name() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// The keeper of a task with state reads the stream from its position
// through a consumer of its own (AckAll, no delivery or ack-pending bound,
// removed by the server once inactive, starting at the position, the one
// filter subject), deletes the consumers of its earlier incarnations but no
// other task's, keeps reading through the same consumer while it delivers in
// order, and deletes its consumer at the end.
func TestKeeperRunPositioned(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 10)
	srv.consumer(t, "S", "d-t0-aaaaaaaaaaaaaaaa") // an earlier incarnation's
	srv.consumer(t, "S", "d-t1-bbbbbbbbbbbbbbbb") // another task's
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	info := l.info(0, 1).WithContext(ctx)
	s := handSource(info, newConfig([]Option{WithBuffer(4), WithFilterSubjects("s.a")}), asString, true)
	s.cur.next = 3
	k := &keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.runPositioned(ctx, 3)
	}()
	testsupport.WaitUntil(t, 5*time.Second, "the buffer filled", func() bool { return s.buf.free() == 0 })
	names := consumerNames(t, srv, "S")
	if len(names) != 2 || names[1] != "d-t1-bbbbbbbbbbbbbbbb" || !k.ownConsumer(names[0]) {
		t.Fatalf("consumers %q, want the task's new one and the other task's", names)
	}
	mine := names[0]
	cons, err := srv.js.Consumer(ctxFor(t), "S", mine)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	if cfg.AckPolicy != jetstream.AckAllPolicy || cfg.MaxDeliver != -1 || cfg.MaxAckPending != -1 || cfg.InactiveThreshold != positionedInactive ||
		cfg.DeliverPolicy != jetstream.DeliverByStartSequencePolicy || cfg.OptStartSeq != 3 || cfg.FilterSubject != "s.a" || cfg.AckWait != 30*time.Second {
		t.Fatalf("consumer config %+v", cfg)
	}
	var got []string
	testsupport.WaitUntil(t, 5*time.Second, "messages 3 to 10 handed out", func() bool {
		_, vs := drain(s)
		got = append(got, vs...)
		return len(got) >= 8
	})
	if strings.Join(got, ",") != "m3,m4,m5,m6,m7,m8,m9,m10" {
		t.Fatalf("handed out %v", got)
	}
	if names := consumerNames(t, srv, "S"); len(names) != 2 || names[0] != mine {
		t.Fatalf("consumers %q after reading on, want %q still", names, mine)
	}
	cancel()
	testsupport.Recv(t, done, 5*time.Second, "the keeper's end")
	if names := consumerNames(t, srv, "S"); len(names) != 1 || names[0] != "d-t1-bbbbbbbbbbbbbbbb" {
		t.Fatalf("consumers %q after the end, want only the other task's", names)
	}
	for _, e := range l.logs.FilterLevelExact(zapcore.DebugLevel).All() {
		if e.Message != "jetstream: reading the stream" {
			t.Errorf("logged %q: no fetch failed, no delete missed", e.Message)
		}
	}
}

// Without a position the task reads from the stream's start; a stream that
// does not exist fails the task, naming it; a connection that cannot be
// opened too.
func TestKeeperRunPositionedFromTheStartAndFailures(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 2)
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	s := handSource(l.info(0, 1).WithContext(ctx), newConfig([]Option{WithFilterSubjects("s.a", "s.b")}), asString, true)
	k := &keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.runPositioned(ctx, 0)
	}()
	testsupport.WaitUntil(t, 5*time.Second, "the stream read", func() bool { return s.buf.free() == s.cfg.buffer-2 })
	if _, vs := drain(s); strings.Join(vs, ",") != "m1,m2" {
		t.Fatalf("handed out %v", vs)
	}
	names := consumerNames(t, srv, "S")
	if len(names) != 1 {
		t.Fatalf("consumers %q", names)
	}
	cons, err := srv.js.Consumer(ctxFor(t), "S", names[0])
	if err != nil {
		t.Fatal(err)
	}
	if cfg := cons.CachedInfo().Config; cfg.OptStartSeq != 1 || len(cfg.FilterSubjects) != 2 {
		t.Fatalf("consumer starts at %d with filters %q, want 1 and both", cfg.OptStartSeq, cfg.FilterSubjects)
	}
	cancel()
	testsupport.Recv(t, done, 5*time.Second, "the keeper's end")

	s = handSource(l.info(0, 1), newConfig(nil), asString, true)
	(&keeper[string]{src: s, url: srv.url, stream: "NONE", durable: "d"}).runPositioned(context.Background(), 1)
	if len(l.failed) != 1 || !strings.Contains(l.failed[0].Error(), `spout "in" task 0: creating consumer "d-t0-`) || !strings.Contains(l.failed[0].Error(), `on stream "NONE" at sequence 1`) {
		t.Fatalf("failed %v", l.failed)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	s = handSource(l.info(0, 1).WithContext(ctx), newConfig(nil), asString, true)
	(&keeper[string]{src: s, url: srv.url, stream: "NONE", durable: "d"}).runPositioned(ctx, 1)
	if len(l.failed) != 0 {
		t.Fatalf("a task whose Context ended failed: %v", l.failed)
	}
	s = handSource(l.info(0, 1), newConfig([]Option{WithNATSOptions(nats.RootCAs(t.TempDir() + "/none.pem"))}), asString, true)
	(&keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}).runPositioned(context.Background(), 1)
	if len(l.failed) != 1 || !strings.Contains(l.failed[0].Error(), "connecting to") {
		t.Fatalf("failed %v", l.failed)
	}
}

// When its consumer stops delivering (deleted behind its back), the task
// makes a new one at its position after 50 ms, then twice as long each time.
func TestKeeperRunPositionedRetriesWithBackoff(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 1)
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := handSource(l.info(0, 1).WithContext(ctx), newConfig(nil), asString, true)
	k := &keeper[string]{src: s, url: srv.url, stream: "S", durable: "d"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.runPositioned(ctx, 1)
	}()
	testsupport.WaitUntil(t, 5*time.Second, "the message fetched", func() bool { return s.buf.free() == s.cfg.buffer-1 })
	drain(s) // the position moves on: each new consumer starts at 2
	var began time.Time
	for i := range 3 {
		var name string
		testsupport.WaitUntil(t, 5*time.Second, "a consumer of the task's", func() bool {
			names := consumerNames(t, srv, "S")
			if len(names) == 1 && k.ownConsumer(names[0]) {
				name = names[0]
			}
			return name != ""
		})
		if i == 0 {
			began = time.Now()
		}
		if err := srv.js.DeleteConsumer(ctxFor(t), "S", name); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(began); d < 150*time.Millisecond {
		t.Fatalf("two new consumers %v after the first was deleted, want at least the waits before them, 50+100 ms", d)
	}
	// The keeper logs a consumer after making it: the test may have seen and
	// deleted the third before its line was written.
	testsupport.WaitUntil(t, 5*time.Second, "3 consumers logged as made", func() bool {
		return l.logs.FilterMessage("jetstream: reading the stream").Len() >= 3
	})
	cancel()
	testsupport.Recv(t, done, 5*time.Second, "the keeper's end")
}
