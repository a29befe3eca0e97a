package sheltertest_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

type item struct{ N int }

// --- Source -----------------------------------------------------------------

func TestSourceHandsOutIDsInOrder(t *testing.T) {
	src := sheltertest.NewSource("a", "b")
	for i, want := range []string{"a", "b"} {
		id, v, ok := sheltertest.Feed(src).Next()
		if !ok || id != i+1 || v != want {
			t.Fatalf("Next() = %d, %q, %v; want %d, %q, true", id, v, ok, i+1, want)
		}
	}
	if id, v, ok := sheltertest.Feed(src).Next(); ok || id != 0 || v != "" {
		t.Fatalf("Next() on an empty source = %d, %q, %v; want nothing", id, v, ok)
	}
	src.Push("c", "d")
	if id, v, ok := sheltertest.Feed(src).Next(); !ok || id != 3 || v != "c" {
		t.Fatalf("Next() after Push = %d, %q, %v; want 3, c, true", id, v, ok)
	}
}

func TestSourceIDsAreUniqueUnderConcurrentNext(t *testing.T) {
	const n = 1000
	values := make([]int, n)
	for i := range values {
		values[i] = i
	}
	src := sheltertest.NewSource(values...)
	var mu sync.Mutex
	seen := map[int]int{} // id -> value
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id, v, ok := sheltertest.Feed(src).Next()
				if !ok {
					return
				}
				mu.Lock()
				seen[id] = v
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct ids for %d values", len(seen), n)
	}
	for id, v := range seen {
		if id != v+1 { // ids follow the queue order
			t.Fatalf("id %d was given value %d", id, v)
		}
	}
}

func TestSourceRecordsOutcomesInOrder(t *testing.T) {
	src := sheltertest.NewSource("a", "b", "c")
	for range 3 {
		sheltertest.Feed(src).Next()
	}
	before := time.Now()
	sheltertest.Feed(src).Nack(2)
	sheltertest.Feed(src).Ack(1)
	sheltertest.Feed(src).Ack(3)
	after := time.Now()
	got := src.Outcomes()
	want := []struct {
		id    int
		value string
		acked bool
	}{{2, "b", false}, {1, "a", true}, {3, "c", true}}
	if len(got) != len(want) {
		t.Fatalf("Outcomes() = %+v, want 3", got)
	}
	for i, w := range want {
		o := got[i]
		if o.ID != w.id || o.Value != w.value || o.Acked != w.acked {
			t.Errorf("outcome %d = %+v, want id %d value %q acked %v", i, o, w.id, w.value, w.acked)
		}
		if o.At.Before(before) || o.At.After(after) {
			t.Errorf("outcome %d at %v, not when it happened", i, o.At)
		}
	}
	got[0].ID = 99 // a copy
	if src.Outcomes()[0].ID != 2 {
		t.Error("Outcomes() shares the source's record")
	}
	if err := src.Verify(); err != nil {
		t.Errorf("Verify() = %v, want nil: every message has one outcome", err)
	}
}

// Each case breaks exactly-once in one way, so it fails if Verify stops
// checking that way.
func TestVerifyReportsEveryViolation(t *testing.T) {
	tests := []struct {
		name    string
		handout int // messages handed out (ids 1..handout)
		settle  func(src *sheltertest.Source[string])
		want    []string // the problems, in order
	}{
		{"a missing outcome", 3, func(s *sheltertest.Source[string]) { sheltertest.Feed(s).Ack(1); sheltertest.Feed(s).Nack(3) },
			[]string{"message 2 has no outcome"}},
		{"a duplicate outcome", 2, func(s *sheltertest.Source[string]) {
			sheltertest.Feed(s).Ack(1)
			sheltertest.Feed(s).Ack(2)
			sheltertest.Feed(s).Nack(1)
		},
			[]string{"message 1 has 2 outcomes"}},
		{"an outcome for an unknown id", 1, func(s *sheltertest.Source[string]) { sheltertest.Feed(s).Ack(1); sheltertest.Feed(s).Ack(9) },
			[]string{"outcome for message 9, which was never handed out"}},
		{"an outcome for id 0", 1, func(s *sheltertest.Source[string]) { sheltertest.Feed(s).Ack(1); sheltertest.Feed(s).Nack(0) },
			[]string{"outcome for message 0, which was never handed out"}},
		{"every kind at once, unknown ids sorted", 3, func(s *sheltertest.Source[string]) {
			sheltertest.Feed(s).Ack(2)
			sheltertest.Feed(s).Ack(2)
			sheltertest.Feed(s).Ack(2)
			sheltertest.Feed(s).Nack(12)
			sheltertest.Feed(s).Nack(3)
			sheltertest.Feed(s).Nack(11)
		}, []string{"message 1 has no outcome", "message 2 has 3 outcomes",
			"outcome for message 11, which was never handed out", "outcome for message 12, which was never handed out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := sheltertest.NewSource("a", "b", "c")
			for range tt.handout {
				sheltertest.Feed(src).Next()
			}
			tt.settle(src)
			err := src.Verify()
			if err == nil {
				t.Fatalf("Verify() = nil, want %q", tt.want)
			}
			if want := "sheltertest: " + strings.Join(tt.want, "; "); err.Error() != want {
				t.Errorf("Verify() = %q\nwant %q", err, want)
			}
		})
	}
}

