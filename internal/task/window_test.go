package task_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/task"
)

// call is one handler call as a test sees it: copies of the window's slices.
type call struct {
	tuples, added, expired []int
	start, end             time.Duration // since the test's epoch
}

// windowRig drives one windowed bolt task by hand: inputs numIn{n} carry
// tuple tree edge n (0: untracked), and a fake clock gives processing time.
type windowRig struct {
	t     *testing.T
	task  dsl.BoltTask
	c     *collector
	clock time.Duration // processing time since epoch
	calls []call
	fail  func(w dsl.Window[numIn]) error // the handler's result; nil: emit the sum
}

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func newWindowRig(t *testing.T, spec dsl.WindowSpec[numIn], info dsl.TaskInfo) *windowRig {
	t.Helper()
	r := &windowRig{t: t, c: &collector{}}
	if spec.Timestamp == nil && spec.Now == nil {
		spec.Now = func() time.Time { return epoch.Add(r.clock) }
	}
	bolt := dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error {
		return func(w dsl.Window[numIn], out dsl.Emitter) error {
			r.calls = append(r.calls, call{ints(w.Tuples), ints(w.New), ints(w.Expired), w.Start.Sub(epoch), w.End.Sub(epoch)})
			if r.fail != nil {
				if err := r.fail(w); err != nil {
					return err
				}
			}
			sum := 0
			for _, n := range w.Tuples {
				sum += n.N
			}
			out.Emit(numIn{sum})
			return nil
		}
	}, spec)
	if bolt.Kind != "window" || bolt.Input != reflect.TypeFor[numIn]() {
		t.Fatalf("Windowed made a %q bolt of %v", bolt.Kind, bolt.Input)
	}
	if info.Component == "" {
		info.Component = "window"
	}
	r.task = task.NewBolt(&dsl.Component{ID: info.Component, Bolt: bolt}, info)
	return r
}

func ints(ns []numIn) []int {
	out := []int{}
	for _, n := range ns {
		out = append(out, n.N)
	}
	return out
}

// in sends inputs n..., tracked on edge n, at the current clock.
func (r *windowRig) in(ns ...int) {
	r.t.Helper()
	for _, n := range ns {
		if err := r.task.Execute(&dsl.Tuple{Value: numIn{n}, Source: "nums", ID: dsl.TupleID{Root: uint64(n), Edge: uint64(n)}}, r.c); err != nil {
			r.t.Fatalf("Execute(%d): %v", n, err)
		}
	}
}

// at moves the clock to d and delivers a tick.
func (r *windowRig) at(d time.Duration) error {
	r.clock = d
	return r.task.Execute(&dsl.Tuple{Value: dsl.Tick{RateSecs: 1, Period: time.Second}, Source: "__system", Task: -1}, r.c)
}

func edges(ts []dsl.Tuple) []int {
	out := []int{}
	for _, t := range ts {
		out = append(out, int(t.ID.Edge))
	}
	return out
}

// settled returns the edges acked and failed since the last call.
func (r *windowRig) settled() (acked, failed []int) {
	acked, failed = edges(r.c.acked), edges(r.c.failed)
	r.c.acked, r.c.failed = nil, nil
	return acked, failed
}

func (r *windowRig) expectCalls(want ...call) {
	r.t.Helper()
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(r.calls, want) {
		r.t.Fatalf("calls:\n got %+v\nwant %+v", r.calls, want)
	}
	r.calls = nil
}

func (r *windowRig) expectAcked(want ...int) {
	r.t.Helper()
	acked, failed := r.settled()
	if len(want) == 0 {
		want = []int{}
	}
	if !reflect.DeepEqual(acked, want) || len(failed) != 0 {
		r.t.Fatalf("acked %v, failed %v; want acked %v", acked, failed, want)
	}
}

// Storm's sliding count window of 5 by 3: each call sees the last 5 tuples,
// every 3, and a tuple is acked as soon as the last window holding it closed.
func TestCountWindowSlidingByCount(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 5, SlideCount: 3}, dsl.TaskInfo{})
	r.in(1, 2)
	r.expectCalls()
	r.expectAcked()
	r.in(3)
	r.expectCalls(call{tuples: []int{1, 2, 3}, added: []int{1, 2, 3}, expired: []int{}, start: 0, end: 0})
	r.expectAcked(1) // the next window is 2..6
	r.in(4, 5, 6)
	r.expectCalls(call{tuples: []int{2, 3, 4, 5, 6}, added: []int{4, 5, 6}, expired: []int{1}})
	r.expectAcked(2, 3, 4)
	r.in(7, 8, 9, 10)
	r.expectCalls(call{tuples: []int{5, 6, 7, 8, 9}, added: []int{7, 8, 9}, expired: []int{2, 3, 4}})
	r.expectAcked(5, 6, 7)
	if got := ints2(r.c.emitted); !reflect.DeepEqual(got, []int{6, 20, 35}) {
		t.Errorf("emitted sums %v, want [6 20 35]", got)
	}
	// Each emit joins the tree of every tuple of its window.
	want := [][]uint64{{1, 2, 3}, {2, 3, 4, 5, 6}, {5, 6, 7, 8, 9}}
	for i, a := range r.c.anchors {
		if got := trees(a); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("emit %d anchored to trees %v, want %v", i, got, want[i])
		}
	}
}

