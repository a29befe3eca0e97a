package supervision

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// topology the tests and examples run is stopped and its actor system shut
// down.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor bounds every wait of these tests, stretched by
// GOSHELTER_TEST_TIMEOUT_SCALE on slow machines.
var waitFor = testsupport.Scaled(10 * time.Second)

func TestBackoff(t *testing.T) {
	tests := []struct {
		base, cap time.Duration
		n         int
		want      time.Duration
	}{
		{time.Second, 30 * time.Second, 1, 2 * time.Second},
		{time.Second, 30 * time.Second, 2, 4 * time.Second},
		{time.Second, 30 * time.Second, 4, 16 * time.Second},
		{time.Second, 30 * time.Second, 5, 30 * time.Second},
		{time.Second, 30 * time.Second, 1000, 30 * time.Second},
		{time.Millisecond, time.Hour, 3, 8 * time.Millisecond},
		{1 << 61, 1<<63 - 1, 3, 1<<63 - 1}, // doubling would overflow: the cap
		{1 << 61, 1<<63 - 1, 1, 1 << 62},   // the largest base that may still double
	}
	for _, tt := range tests {
		if got := backoff(tt.base, tt.cap, tt.n); got != tt.want {
			t.Errorf("backoff(%v, %v, %d) = %v, want %v", tt.base, tt.cap, tt.n, got, tt.want)
		}
	}
}

func TestRestartOptions(t *testing.T) {
	apply := func(opts ...Option) options {
		o := defaults()
		for _, opt := range opts {
			opt.apply(&o)
		}
		return o
	}
	if got, want := apply().restarts, (Restarts{Base: time.Second, Cap: 30 * time.Second, Max: 5, StablePeriod: time.Minute}); got != want {
		t.Errorf("default restarts %+v, want %+v", got, want)
	}
	o := apply(WithRestarts(Restarts{Max: 9, Cap: time.Minute}))
	if want := (Restarts{Base: time.Second, Cap: time.Minute, Max: 9, StablePeriod: time.Minute}); o.restarts != want || o.restartsOff {
		t.Errorf("WithRestarts: %+v (off %v), want %+v: zero fields keep the defaults", o.restarts, o.restartsOff, want)
	}
	if !apply(WithoutRestarts()).restartsOff {
		t.Error("WithoutRestarts did not turn restarts off")
	}
	if apply(WithoutRestarts(), WithRestarts(Restarts{})).restartsOff {
		t.Error("WithRestarts after WithoutRestarts did not turn restarts back on")
	}
	if got, want := apply(WithRestarts(Restarts{})).restarts, apply().restarts; got != want {
		t.Errorf("WithRestarts of zeros: %+v, want the defaults %+v", got, want)
	}
	if o := apply(WithDrainTimeout(time.Second)); o.drainTimeout != time.Second {
		t.Errorf("WithDrainTimeout: %v", o.drainTimeout)
	}
}

func TestTaskError(t *testing.T) {
	cause := errors.New("disk full")
	err := taskError("orders", actors.Failure{Component: "writer", Task: 3, Err: cause, Stack: []byte("stack")})
	want := `topology "orders": task 3 of "writer" failed: disk full`
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !errors.Is(err, cause) || string(err.Stack) != "stack" || err.Topology != "orders" {
		t.Errorf("TaskError %+v does not carry the failure", err)
	}
}

func TestIDSources(t *testing.T) {
	if idSources(nil) != nil {
		t.Error("no WithIDs must mean the runtime's random ids (nil)")
	}
	calls := map[int]int{}
	src := idSources(func(task int) func() uint64 {
		calls[task]++
		vals := []uint64{0, 5, 0, 6}
		return func() uint64 { v := vals[0]; vals = vals[1:]; return v }
	})
	s := src(7)
	if a, b := s.Next(), s.Next(); a != 5 || b != 6 {
		t.Errorf("ids %d, %d; want 5, 6 (zeros skipped)", a, b)
	}
	if calls[7] != 1 {
		t.Errorf("the generator of task 7 was made %d times, want 1", calls[7])
	}
}

