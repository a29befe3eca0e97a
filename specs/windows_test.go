package specs_test

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The windows specs replay the examples of Storm's "Windowing Support in Core
// Storm" with goshelter's windowed bolts: the exact tuples of every call, when
// the inputs are acked (when they leave the last window holding them, not when
// they arrive), what a downstream failure does, late tuples, and a restart in
// the middle of a window. Every run is on the kit's manual clock, and the
// recording source checks that each message got exactly one outcome.

// WindowCall is one call of a windowed bolt's handler, by tuple key.
type WindowCall struct {
	Tuples, New, Expired []int
	Start, End           time.Time
}

// WindowCalls records the calls of a windowed bolt; safe for concurrent use.
type WindowCalls struct {
	mu    sync.Mutex // mu guards calls
	calls []WindowCall
}

func (w *WindowCalls) add(c WindowCall) {
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
}

// All returns a copy of the calls so far.
func (w *WindowCalls) All() []WindowCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WindowCall(nil), w.calls...)
}

// Len returns how many calls there were (a func value for Eventually).
func (w *WindowCalls) Len() int { return len(w.All()) }

// Sum is what the recording window emits for each window: the sum of its keys.
type Sum struct{ N int }

// RecordingWindow is a windowed bolt that records each call in calls, keying
// tuples with key, and emits the window's Sum (anchored to the whole window).
func RecordingWindow[T any](calls *WindowCalls, key func(T) int, spec dsl.WindowSpec[T]) *dsl.BoltSpec {
	keys := func(ts []T) []int {
		out := []int{}
		for _, t := range ts {
			out = append(out, key(t))
		}
		return out
	}
	return dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[T], dsl.Emitter) error {
		return func(w dsl.Window[T], out dsl.Emitter) error {
			c := WindowCall{Tuples: keys(w.Tuples), New: keys(w.New), Expired: keys(w.Expired), Start: w.Start, End: w.End}
			calls.add(c)
			sum := 0
			for _, k := range c.Tuples {
				sum += k
			}
			out.Emit(Sum{sum})
			return nil
		}
	}, spec)
}

// call builds an expected WindowCall of a window without times (count windows).
func call(tuples, added, expired []int) WindowCall {
	return WindowCall{Tuples: tuples, New: added, Expired: expired}
}

// withoutTimes drops the times of calls, for count windows in processing time
// (their times are the wall clock's).
func withoutTimes(calls []WindowCall) []WindowCall {
	for i := range calls {
		calls[i].Start, calls[i].End = time.Time{}, time.Time{}
	}
	return calls
}

// windowRun is a topology under test: spout "source" fed by src, on the
// manual clock, traced.
type windowRun struct {
	clk   *sheltertest.Clock
	trace *Trace
	r     *supervision.Running
}

// windowConf wakes an idle spout after 1 ms of the manual clock, so a spec
// feeds its source with Push and nudge.
var windowConf = dsl.Conf{dsl.SpoutWait: time.Millisecond}

func runWindows(b *dsl.Builder, clk *sheltertest.Clock, opts ...supervision.Option) *windowRun {
	GinkgoHelper()
	trace := NewTrace()
	// A sliding window always holds some trees open: the drain on Stop need
	// not wait for them (the spout nacks them, as they are abandoned).
	opts = append([]supervision.Option{clk.Option(), trace.Option(), supervision.WithDrainTimeout(20 * time.Millisecond)}, opts...)
	return &windowRun{clk: clk, trace: trace, r: sheltertest.Start(GinkgoTB(), Build(b), opts...)}
}

// nudge wakes the spout, which backs off for 1 ms of the manual clock when
// its source is empty.
func (w *windowRun) nudge() { w.clk.Advance(time.Millisecond) }

// until nudges the spout until cond holds. A single nudge is not enough: the
// spout may arm its back-off timer only after the clock moved.
func (w *windowRun) until(cond func() bool, what string) {
	GinkgoHelper()
	Eventually(func() bool {
		if cond() {
			return true
		}
		w.nudge()
		return cond()
	}).Should(BeTrue(), what)
}