// trees lists the tuple trees anchors join, sorted, failing on a tree listed
// twice (an edge XORed twice into a tree would cancel out).
func trees(anchors []dsl.Tuple) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, a := range anchors {
		if a.ID.Edge == 0 {
			continue
		}
		for _, r := range append([]uint64{a.ID.Root}, a.ID.Roots...) {
			if seen[r] {
				return append(out, 0) // a duplicate: never what a test wants
			}
			seen[r] = true
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// A window's emits join each tree of its tuples once, however many of its
// tuples share a tree, and whatever trees a tuple was anchored in.
func TestWindowEmitsJoinEachTreeOnce(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 4}, dsl.TaskInfo{})
	for _, id := range []dsl.TupleID{
		{Root: 7, Edge: 101},
		{Root: 7, Edge: 102},                        // the same tree (two words of one sentence)
		{Root: 8, Edge: 103, Roots: []uint64{7, 9}}, // multi-anchored
		{}, // untracked
	} {
		if err := r.task.Execute(&dsl.Tuple{Value: numIn{1}, ID: id}, r.c); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.c.anchors) != 1 || !reflect.DeepEqual(trees(r.c.anchors[0]), []uint64{7, 8, 9}) {
		t.Fatalf("anchors %+v, want one emit joining trees 7, 8 and 9 once each", r.c.anchors)
	}
}

func ints2(vs []any) []int {
	out := []int{}
	for _, v := range vs {
		out = append(out, v.(numIn).N)
	}
	return out
}

func TestCountWindowTumbling(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 3}, dsl.TaskInfo{})
	r.in(1, 2, 3, 4)
	r.expectCalls(call{tuples: []int{1, 2, 3}, added: []int{1, 2, 3}, expired: []int{}})
	r.expectAcked(1, 2, 3)
	r.in(5, 6)
	r.expectCalls(call{tuples: []int{4, 5, 6}, added: []int{4, 5, 6}, expired: []int{1, 2, 3}})
	r.expectAcked(4, 5, 6)
}

// A window that slides by more than its length skips tuples: they are acked
// at once and reported nowhere, and the task never holds more than Count.
func TestCountWindowSkippingTuples(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 2, SlideCount: 3}, dsl.TaskInfo{})
	r.in(1)
	r.expectAcked(1)
	r.in(2, 3)
	r.expectCalls(call{tuples: []int{2, 3}, added: []int{2, 3}, expired: []int{}})
	r.expectAcked(2, 3)
	r.in(4)
	r.expectAcked(4)
	r.in(5, 6)
	r.expectCalls(call{tuples: []int{5, 6}, added: []int{5, 6}, expired: []int{2, 3}})
}

// Storm's 5 s tumbling window in processing time: windows are aligned to the
// epoch and close on the first tick at or after their end.
func TestTimeWindowTumbling(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 5 * time.Second}, dsl.TaskInfo{})
	r.clock = time.Second
	r.in(1, 2)
	r.clock = 4 * time.Second
	r.in(3)
	if err := r.at(4999 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	r.expectCalls()
	r.expectAcked()
	r.clock = 5 * time.Second // a tuple at the end belongs to the next window
	r.in(4)
	r.at(5 * time.Second)
	r.expectCalls(call{tuples: []int{1, 2, 3}, added: []int{1, 2, 3}, expired: []int{}, start: 0, end: 5 * time.Second})
	r.expectAcked(1, 2, 3)
	r.at(20 * time.Second) // one window with a tuple, then empty ones: no calls for those
	r.expectCalls(call{tuples: []int{4}, added: []int{4}, expired: []int{1, 2, 3}, start: 5 * time.Second, end: 10 * time.Second})
	r.expectAcked(4)
	r.clock = 31 * time.Second
	r.in(5)
	r.at(35 * time.Second)
	r.expectCalls(call{tuples: []int{5}, added: []int{5}, expired: []int{4}, start: 30 * time.Second, end: 35 * time.Second})
}