// --- Running topologies -----------------------------------------------------

type num struct{ N int }

// events collects lifecycle events.
type events struct{ ch chan Event }

func newEvents() *events { return &events{ch: make(chan Event, 64)} }

func (e *events) option() Option { return WithEvents(func(ev Event) { e.ch <- ev }) }

func (e *events) next(t *testing.T) Event {
	t.Helper()
	select {
	case ev := <-e.ch:
		return ev
	case <-time.After(waitFor):
		t.Fatal("no lifecycle event")
		return Event{}
	}
}

func (e *events) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-e.ch:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
}

func run(t *testing.T, b *dsl.Builder, opts ...Option) *Running {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), topo, append([]Option{WithLogger(zap.NewNop())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // bounded, so a test that failed mid-stop still ends
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = r.Stop(ctx)
	})
	return r
}

// flaky is a spout that panics on the first call of the incarnations listed
// in fail and otherwise has nothing to emit.
func flaky(fail ...int) (*dsl.SpoutSpec, *atomic.Int32) {
	var incarnation atomic.Int32
	return dsl.UnreliableFrom(func(dsl.TaskInfo) func() (num, bool) {
		n := int(incarnation.Add(1))
		first := true
		return func() (num, bool) {
			if first && contains(fail, n) {
				panic("source broke")
			}
			first = false
			return num{}, false
		}
	}), &incarnation
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func flakyTopology(fail ...int) *dsl.Builder {
	spout, _ := flaky(fail...)
	b := dsl.New("flaky", nil)
	src := b.Spout("source", spout)
	b.Unanchored(src, b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	return b
}

func TestRestartWaitsForTheBackoffOnTheInjectedClock(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	r := run(t, flakyTopology(1), WithClock(clk), ev.option())
	if e := ev.next(t); e.Kind != Started || e.Incarnation != 1 {
		t.Fatalf("first event %+v, want incarnation 1 started", e)
	}
	e := ev.next(t)
	var te *TaskError
	if e.Kind != Failed || !errors.As(e.Err, &te) || te.Component != "source" || te.Topology != "flaky" || len(te.Stack) == 0 {
		t.Fatalf("event %+v, want a *TaskError of source with its stack", e)
	}
	if e := ev.next(t); e.Kind != Restarting || e.Attempt != 1 || e.Delay != 2*time.Second {
		t.Fatalf("event %+v, want restarting attempt 1 after 2s", e)
	}
	clk.advance(t, 2*time.Second, 2*time.Second-time.Nanosecond)
	ev.none(t)
	clk.Advance(time.Nanosecond)
	if e := ev.next(t); e.Kind != Started || e.Incarnation != 2 {
		t.Fatalf("event %+v, want incarnation 2 started", e)
	}
	if s := r.Stats(); s.Incarnation != 2 || s.Restarts != 1 || len(s.Tasks) == 0 {
		t.Errorf("stats: incarnation %d, restarts %d, %d tasks; want 2, 1, some", s.Incarnation, s.Restarts, len(s.Tasks))
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e := ev.next(t); e.Kind != Stopped {
		t.Errorf("event %+v, want stopped", e)
	}
	if err := r.Wait(); err != nil {
		t.Errorf("Wait after Stop = %v, want nil", err)
	}
	if err := r.Stop(context.Background()); !errors.Is(err, ErrStopped) {
		t.Errorf("a second Stop = %v, want ErrStopped", err)
	}
}

func TestGivesUpAfterMaxRestarts(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	r := run(t, flakyTopology(1, 2), WithClock(clk), ev.option(), WithRestarts(Restarts{Base: time.Millisecond, Max: 1}))
	for _, want := range []EventKind{Started, Failed, Restarting} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	clk.advance(t, 2*time.Millisecond, 2*time.Millisecond)
	for _, want := range []EventKind{Started, Failed, GaveUp} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	select {
	case <-r.Done():
	case <-time.After(waitFor):
		t.Fatal("Done did not close after giving up")
	}
	err := r.Wait()
	var te *TaskError
	if !errors.Is(err, ErrGaveUp) || !errors.As(err, &te) || !strings.Contains(err.Error(), "after 1 restarts") {
		t.Errorf("Wait = %v, want ErrGaveUp after 1 restart wrapping the last *TaskError", err)
	}
	if s := r.Stats(); len(s.Tasks) != 0 || len(s.Components) != 0 {
		t.Errorf("stats after giving up: %d tasks, %d components; want none", len(s.Tasks), len(s.Components))
	}
	if err := r.Stop(context.Background()); !errors.Is(err, ErrStopped) {
		t.Errorf("Stop after giving up = %v, want ErrStopped", err)
	}
}

func TestWithoutRestartsTheFirstFailureIsFinal(t *testing.T) {
	ev := newEvents()
	r := run(t, flakyTopology(1), WithoutRestarts(), ev.option())
	for _, want := range []EventKind{Started, Failed, GaveUp} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	err := r.Wait()
	var te *TaskError
	if !errors.As(err, &te) || errors.Is(err, ErrGaveUp) || te.Err.Error() != "panic: source broke" {
		t.Errorf("Wait = %v, want the *TaskError itself", err)
	}
}

// TestStatsOfARunningTopology: tasks in id order, sums per component, and the
// ids and trace the options set.
func TestStatsOfARunningTopology(t *testing.T) {
	const n = 10
	var mu sync.Mutex
	var roots []uint64
	acked := make(chan struct{})
	next, count := 0, 0 // touched only by the spout's task
	b := dsl.New("stats", dsl.Conf{dsl.AckerTasks: 2})
	spout := b.Spout("numbers", dsl.Reliable(func() (int, num, bool) {
		if next == n {
			return 0, num{}, false
		}
		next++
		return next, num{next}, true
	}, func(int) {
		if count++; count == n {
			close(acked)
		}
	}, func(int) {}))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Shuffle[num]())
	r := run(t, b,
		WithIDs(func(task int) func() uint64 {
			id := uint64(task) << 32
			return func() uint64 { id++; return id }
		}),
		WithTrace(func(e TraceEvent) {
			if e.Kind == "Emit" && e.Component == "numbers" {
				mu.Lock()
				roots = append(roots, e.Anchors[0].Root)
				mu.Unlock()
			}
		}))
	select {
	case <-acked:
	case <-time.After(waitFor):
		t.Fatal("the messages were not acked")
	}
	var s Stats
	testsupport.Await(waitFor, func() bool { s = r.Stats(); return s.InFlight == 0 }) // the check below says what is wrong
	if s.Topology != "stats" || s.Incarnation != 1 || s.Restarts != 0 || s.Uptime <= 0 || s.InFlight != 0 {
		t.Errorf("stats %+v", s)
	}
	var ids []int
	for _, task := range s.Tasks {
		ids = append(ids, task.Task)
	}
	if !reflect.DeepEqual(ids, []int{1, 2, 3, 4, 5}) {
		t.Errorf("tasks %v, want 1..5 in order", ids)
	}
	if c := s.Components["numbers"]; c.Kind != "spout" || c.Acked != n || c.Emitted != n || c.Task != 0 {
		t.Errorf("numbers %+v, want a spout sum with %d acked and emitted", c, n)
	}
	if c := s.Components["sink"]; c.Kind != "bolt" || c.Executed != n || c.Acked != n {
		t.Errorf("sink %+v, want %d executed and acked over its two tasks", c, n)
	}
	if c := s.Components["__acker"]; c.Kind != "acker" || c.Acked != n {
		t.Errorf("ackers %+v, want %d trees completed", c, n)
	}
	if len(s.Components) != 3 {
		t.Errorf("components %v, want numbers, sink and __acker", s.Components)
	}
	spoutTask := uint64(1) // ids: numbers 1, sink 2-3, ackers 4-5
	mu.Lock()
	defer mu.Unlock()
	if len(roots) != n || roots[0] != spoutTask<<32+1 || roots[1] != spoutTask<<32+3 {
		t.Errorf("roots %x, want the spout task's ids from WithIDs (each emit takes a root and an edge)", roots)
	}
}