// received reports whether bolt has executed n data tuples (not ticks) and
// nothing else is executing, so the clock can move knowing they were timed.
func (w *windowRun) received(bolt string, n int) func() bool {
	isData := func(e Event) bool { return e.Input.Stream != nil }
	return func() bool {
		all := w.trace.Count(FromComponent(bolt), KindIs("Tuple"))
		data := w.trace.Count(FromComponent(bolt), KindIs("Tuple"), isData)
		return data == n && w.r.Stats().Components[bolt].Executed == int64(all)
	}
}

// advanceTo moves the manual clock to t.
func (w *windowRun) advanceTo(t time.Time) { w.clk.Advance(t.Sub(w.clk.Now())) }

// okFor returns the position in the trace of bolt's ack of its input v.
func (w *windowRun) okFor(bolt string, v any) int {
	inputs := w.trace.Events(FromComponent(bolt), KindIs("Tuple"), func(e Event) bool { return e.Input.Value == v })
	Expect(inputs).To(HaveLen(1), "bolt %q received %v once", bolt, v)
	edge := inputs[0].Input.ID.Edge
	return IndexOf(w.trace.Events(), FromComponent(bolt), KindIs("Ok"), func(e Event) bool { return e.ID.Edge == edge })
}

// emitOf returns the position in the trace of bolt's emit of v.
func (w *windowRun) emitOf(bolt string, v any) int {
	return IndexOf(w.trace.Events(), FromComponent(bolt), KindIs("Emit"), func(e Event) bool { return e.Value == v })
}

func nums(ns ...int) []Num {
	out := make([]Num, len(ns))
	for i, n := range ns {
		out[i] = Num{n}
	}
	return out
}

func numKey(n Num) int { return n.N }