// Storm's sliding window of 10 s by 5 s: e1 e2 | e3..e6 | e7..e9.
func TestTimeWindowSliding(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Slide: 5 * time.Second}, dsl.TaskInfo{})
	r.clock = time.Second
	r.in(1, 2)
	r.clock = 6 * time.Second
	r.in(3, 4, 5, 6)
	r.at(5 * time.Second) // the tick came late: the window still ends at 5 s
	r.expectCalls(call{tuples: []int{1, 2}, added: []int{1, 2}, expired: []int{}, start: -5 * time.Second, end: 5 * time.Second})
	r.expectAcked()
	r.clock = 11 * time.Second
	r.in(7, 8, 9)
	r.at(12 * time.Second)
	r.expectCalls(call{tuples: []int{1, 2, 3, 4, 5, 6}, added: []int{3, 4, 5, 6}, expired: []int{}, start: 0, end: 10 * time.Second})
	r.expectAcked(1, 2)
	r.at(15 * time.Second)
	r.expectCalls(call{tuples: []int{3, 4, 5, 6, 7, 8, 9}, added: []int{7, 8, 9}, expired: []int{1, 2}, start: 5 * time.Second, end: 15 * time.Second})
	r.expectAcked(3, 4, 5, 6)
}

// Count 3 every 10 s: the task holds the last 3 tuples, acking older ones as
// newer arrive.
func TestCountWindowSlidingByTime(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 3, Slide: 10 * time.Second}, dsl.TaskInfo{})
	for n := 1; n <= 5; n++ {
		r.clock = time.Duration(n) * time.Second
		r.in(n)
	}
	r.expectAcked(1, 2) // in no window: not reported as expired
	r.at(10 * time.Second)
	r.expectCalls(call{tuples: []int{3, 4, 5}, added: []int{3, 4, 5}, expired: []int{}, start: 3 * time.Second, end: 10 * time.Second})
	r.expectAcked()
	r.clock = 11 * time.Second
	r.in(11, 12)
	r.expectAcked(3, 4)
	r.at(20 * time.Second)
	r.expectCalls(call{tuples: []int{5, 11, 12}, added: []int{11, 12}, expired: []int{3, 4}, start: 5 * time.Second, end: 20 * time.Second})
}

// The last 10 s every 2 tuples: windows end with the tuple that completes the
// count and hold the tuples at most 10 s older.
func TestTimeWindowSlidingByCount(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, SlideCount: 2}, dsl.TaskInfo{})
	r.clock = time.Second
	r.in(1)
	r.clock = 2 * time.Second
	r.in(2)
	r.expectCalls(call{tuples: []int{1, 2}, added: []int{1, 2}, expired: []int{}, start: -8 * time.Second, end: 2 * time.Second})
	r.clock = 12 * time.Second
	r.in(12)
	r.expectAcked(1)
	r.clock = 13 * time.Second
	r.in(13)
	r.expectCalls(call{tuples: []int{12, 13}, added: []int{12, 13}, expired: []int{1, 2}, start: 3 * time.Second, end: 13 * time.Second})
	r.expectAcked(2)
}

// eventAt is the event time of numIn{n}: n seconds after the epoch.
func eventAt(n numIn) time.Time { return epoch.Add(time.Duration(n.N) * time.Second) }

// Storm's event-time example (length 20 s, slide 10 s, lag 5 s), times in
// seconds: 3 5 7 18 26 36, then 25 26 27 39 arrive after the first watermark.
func TestEventTimeWindows(t *testing.T) {
	var late []numIn
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 20 * time.Second, Slide: 10 * time.Second, Lag: 5 * time.Second,
		Timestamp: eventAt, Late: func(n numIn) any { late = append(late, n); return n }}, dsl.TaskInfo{})
	r.in(3, 5, 7, 18, 26, 36)
	r.at(time.Second) // watermark 31
	r.expectCalls(
		call{tuples: []int{3, 5, 7}, added: []int{3, 5, 7}, expired: []int{}, start: -10 * time.Second, end: 10 * time.Second},
		call{tuples: []int{3, 5, 7, 18}, added: []int{18}, expired: []int{}, start: 0, end: 20 * time.Second},
		call{tuples: []int{18, 26}, added: []int{26}, expired: []int{3, 5, 7}, start: 10 * time.Second, end: 30 * time.Second},
	)
	r.expectAcked(3, 5, 7, 18)
	r.in(32, 31) // out of order, within the lag
	r.in(25)     // late: older than the watermark
	if !reflect.DeepEqual(late, []numIn{{25}}) {
		t.Fatalf("late %v, want [25]", late)
	}
	if a := r.c.anchors[len(r.c.anchors)-1]; !reflect.DeepEqual(edges(a), []int{25}) {
		t.Errorf("the late tuple's emit is anchored to %v, want [25]", edges(a))
	}
	r.expectAcked(25)
	r.at(2 * time.Second) // no new watermark: nothing
	r.expectCalls()
	r.in(45)
	r.at(3 * time.Second) // watermark 40
	r.expectCalls(call{tuples: []int{26, 31, 32, 36}, added: []int{31, 32, 36}, expired: []int{18}, start: 20 * time.Second, end: 40 * time.Second})
	r.expectAcked(26)
}