// A source that handed out nothing checked nothing: a test whose topology
// never pulled from it must not pass on it.
func TestVerifyOfAnUnusedSource(t *testing.T) {
	err := sheltertest.NewSource[int](1, 2).Verify()
	if err == nil || err.Error() != "sheltertest: no message was handed out" {
		t.Errorf("Verify() = %v, want it to say no message was handed out", err)
	}
}

// TestSourceFeedsASpoutOfAnyParallelism: one Source shared by every task of
// a spout, each message acked exactly once.
func TestSourceFeedsASpoutOfAnyParallelism(t *testing.T) {
	const n = 200
	src := sheltertest.NewSource[item]()
	for i := 1; i <= n; i++ {
		src.Push(item{i})
	}
	clk := sheltertest.NewClock(time.Unix(0, 0))
	b := dsl.New("shared", nil)
	spout := b.Spout("items", src.Spout(), dsl.Parallelism(3))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(item, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Shuffle[item]())
	r := run(t, b, clk.Option())
	waitOutcomes(t, src, n)
	if err := sheltertest.WaitIdle(ctxFor(t), r); err != nil {
		t.Fatal(err)
	}
	if err := src.Verify(); err != nil {
		t.Fatal(err)
	}
	values := map[int]bool{}
	for _, o := range src.Outcomes() {
		if !o.Acked {
			t.Errorf("message %d was nacked", o.ID)
		}
		values[o.Value.N] = true
	}
	if len(values) != n {
		t.Errorf("%d distinct values acked, want %d", len(values), n)
	}
}

// --- Clock ------------------------------------------------------------------

// held is a Manual bolt handler that never acks: only a timeout ends its
// inputs' trees. It reports each input on got.
type held struct{ got chan<- item }

func (h held) Execute(in item, _ dsl.Tuple, _ dsl.Collector) error {
	h.got <- in
	return nil
}

// TestClockOptionDrivesTheTopologysTimers: with the kit's clock, a tree times
// out only when the clock is advanced past the message timeout, and the
// runtime's timers are the clock's.
func TestClockOptionDrivesTheTopologysTimers(t *testing.T) {
	clk := sheltertest.NewClock(time.Unix(0, 0))
	if sheltertest.Timers(clk) != 0 {
		t.Fatalf("a new clock has %d timers", sheltertest.Timers(clk))
	}
	src := sheltertest.NewSource(item{1})
	got := make(chan item, 1)
	b := dsl.New("timeouts", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("holder", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[item] { return held{got} })), dsl.Shuffle[item]())
	r := run(t, b, clk.Option())
	select {
	case <-got:
	case <-time.After(waitFor):
		t.Fatal("the bolt got nothing")
	}
	if sheltertest.Timers(clk) == 0 {
		t.Fatal("the topology scheduled nothing on the kit's clock")
	}

	// In real time nothing times out: the runtime waits for the kit's clock.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := sheltertest.WaitIdle(ctx, r); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitIdle with a tree open = %v, want ctx's deadline", err)
	}
	if o := src.Outcomes(); len(o) != 0 {
		t.Fatalf("outcomes %+v before the clock moved", o)
	}

	clk.Advance(29 * time.Second) // one rotation: a tree expires at the third
	clk.Advance(16 * time.Second) // 45 s: the third rotation
	if err := sheltertest.WaitIdle(ctxFor(t), r); err != nil {
		t.Fatal(err)
	}
	if o := src.Outcomes(); len(o) != 1 || o[0].ID != 1 || o[0].Acked {
		t.Fatalf("outcomes %+v, want message 1 nacked (timed out)", o)
	}
	if s := r.Stats(); s.Components["items"].Expired != 1 {
		t.Errorf("spout stats %+v, want one expired tree", s.Components["items"])
	}
	if err := r.Stop(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	if n := sheltertest.Timers(clk); n != 0 {
		t.Errorf("%d timers left on the clock after Stop", n)
	}
}