var _ = Describe("Windowed bolts", Label("windows"), func() {
	var (
		clk   *sheltertest.Clock
		src   *sheltertest.Source[Num]
		calls *WindowCalls
		sums  *sheltertest.Recorder[Sum]
	)

	BeforeEach(func() {
		clk, src, calls, sums = NewManualClock(), sheltertest.NewSource[Num](), &WindowCalls{}, new(sheltertest.Recorder[Sum])
	})

	// feed pushes values into the source and waits until the window executed
	// total inputs.
	feed := func(w *windowRun, total int, values ...Num) {
		GinkgoHelper()
		src.Push(values...)
		w.until(w.received("window", total), fmt.Sprintf("the window executing %d inputs", total))
	}

	Describe("a sliding count window of 5 tuples sliding by 3 (Storm's withWindow(Count(5), Count(3)))", func() {
		build := func(sink *dsl.BoltSpec) *dsl.Builder {
			b := dsl.New("count-window", windowConf)
			b.Streams(Sum{})
			spout := b.Spout("source", src.Spout())
			window := b.Bolt("window", RecordingWindow(calls, numKey, dsl.WindowSpec[Num]{Count: 5, SlideCount: 3}))
			b.Anchored(spout, window, dsl.Shuffle[Num]())
			b.Anchored(window, b.Bolt("sums", sink), dsl.Shuffle[Sum]())
			return b
		}

		It("calls the handler every 3 tuples with the last 5, and acks each tuple when the last window holding it has closed", func() {
			w := runWindows(build(sums.Bolt()), clk)
			feed(w, 2, nums(1, 2)...)
			Consistently(calls.Len).Should(BeZero())
			Expect(src.Outcomes()).To(BeEmpty(), "nothing is acked on arrival")

			feed(w, 3, nums(3)...)
			Eventually(calls.Len).Should(Equal(1))
			Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1}), "1 is in no later window; 2 and 3 are")
			Consistently(func() []int { return src.Acked() }).Should(Equal([]int{1}))

			feed(w, 6, nums(4, 5, 6)...)
			Eventually(calls.Len).Should(Equal(2))
			Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3, 4))

			feed(w, 10, nums(7, 8, 9, 10)...)
			Eventually(calls.Len).Should(Equal(3))
			Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3, 4, 5, 6, 7))
			Consistently(func() []int { return src.Acked() }).Should(HaveLen(7), "8, 9 and 10 are in the next window")

			Expect(withoutTimes(calls.All())).To(Equal([]WindowCall{
				call([]int{1, 2, 3}, []int{1, 2, 3}, []int{}),
				call([]int{2, 3, 4, 5, 6}, []int{4, 5, 6}, []int{1}),
				call([]int{5, 6, 7, 8, 9}, []int{7, 8, 9}, []int{2, 3, 4}),
			}))
			Eventually(sums.Len).Should(Equal(3))
			Expect(sums.ByTask()).To(ConsistOf(ConsistOf(Sum{6}, Sum{20}, Sum{35})))

			By("the window emits before it acks: each sum joins the trees of its window first")
			for _, step := range []struct{ sum, acked int }{{6, 1}, {20, 2}, {35, 5}} {
				emit, ok := w.emitOf("window", Sum{step.sum}), w.okFor("window", Num{step.acked})
				Expect(emit).To(BeNumerically(">=", 0))
				Expect(ok).To(BeNumerically(">", emit), "the ack of %d follows the emit of sum %d", step.acked, step.sum)
			}

			By("stopping: the trees the window still holds are abandoned, each message settled once")
			Stop(w.r)
			Expect(src.Nacked()).To(ConsistOf(8, 9, 10))
			Expect(src.Verify()).To(Succeed())
		})

		It("fails every tuple of a window whose emit fails downstream", func() {
			failSum20 := dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Sum] {
				return sheltertest.ManualFunc[Sum](func(s Sum, in dsl.Tuple, c dsl.Collector) error {
					if s.N == 20 {
						c.Fail(in)
					} else {
						c.Ack(in)
					}
					return nil
				})
			})
			w := runWindows(build(failSum20), clk)
			feed(w, 6, nums(1, 2, 3, 4, 5, 6)...)
			Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(2, 3, 4, 5, 6),
				"the sum of 2..6 failed: every tuple of its window fails")
			Expect(src.Acked()).To(Equal([]int{1}))

			By("the window acks 2, 3 and 4 as usual; their trees have failed already, so nothing changes")
			feed(w, 9, nums(7, 8, 9)...)
			Eventually(calls.Len).Should(Equal(3))
			Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1, 7}))
			Consistently(func() int { return len(src.Outcomes()) }).Should(Equal(7))
			Stop(w.r)
			Expect(src.Nacked()).To(ConsistOf(2, 3, 4, 5, 6, 8, 9))
			Expect(src.Verify()).To(Succeed())
		})
	})

	It("closes a 10 s tumbling window when the clock reaches its end, with the tuples that arrived in it", func() {
		b := dsl.New("tumbling", windowConf)
		b.Streams(Sum{})
		spout := b.Spout("source", src.Spout())
		window := b.Bolt("window", RecordingWindow(calls, numKey, dsl.WindowSpec[Num]{Length: 10 * time.Second, Now: clk.Now}))
		b.Anchored(spout, window, dsl.Shuffle[Num]())
		b.Anchored(window, b.Bolt("sums", sums.Bolt()), dsl.Shuffle[Sum]())
		t0 := clk.Now() // a multiple of 10 s: windows are aligned to the epoch
		w := runWindows(b, clk)

		feed(w, 3, nums(1, 2, 3)...) // at t0 + 1 ms or so
		w.advanceTo(t0.Add(3 * time.Second))
		feed(w, 4, nums(4)...)
		w.advanceTo(t0.Add(10*time.Second - time.Millisecond))
		Consistently(calls.Len).Should(BeZero(), "the window ends at t0 + 10 s")
		Expect(src.Outcomes()).To(BeEmpty())

		w.advanceTo(t0.Add(10 * time.Second))
		Eventually(calls.Len).Should(Equal(1))
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3, 4))

		feed(w, 6, nums(5, 6)...) // just after t0 + 10 s
		w.advanceTo(t0.Add(20*time.Second - time.Millisecond))
		Consistently(calls.Len).Should(Equal(1))
		w.advanceTo(t0.Add(20 * time.Second))
		Eventually(calls.Len).Should(Equal(2))
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3, 4, 5, 6))
		clk.Advance(20 * time.Second)
		Consistently(calls.Len).Should(Equal(2), "no call for empty windows")

		Expect(calls.All()).To(Equal([]WindowCall{
			{Tuples: []int{1, 2, 3, 4}, New: []int{1, 2, 3, 4}, Expired: []int{}, Start: t0.Local(), End: t0.Add(10 * time.Second).Local()},
			{Tuples: []int{5, 6}, New: []int{5, 6}, Expired: []int{1, 2, 3, 4}, Start: t0.Add(10 * time.Second).Local(), End: t0.Add(20 * time.Second).Local()},
		}))
		Eventually(sums.Len).Should(Equal(2))
		Stop(w.r)
		Expect(src.Verify()).To(Succeed())
	})

	// Storm's event-time example: window length 20 s, sliding interval 10 s,
	// watermarks every second, lag 5 s.
	It("follows event time: watermarks close windows, out-of-order tuples within the lag count, a late tuple goes to the late stream", func() {
		at := func(hms string) time.Time {
			t, err := time.Parse(time.TimeOnly, hms)
			Expect(err).NotTo(HaveOccurred())
			return time.Date(2024, 1, 1, t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
		}
		events := []Reading{
			{1, at("06:00:03")}, {2, at("06:00:05")}, {3, at("06:00:07")}, {4, at("06:00:18")}, {5, at("06:00:26")}, {6, at("06:00:36")},
			{7, at("08:00:25")}, {8, at("08:00:26")}, {9, at("08:00:27")}, {10, at("08:00:39")},
			{11, at("08:00:28")}, // late after the second watermark, 08:00:34
		}
		readings := sheltertest.NewSource(events[:6]...)
		lateOnes := new(sheltertest.Recorder[LateReading])
		b := dsl.New("event-time", windowConf)
		b.Streams(Sum{}, LateReading{})
		spout := b.Spout("source", readings.Spout())
		window := b.Bolt("window", RecordingWindow(calls, func(r Reading) int { return r.E }, dsl.WindowSpec[Reading]{
			Length: 20 * time.Second, Slide: 10 * time.Second,
			Timestamp:         func(r Reading) time.Time { return r.At },
			Lag:               5 * time.Second,
			WatermarkInterval: time.Second,
			Late:              func(r Reading) any { return LateReading{r} },
		}))
		b.Anchored(spout, window, dsl.Shuffle[Reading]())
		b.Anchored(window, b.Bolt("sums", sums.Bolt()), dsl.Shuffle[Sum]())
		b.Anchored(window, b.Bolt("late", lateOnes.Bolt()), dsl.Shuffle[LateReading]())
		t0 := clk.Now()
		w := runWindows(b, clk)
		Eventually(w.received("window", 6)).Should(BeTrue())

		By("at 09:00:01 the watermark is 06:00:31 (06:00:36 - 5 s): three windows close")
		w.advanceTo(t0.Add(time.Second))
		Eventually(calls.Len).Should(Equal(3))
		Eventually(func() []int { return readings.Acked() }).Should(ConsistOf(1, 2, 3, 4), "e5 and e6 are in later windows")

		By("at 09:00:02 the watermark is 08:00:34: two windows of the first run close, and the next one with tuples")
		readings.Push(events[6:10]...)
		w.until(w.received("window", 10), "the window executing e7..e10")
		w.advanceTo(t0.Add(2 * time.Second))
		Eventually(calls.Len).Should(Equal(6))
		Eventually(func() []int { return readings.Acked() }).Should(ConsistOf(1, 2, 3, 4, 5, 6))

		By("e11 at 08:00:28 is older than the watermark: late")
		readings.Push(events[10])
		w.until(func() bool { return lateOnes.Len() == 1 }, "e11 on the late stream")
		Expect(lateOnes.All()[0]).To(Equal(LateReading{events[10]}))
		Eventually(func() []int { return readings.Acked() }).Should(ConsistOf(1, 2, 3, 4, 5, 6, 11), "a late tuple is acked, after its late emit")
		clk.Advance(time.Second)
		Consistently(calls.Len).Should(Equal(6), "a late tuple joins no window")

		window6 := func(from, to string) (time.Time, time.Time) { return at(from).Local(), at(to).Local() }
		expect := func(tuples, added, expired []int, from, to string) WindowCall {
			s, e := window6(from, to)
			return WindowCall{Tuples: tuples, New: added, Expired: expired, Start: s, End: e}
		}
		Expect(calls.All()).To(Equal([]WindowCall{
			expect([]int{1, 2, 3}, []int{1, 2, 3}, []int{}, "05:59:50", "06:00:10"),
			expect([]int{1, 2, 3, 4}, []int{4}, []int{}, "06:00:00", "06:00:20"),
			expect([]int{4, 5}, []int{5}, []int{1, 2, 3}, "06:00:10", "06:00:30"),
			expect([]int{5, 6}, []int{6}, []int{4}, "06:00:20", "06:00:40"),
			expect([]int{6}, []int{}, []int{5}, "06:00:30", "06:00:50"),
			expect([]int{7, 8, 9}, []int{7, 8, 9}, []int{6}, "08:00:10", "08:00:30"),
		}))
		Stop(w.r)
		Expect(readings.Nacked()).To(ConsistOf(7, 8, 9, 10), "held when the topology stopped")
		Expect(readings.Verify()).To(Succeed())
	})

	It("loses the window's state on a restart: its tuples are replayed by the spout and none is acked twice", func() {
		var mu sync.Mutex
		var failWindow func(error)
		b := dsl.New("restart", windowConf)
		b.Streams(Sum{})
		spout := b.Spout("source", src.Spout())
		recording := RecordingWindow(calls, numKey, dsl.WindowSpec[Num]{Count: 3})
		typed := recording.Typed
		recording.Typed = func(info dsl.TaskInfo) dsl.TypedBolt { // keep the task's Fail, to restart the topology
			mu.Lock()
			failWindow = info.Fail
			mu.Unlock()
			return typed(info)
		}
		window := b.Bolt("window", recording)
		b.Anchored(spout, window, dsl.Shuffle[Num]())
		b.Anchored(window, b.Bolt("sums", sums.Bolt()), dsl.Shuffle[Sum]())
		restarting := make(chan time.Duration, 1)
		w := runWindows(b, clk, Restarts(10*time.Millisecond, 10*time.Millisecond, 1), supervision.WithEvents(func(e supervision.Event) {
			if e.Kind == supervision.Restarting {
				restarting <- e.Delay
			}
		}))

		feed(w, 5, nums(1, 2, 3, 4, 5)...)
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3))

		By("failing the window's task with 4 and 5 in its open window")
		mu.Lock()
		failWindow(errors.New("restart in the middle of a window"))
		mu.Unlock()
		Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(4, 5), "the spout abandons the trees it had open")
		var delay time.Duration
		Eventually(restarting).Should(Receive(&delay))
		clk.Advance(delay) // the back-off runs on the manual clock
		Eventually(func() int { return w.r.Stats().Incarnation }).Should(Equal(2))

		By("the spout replays 4 and 5 (as ids 6 and 7), then 6 follows")
		nacked := src.Nacked() // in the order Abandon nacked them, which is any
		sort.Ints(nacked)
		for _, id := range nacked {
			src.Push(Num{id}) // message n carries Num{n}
		}
		src.Push(Num{6})
		w.until(func() bool { return calls.Len() == 2 }, "the second window")
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3, 6, 7, 8))
		Expect(withoutTimes(calls.All())).To(Equal([]WindowCall{
			call([]int{1, 2, 3}, []int{1, 2, 3}, []int{}),
			call([]int{4, 5, 6}, []int{4, 5, 6}, []int{}), // the new incarnation's first window
		}))
		Stop(w.r)
		Expect(src.Outcomes()).To(HaveLen(8))
		Expect(src.Verify()).To(Succeed(), "every message acked or nacked exactly once")
	})

	It("is rejected by Build when its length plus slide exceeds the message timeout, naming the bolt (Storm's check)", func() {
		b := dsl.New("too-long", dsl.Conf{dsl.MessageTimeout: 30})
		spout := b.Spout("source", src.Spout())
		b.Anchored(spout, b.Bolt("trending", RecordingWindow(calls, numKey,
			dsl.WindowSpec[Num]{Length: 5 * time.Minute, Slide: 10 * time.Second})), dsl.Shuffle[Num]())
		_, err := b.Build()
		Expect(err).To(MatchError(ContainSubstring(
			`bolt "trending": window length 5m0s plus slide 10s is 5m10s, more than the message timeout 30s (topology.message.timeout.secs)`)))
	})
})

// Reading is an event with its own time, for event-time windows.
type Reading struct {
	E  int
	At time.Time
}

// LateReading is the late stream of the event-time window.
type LateReading struct{ Reading Reading }