// Event times the window cannot compute with in int64 nanoseconds (the zero
// time.Time, year 3000, or within Length+Lag+2*Slide of the ends) fail their
// input with an error naming the time; UnixNano used to wrap them into some
// other window. Times just inside the range are held as any other.
func TestEventTimeOutsideTheRangeFailsTheInput(t *testing.T) {
	const length, slide, lag = 20 * time.Second, 10 * time.Second, 5 * time.Second
	margin := length + lag + 2*slide
	lo, hi := time.Unix(0, math.MinInt64).Add(margin), time.Unix(0, math.MaxInt64).Add(-margin)
	at := map[int]time.Time{1: {}, 2: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 3: lo.Add(-1), 4: hi.Add(1), 5: lo, 6: hi}
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: length, Slide: slide, Lag: lag,
		Timestamp: func(n numIn) time.Time { return at[n.N] }}, dsl.TaskInfo{})
	for n := 1; n <= 4; n++ {
		err := r.task.Execute(&dsl.Tuple{Value: numIn{n}, Source: "nums", ID: dsl.TupleID{Root: uint64(n), Edge: uint64(n)}}, r.c)
		if err == nil || !strings.Contains(err.Error(), "outside the range a window can compute with") ||
			!strings.Contains(err.Error(), at[n].String()) {
			t.Errorf("input %d at %v: error %v, want one naming the time as outside the range", n, at[n], err)
		}
		if acked, failed := r.settled(); len(acked) != 0 || !reflect.DeepEqual(failed, []int{n}) {
			t.Errorf("input %d: acked %v, failed %v; want it failed", n, acked, failed)
		}
	}
	r.in(5, 6) // the ends of the range are held: 5 closes its two windows, 6 is in the lag
	r.at(time.Second)
	if len(r.calls) != 2 || !reflect.DeepEqual(r.calls[0].tuples, []int{5}) || !reflect.DeepEqual(r.calls[1].tuples, []int{5}) {
		t.Errorf("calls %+v, want two windows of [5]", r.calls)
	}
	if acked, failed := r.settled(); !reflect.DeepEqual(acked, []int{5}) || len(failed) != 0 {
		t.Errorf("acked %v, failed %v; want 5 acked once its windows closed", acked, failed)
	}
}

// A join window: with several input streams the watermark is the lowest of
// their latest times, and waits until every stream has delivered.
func TestEventTimeJoinWatermarkWaitsForEveryStream(t *testing.T) {
	b := dsl.New("join", nil)
	left := b.Spout("left", dsl.Unreliable(noNums))
	right := b.Spout("right", dsl.Unreliable(noNums))
	join := b.Bolt("join", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error { return nil },
		dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt}))
	b.Unanchored(left, join, dsl.Shuffle[numIn]())
	b.Unanchored(right, join, dsl.Fields(func(n numIn) int { return n.N }, "N"))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt},
		dsl.TaskInfo{Component: "join", Model: topo})
	stream := topo.Streams[0]
	send := func(source string, n int) {
		t.Helper()
		if err := r.task.Execute(&dsl.Tuple{Value: numIn{n}, Source: source, Stream: stream}, r.c); err != nil {
			t.Fatal(err)
		}
	}
	send("left", 1)
	send("left", 25)
	r.at(time.Second)
	r.expectCalls() // nothing from right yet: no watermark
	send("right", 12)
	r.at(2 * time.Second) // watermark min(25, 12) = 12
	r.expectCalls(call{tuples: []int{1}, added: []int{1}, expired: []int{}, start: 0, end: 10 * time.Second})
	send("right", 30)
	r.at(3 * time.Second) // watermark 25
	r.expectCalls(call{tuples: []int{12}, added: []int{12}, expired: []int{1}, start: 10 * time.Second, end: 20 * time.Second})
}