// --- WaitIdle ---------------------------------------------------------------

func TestWaitIdleReturnsOnceNothingIsInFlight(t *testing.T) {
	release := make(chan struct{})
	executing := make(chan struct{}, 1)
	src := sheltertest.NewSource(item{1}, item{2}, item{3})
	b := dsl.New("slow", nil)
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("slow", dsl.AutoAck(func(item, dsl.Emitter) error {
		select {
		case executing <- struct{}{}:
		default:
		}
		<-release
		return nil
	})), dsl.Shuffle[item]())
	r := run(t, b, sheltertest.NewClock(time.Unix(0, 0)).Option())
	select {
	case <-executing:
	case <-time.After(waitFor):
		t.Fatal("the bolt got nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := sheltertest.WaitIdle(ctx, r); err == nil {
		t.Fatal("WaitIdle returned nil while a bolt held a tuple")
	}
	close(release)
	waitOutcomes(t, src, 3) // the three trees were started and are done
	if err := sheltertest.WaitIdle(ctxFor(t), r); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.InFlight != 0 {
		t.Errorf("WaitIdle returned with %d in flight", s.InFlight)
	}
	if err := src.Verify(); err != nil {
		t.Error(err)
	}
}

func TestWaitIdleReturnsCtxsCause(t *testing.T) {
	got := make(chan item, 1)
	src := sheltertest.NewSource(item{1})
	b := dsl.New("held", nil)
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("holder", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[item] { return held{got} })), dsl.Shuffle[item]())
	r := run(t, b, sheltertest.NewClock(time.Unix(0, 0)).Option(), supervision.WithDrainTimeout(time.Millisecond))
	testsupport.Recv(t, got, waitFor, "the held input")
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("the test gave up")
	cancel(cause)
	err := sheltertest.WaitIdle(ctx, r)
	// The runtime's gauge counts the held input, and for a moment after it
	// was handed over the batch that carried it too: the count is 1 or 2.
	if !errors.Is(err, cause) || !regexp.MustCompile(`\b[12] still in flight`).MatchString(err.Error()) {
		t.Errorf("WaitIdle = %v, want ctx's cause and the count in flight", err)
	}
}

func TestWaitIdleErrsWhenTheTopologyStopped(t *testing.T) {
	got := make(chan item, 1)
	src := sheltertest.NewSource(item{1})
	b := dsl.New("stopping", nil)
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("holder", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[item] { return held{got} })), dsl.Shuffle[item]())
	r := run(t, b, sheltertest.NewClock(time.Unix(0, 0)).Option(), supervision.WithDrainTimeout(time.Millisecond))
	testsupport.Recv(t, got, waitFor, "the held input")

	waited := make(chan error, 1)
	go func() { waited <- sheltertest.WaitIdle(context.Background(), r) }()
	if err := r.Stop(ctxFor(t)); err != nil { // the drain times out: the tree stays open
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, supervision.ErrStopped) {
			t.Errorf("WaitIdle while the topology stopped = %v, want ErrStopped", err)
		}
	case <-time.After(waitFor):
		t.Fatal("WaitIdle did not return when the topology stopped")
	}
	if err := sheltertest.WaitIdle(context.Background(), r); !errors.Is(err, supervision.ErrStopped) {
		t.Errorf("WaitIdle on a stopped topology = %v, want ErrStopped", err)
	}
	// The open tree was abandoned: its message was nacked when the task stopped.
	if o := src.Outcomes(); len(o) != 1 || o[0].Acked {
		t.Errorf("outcomes %+v, want message 1 nacked on stop", o)
	}
}

// --- helpers ----------------------------------------------------------------

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func run(t *testing.T, b *dsl.Builder, opts ...supervision.Option) *supervision.Running {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r, err := supervision.Run(ctxFor(t), topo, append([]supervision.Option{supervision.WithLogger(zap.NewNop())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
	return r
}

// waitOutcomes waits until src has recorded n outcomes.
func waitOutcomes[T any](t *testing.T, src *sheltertest.Source[T], n int) {
	t.Helper()
	if err := src.WaitOutcomes(ctxFor(t), n); err != nil {
		t.Fatal(err)
	}
}