func TestEventTimeCountWindowClosesOnWatermarks(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 2, Timestamp: eventAt}, dsl.TaskInfo{})
	r.in(4, 2, 9, 7)
	r.expectCalls()   // windows wait for the watermark
	r.at(time.Second) // watermark 9: 2 4 7 are below it
	r.expectCalls(call{tuples: []int{2, 4}, added: []int{2, 4}, expired: []int{}, start: 2 * time.Second, end: 4 * time.Second})
	r.expectAcked(2, 4)
	r.in(11, 10, 14)
	r.at(2 * time.Second) // watermark 14: 7 9 10 11 are below it, in time order
	r.expectCalls(
		call{tuples: []int{7, 9}, added: []int{7, 9}, expired: []int{2, 4}, start: 7 * time.Second, end: 9 * time.Second},
		call{tuples: []int{10, 11}, added: []int{10, 11}, expired: []int{7, 9}, start: 10 * time.Second, end: 11 * time.Second},
	)
	r.expectAcked(7, 9, 10, 11)
}

// A failed window fails every tuple in it; they leave the bolt, so later
// windows do not hold them. A panic, an emit's included, does the same.
func TestAFailedWindowFailsEveryTupleInIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		fail func(dsl.Window[numIn]) error
		want string
	}{
		{"an error", func(dsl.Window[numIn]) error { return errors.New("no thanks") }, "no thanks"},
		{"a panic", func(dsl.Window[numIn]) error { panic("kaboom") }, "panic: kaboom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 3, SlideCount: 2}, dsl.TaskInfo{})
			r.in(1)
			r.fail = tt.fail
			err := r.task.Execute(&dsl.Tuple{Value: numIn{2}, ID: dsl.TupleID{Root: 2, Edge: 2}}, r.c)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "window") {
				t.Fatalf("Execute = %v, want an error about the window saying %q", err, tt.want)
			}
			acked, failed := r.settled()
			if len(acked) != 0 || !reflect.DeepEqual(failed, []int{1, 2}) {
				t.Fatalf("acked %v, failed %v; want 1 and 2 failed", acked, failed)
			}
			r.fail, r.calls = nil, nil
			r.in(3, 4)
			r.expectCalls(call{tuples: []int{3, 4}, added: []int{3, 4}, expired: []int{}})
		})
	}
}

func TestUntrackedWindowsEmitUnanchored(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 2}, dsl.TaskInfo{})
	for _, n := range []int{1, 2} {
		if err := r.task.Execute(&dsl.Tuple{Value: numIn{n}}, r.c); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.c.anchors) != 1 || r.c.anchors[0] != nil {
		t.Errorf("anchors %v, want one emit with none", r.c.anchors)
	}
}

func TestWindowCapFailsNewInputsWithAWarning(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: time.Minute},
		dsl.TaskInfo{Settings: dsl.Settings{WindowMaxTuples: 2}, Logger: zap.New(core)})
	r.in(1, 2, 3, 4)
	acked, failed := r.settled()
	if len(acked) != 0 || !reflect.DeepEqual(failed, []int{3, 4}) {
		t.Fatalf("acked %v, failed %v; want 3 and 4 failed", acked, failed)
	}
	warn := logs.FilterMessageSnippet("window is full").All()
	if len(warn) != 1 || warn[0].ContextMap()["cap"] != "topology.bolts.window.max.tuples=2" {
		t.Fatalf("logs %v, want one warning naming the cap", logs.All())
	}
	r.at(time.Minute)
	r.expectAcked(1, 2)
	r.in(5)
	if logs.FilterMessageSnippet("accepts inputs again").Len() != 1 {
		t.Errorf("no log when the window accepted inputs again: %v", logs.All())
	}
}

// A bolt whose input type is an interface joins the streams implementing it.
type shape interface{ area() int }
type square struct{ Side int }
type rect struct{ W, H int }

func (s square) area() int { return s.Side * s.Side }
func (r rect) area() int   { return r.W * r.H }

func TestJoinWindowOverStreamsOfAnInterface(t *testing.T) {
	var got []int
	join := dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[shape], dsl.Emitter) error {
		return func(w dsl.Window[shape], _ dsl.Emitter) error {
			for _, s := range w.Tuples {
				got = append(got, s.area())
			}
			return nil
		}
	}, dsl.WindowSpec[shape]{Count: 3})
	b := dsl.New("shapes", nil)
	squares := b.Spout("squares", dsl.Unreliable(func() (square, bool) { return square{}, false }))
	rects := b.Spout("rects", dsl.Unreliable(func() (rect, bool) { return rect{}, false }))
	j := b.Bolt("join", join)
	b.Unanchored(squares, j, dsl.Shuffle[square]())
	b.Unanchored(rects, j, dsl.Shuffle[rect]())
	if _, err := b.Build(); err != nil {
		t.Fatal(err)
	}
	w := task.NewBolt(&dsl.Component{ID: "join", Bolt: join}, dsl.TaskInfo{})
	for _, v := range []any{square{2}, rect{2, 3}, square{3}} {
		if err := w.Execute(&dsl.Tuple{Value: v}, &collector{}); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, []int{4, 6, 9}) {
		t.Errorf("areas %v, want [4 6 9]", got)
	}
}

// Steady state allocates nothing per input: the window is a view of what the
// task holds, not a copy.
func TestWindowHoldsWithoutAllocatingPerInput(t *testing.T) {
	bolt := dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error {
		return func(w dsl.Window[numIn], out dsl.Emitter) error { return nil }
	}, dsl.WindowSpec[numIn]{Count: 1000, SlideCount: 100})
	w := task.NewBolt(&dsl.Component{ID: "window", Bolt: bolt}, dsl.TaskInfo{})
	c := &collector{}
	in := dsl.Tuple{Value: numIn{1}, ID: dsl.TupleID{Root: 1, Edge: 1}}
	for range 5000 { // grow the buffers
		w.Execute(&in, c)
	}
	c.acked = make([]dsl.Tuple, 0, 1<<20)
	allocs := testing.AllocsPerRun(10000, func() { w.Execute(&in, c) })
	if allocs > 0.01 {
		t.Errorf("%v allocations per input, want none", allocs)
	}
}

// A count window sliding by count keeps its tuples for their count whatever
// the clock does: the times they arrived at bound nothing.
func TestCountWindowIgnoresTheClock(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 5, SlideCount: 3}, dsl.TaskInfo{})
	for n := 1; n <= 9; n++ {
		r.clock = time.Duration(n) * time.Second
		r.in(n)
	}
	r.expectCalls(
		call{tuples: []int{1, 2, 3}, added: []int{1, 2, 3}, expired: []int{}, start: time.Second, end: 3 * time.Second},
		call{tuples: []int{2, 3, 4, 5, 6}, added: []int{4, 5, 6}, expired: []int{1}, start: 2 * time.Second, end: 6 * time.Second},
		call{tuples: []int{5, 6, 7, 8, 9}, added: []int{7, 8, 9}, expired: []int{2, 3, 4}, start: 5 * time.Second, end: 9 * time.Second},
	)
	r.expectAcked(1, 2, 3, 4, 5, 6, 7)
}

// The task counts late tuples and refused inputs in its metrics, and warns
// once per run of refusals.
func TestWindowCountsLateAndRefusedInputs(t *testing.T) {
	metrics := map[string]any{}
	core, logs := observer.New(zapcore.InfoLevel)
	info := dsl.TaskInfo{Settings: dsl.Settings{WindowMaxTuples: 2}, Logger: zap.New(core),
		Metric: func(name string, v any) { metrics[name] = v }}
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt}, info)
	r.in(20, 21, 22, 23, 24) // 22, 23 and 24 refused: the cap is 2
	if metrics["window.refused"] != int64(3) {
		t.Errorf("window.refused = %v, want 3", metrics["window.refused"])
	}
	if n := logs.FilterMessageSnippet("window is full").Len(); n != 1 {
		t.Errorf("%d warnings for one run of refusals, want 1", n)
	}
	r.at(time.Second) // watermark 21: the window [10, 20) closes (empty); 20 and 21 stay
	r.in(1, 2)        // late
	if metrics["window.late"] != int64(2) {
		t.Errorf("window.late = %v, want 2", metrics["window.late"])
	}
}

// Tuples of equal event time stay in their order of arrival, after the ones
// that came before them, also once the window has let go of older ones.
func TestEqualEventTimesKeepTheirOrder(t *testing.T) {
	tenths := func(n numIn) time.Time { return epoch.Add(time.Duration(n.N/10) * time.Second) }
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Lag: 5 * time.Second, Timestamp: tenths}, dsl.TaskInfo{})
	r.in(10, 150)
	r.at(time.Second) // watermark 10: [0, 10) closes with 10
	r.expectCalls(call{tuples: []int{10}, added: []int{10}, expired: []int{}, start: 0, end: 10 * time.Second})
	r.in(160, 120, 121, 161, 122) // out of order, after the head moved on
	r.in(300)
	r.at(2 * time.Second) // watermark 25
	r.expectCalls(call{tuples: []int{120, 121, 122, 150, 160, 161}, added: []int{120, 121, 122, 150, 160, 161}, expired: []int{10},
		start: 10 * time.Second, end: 20 * time.Second})
}

// A tuple that came on no edge of the model (an activation tuple) moves no
// watermark: the model's streams are all the window waits for.
func TestEventTimeTuplesFromNoEdgeMoveNoWatermark(t *testing.T) {
	b := dsl.New("activation", nil)
	w := b.Bolt("w", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error { return nil },
		dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt}))
	b.Unanchored(b.Spout("nums", dsl.Unreliable(noNums)), w, dsl.Shuffle[numIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt}, dsl.TaskInfo{Component: "w", Model: topo})
	if err := r.task.Execute(&dsl.Tuple{Value: numIn{5}, Source: "__system", Task: -1}, r.c); err != nil {
		t.Fatal(err)
	}
	r.at(time.Second)
	r.expectCalls() // the spout's stream has delivered nothing: no watermark
	if err := r.task.Execute(&dsl.Tuple{Value: numIn{25}, Source: "nums", Stream: topo.Streams[0]}, r.c); err != nil {
		t.Fatal(err)
	}
	r.at(2 * time.Second) // watermark 25, from the spout's stream alone (5 would hold it back)
	r.expectCalls(call{tuples: []int{5}, added: []int{5}, expired: []int{}, start: 0, end: 10 * time.Second})
}

// A long count window sliding by a short count: every call sees the last
// Count tuples, every SlideCount, also while the task holds tuples it let
// go of at the head of its slices.
func TestLongCountWindowSlidingByTwo(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 6, SlideCount: 2}, dsl.TaskInfo{})
	var want []call
	var expired []int
	for k := 1; k <= 20; k++ {
		r.in(k)
		if k%2 != 0 {
			continue
		}
		first := max(1, k-5)
		c := call{tuples: seq(first, k), added: seq(k-1, k), expired: expired}
		if c.expired == nil {
			c.expired = []int{}
		}
		want = append(want, c)
		expired = nil
		if k >= 6 {
			expired = seq(first, first+1) // the next window starts two later
		}
	}
	r.expectCalls(want...)
}

// seq returns from, from+1, ..., to.
func seq(from, to int) []int {
	var out []int
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

// A window anchors its emits to its tracked tuples however many untracked
// ones it let go of before.
func TestWindowAnchorsAfterUntrackedTuplesLeft(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 2}, dsl.TaskInfo{})
	for _, n := range []int{1, 2} { // untracked
		if err := r.task.Execute(&dsl.Tuple{Value: numIn{n}}, r.c); err != nil {
			t.Fatal(err)
		}
	}
	r.in(3, 4)
	if len(r.c.anchors) != 2 || r.c.anchors[0] != nil || !reflect.DeepEqual(trees(r.c.anchors[1]), []uint64{3, 4}) {
		t.Errorf("anchors %v, want none for the untracked window and trees 3 and 4 for the tracked one", r.c.anchors)
	}
}

// Without a model (a task made by hand), each source and stream an input
// comes on is a stream of its own for the watermark, a tuple without a
// stream included.
func TestEventTimeWatermarkTellsStreamsOfOneSourceApart(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt}, dsl.TaskInfo{})
	send := func(n int, stream *dsl.Stream) {
		t.Helper()
		if err := r.task.Execute(&dsl.Tuple{Value: numIn{n}, Source: "nums", Stream: stream}, r.c); err != nil {
			t.Fatal(err)
		}
	}
	send(5, nil)
	send(30, &dsl.Stream{Index: 1})
	send(12, nil)
	r.at(time.Second) // watermark min(12, 30) = 12
	r.expectCalls(call{tuples: []int{5}, added: []int{5}, expired: []int{}, start: 0, end: 10 * time.Second})
}

// A window shorter than its slide skips time: a tuple in a gap between two
// windows is in none of them and is acked without a call (the handler is
// never called for a window with nothing in it).
func TestTimeWindowSkippingTime(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 2 * time.Second, Slide: 5 * time.Second}, dsl.TaskInfo{})
	r.clock = time.Second
	r.in(1) // before [3 s, 5 s), the first window to close
	r.expectAcked()
	r.at(5 * time.Second)
	r.expectCalls()
	r.expectAcked(1)
	r.clock = 7 * time.Second
	r.in(7) // before [8 s, 10 s), and the windows before it are closed
	r.expectAcked(7)
	r.clock = 9 * time.Second
	r.in(9)
	r.at(10 * time.Second)
	r.expectCalls(call{tuples: []int{9}, added: []int{9}, expired: []int{}, start: 8 * time.Second, end: 10 * time.Second})
	r.expectAcked(9)
}

// In processing time a tick can come after inputs newer than the end of the
// windows it closes (the task was busy): those windows still get every tuple
// they hold, so a new input lets go of nothing a window not yet closed holds.
func TestTimeWindowSlidingClosesLateWindowsWithTheirTuples(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Slide: 5 * time.Second}, dsl.TaskInfo{})
	r.clock = time.Second
	r.in(1)
	r.clock = 12 * time.Second // past [-5 s, 5 s) and [0 s, 10 s), which no tick has closed yet
	r.in(12)
	r.expectAcked()
	r.at(12 * time.Second)
	r.expectCalls(
		call{tuples: []int{1}, added: []int{1}, expired: []int{}, start: -5 * time.Second, end: 5 * time.Second},
		call{tuples: []int{1}, added: []int{}, expired: []int{}, start: 0, end: 10 * time.Second},
	)
	r.expectAcked(1)
}

// An event-time count window that slides by more than its count skips
// tuples: each window is the last Count tuples up to the one completing the
// slide, and the tuples before them are acked in no window.
func TestEventTimeCountWindowSkippingTuples(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Count: 1, SlideCount: 3, Timestamp: eventAt}, dsl.TaskInfo{})
	r.in(1, 2, 3, 4, 5, 6, 7)
	r.expectAcked()
	r.at(time.Second) // watermark 7: 3 and 6 complete their slides
	r.expectCalls(
		call{tuples: []int{3}, added: []int{3}, expired: []int{}, start: 3 * time.Second, end: 3 * time.Second},
		call{tuples: []int{6}, added: []int{6}, expired: []int{3}, start: 6 * time.Second, end: 6 * time.Second},
	)
	r.expectAcked(1, 2, 3, 4, 5, 6)
}

// An input older than the newest held one sorts into its place also while
// the task still holds entries it let go of at the head of its slices.
func TestEventTimeOutOfOrderInputAfterTheHeadMovedOn(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Lag: 50 * time.Second, Timestamp: eventAt}, dsl.TaskInfo{})
	r.in(1, 2, 3, 4, 20, 21, 22, 23, 24, 60)
	r.at(time.Second) // watermark 10: [0 s, 10 s) closes and lets go of 1..4, the head of ten held
	r.expectCalls(call{tuples: []int{1, 2, 3, 4}, added: []int{1, 2, 3, 4}, expired: []int{}, start: 0, end: 10 * time.Second})
	r.expectAcked(1, 2, 3, 4)
	r.in(25) // out of order: between 24 and 60
	r.in(80)
	r.at(2 * time.Second) // watermark 30
	r.expectCalls(call{tuples: []int{20, 21, 22, 23, 24, 25}, added: []int{20, 21, 22, 23, 24, 25}, expired: []int{1, 2, 3, 4},
		start: 20 * time.Second, end: 30 * time.Second})
	r.expectAcked(20, 21, 22, 23, 24, 25)
}

// However many inputs pass, a task holding a few reuses its slices: once
// warm, a whole run of inputs allocates nothing, so what the task holds in
// memory is bounded by its windows, not by the inputs it has seen. (Per
// input, an unbounded growth would round down to no allocation: a run is
// measured as a whole.)
func TestWindowMemoryIsBoundedByItsWindows(t *testing.T) {
	for _, spec := range []dsl.WindowSpec[numIn]{
		{Count: 4, SlideCount: 2},      // lets go of half of what it holds at each window
		{Count: 1000, SlideCount: 100}, // lets go of a tenth
		{Count: 3},                     // lets go of all
	} {
		t.Run(fmt.Sprintf("count %d slide %d", spec.Count, spec.SlideCount), func(t *testing.T) {
			bolt := dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error {
				return func(dsl.Window[numIn], dsl.Emitter) error { return nil }
			}, spec)
			w := task.NewBolt(&dsl.Component{ID: "window", Bolt: bolt}, dsl.TaskInfo{})
			const run = 10000
			c := &collector{acked: make([]dsl.Tuple, 0, 2*run)} // a warm-up run and a measured one
			in := dsl.Tuple{Value: numIn{1}, ID: dsl.TupleID{Root: 1, Edge: 1}}
			allocs := testing.AllocsPerRun(1, func() {
				for range run {
					w.Execute(&in, c)
				}
			})
			// A buffer that is never compacted reallocates several slices in
			// the run; the race detector's runtime may add one allocation of
			// its own (seen about 1 run in 60 under -race).
			slack := 0.0
			if raceDetector {
				slack = 1
			}
			if allocs > slack {
				t.Errorf("%v allocations in a run of %d inputs after a first one, want none", allocs, run)
			}
		})
	}
}

// A task whose model has no edge into its component (a task the model does
// not wire, as a shell component's) learns its streams from its inputs, as a
// task without a model does: its watermark moves.
func TestEventTimeWindowOutsideItsModelLearnsItsStreams(t *testing.T) {
	r := newWindowRig(t, dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt},
		dsl.TaskInfo{Component: "unwired", Model: &dsl.Topology{}})
	r.in(5, 25)
	r.at(time.Second) // watermark 25
	r.expectCalls(call{tuples: []int{5}, added: []int{5}, expired: []int{}, start: 0, end: 10 * time.Second})
}
