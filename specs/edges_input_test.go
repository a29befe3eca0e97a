package specs_test

import (
	"math"
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// Issue 20, item 4: no input crashes or wedges the process. Each spec feeds
// one input that used to crash a renderer, wedge the acker, land in a wrong
// window, split equal keys or fail every tuple silently, and expects Build to
// refuse it naming the culprit, or the runtime to handle it by a stated rule.

// FloatKeyed is a stream keyed by a float, for fields groupings.
type FloatKeyed struct {
	K float64
	N int
}

// emitAll is an unreliable spout whose single task emits values, then nothing.
func emitAll[T any](values ...T) *dsl.SpoutSpec {
	return dsl.UnreliableFrom(func(dsl.TaskInfo) func() (T, bool) {
		i := 0
		return func() (T, bool) {
			if i == len(values) {
				var zero T
				return zero, false
			}
			i++
			return values[i-1], true
		}
	})
}

// withBadTag returns a value of a struct type whose only field's storm tag
// names it with a byte that is not UTF-8 (the tag's quoted \xff).
func withBadTag() any {
	typ := reflect.StructOf([]reflect.StructField{{Name: "X", Type: reflect.TypeFor[int](), Tag: `storm:"\xff"`}})
	return reflect.New(typ).Elem().Interface()
}

var _ = Describe("Input at the edges", Label("edges"), func() {
	// Names reach Prometheus labels (whose constructors panic on bytes that
	// are not UTF-8), the status page, REST paths (where "." and ".." are
	// cleaned away) and Flux. Build refuses what Storm refuses, and what
	// those cannot carry.
	DescribeTable("refuses a name that a renderer cannot carry, naming it", Label("dsl-validation"),
		func(name string, breakIt func(b *dsl.Builder), message string) {
			b := dsl.New(name, nil)
			b.Streams(Num{})
			numbers := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
			b.Anchored(numbers, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
			breakIt(b)

			verr := validationError(b)
			Expect(verr.Problems).To(ContainElement(ContainSubstring(message)))
		},
		Entry("a topology name that is not UTF-8", "bad\xff", func(*dsl.Builder) {},
			`topology name "bad\xff" is not valid UTF-8`),
		Entry("a topology name with a dot (Storm's rule)", "my.topology", func(*dsl.Builder) {},
			`topology name "my.topology" contains one of '/', '.', ':' or '\'`),
		Entry("a topology name with a slash", "a/b", func(*dsl.Builder) {},
			`topology name "a/b" contains one of`),
		Entry("a topology name with a colon", "a:b", func(*dsl.Builder) {},
			`topology name "a:b" contains one of`),
		Entry("a topology name with a backslash", `a\b`, func(*dsl.Builder) {},
			`topology name "a\\b" contains one of`),
		Entry("a component id that is not UTF-8", "ok", func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt("sink\xfe", relayNum()), dsl.Shuffle[Num]())
		}, `component id "sink\xfe" is not valid UTF-8`),
		Entry(`a component id "."`, "ok", func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt(".", relayNum()), dsl.Shuffle[Num]())
		}, `component id "." cannot be addressed in a URL path`),
		Entry(`a spout id ".."`, "ok", func(b *dsl.Builder) {
			b.Anchored(b.Spout("..", CountTo(1)), "sink", dsl.All[Num]())
		}, `component id ".." cannot be addressed in a URL path`),
		Entry("a stream name that is not UTF-8", "ok", func(b *dsl.Builder) {
			b.NamedStream("sums\x80", Sum{})
		}, `stream name "sums\x80" is not valid UTF-8`),
		Entry(`a stream name ".."`, "ok", func(b *dsl.Builder) {
			b.NamedStream("..", Sum{})
		}, `stream name ".." cannot be addressed in a URL path`),
		Entry("a stream name of the system's (Storm's rule)", "ok", func(b *dsl.Builder) {
			b.NamedStream("__tick", Sum{})
		}, `stream name "__tick" is reserved`),
		Entry("a stream type with no name", "ok", func(b *dsl.Builder) {
			b.Streams(struct{ X int }{})
		}, `stream type struct { X int } has no name (an unnamed struct type): declare it with NamedStream`),
		Entry("a field name that is not UTF-8", "ok", func(b *dsl.Builder) {
			b.NamedStream("Tagged", withBadTag())
		}, `stream "Tagged": field name "\xff" is not valid UTF-8`),
	)

	It("lists every bad name of a definition in one error", Label("dsl-validation"), func() {
		b := dsl.New("a.b", nil)
		b.NamedStream("..", Sum{})
		numbers := b.Spout(".", sheltertest.NewSource(Num{N: 1}).Spout())
		b.Anchored(numbers, b.Bolt("\xff", relayNum()), dsl.Shuffle[Num]())
		Expect(validationError(b).Problems).To(ContainElements(
			ContainSubstring(`topology name "a.b"`), ContainSubstring(`stream name ".."`),
			ContainSubstring(`component id "."`), ContainSubstring(`component id "\xff"`)))
	})

	// The ackers rotate their buckets every half message timeout: 1 ns made
	// that period zero, so no tree ever expired (a wedge), and a few
	// microseconds would flood every acker and spout with rotations.
	DescribeTable("refuses a message timeout too short for the ackers to rotate, naming the key and the minimum",
		Label("dsl-validation"),
		func(timeout time.Duration, component bool) {
			conf, boltConf := dsl.Conf{dsl.MessageTimeout: timeout}, dsl.Conf(nil)
			if component {
				conf, boltConf = nil, conf
			}
			b := dsl.New("short-timeout", conf)
			numbers := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
			b.Anchored(numbers, b.Bolt("sink", relayNum(), dsl.WithConf(boltConf)), dsl.Shuffle[Num]())
			Expect(validationError(b).Problems).To(ContainElement(And(
				ContainSubstring(`conf "topology.message.timeout.secs"`),
				ContainSubstring("is below the minimum 1ms"))))
		},
		Entry("1 ns for the topology", time.Nanosecond, false),
		Entry("1 µs for a component", time.Microsecond, true),
		Entry("just under a millisecond", time.Millisecond-time.Nanosecond, false),
	)

	It("accepts a message timeout of exactly the minimum", Label("dsl-validation"), func() {
		b := dsl.New("shortest-timeout", dsl.Conf{dsl.MessageTimeout: time.Millisecond})
		numbers := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
		b.Anchored(numbers, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		Build(b)
	})

	// UnixNano is undefined outside int64 nanoseconds: a zero time.Time (a
	// field never set) or the year 3000 used to wrap into some other window,
	// and the input was acked there.
	It("fails an input whose event time the window cannot compute with, logging the time, and windows the others", Label("windows"), func() {
		zero, far := time.Time{}, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
		day := time.Date(2024, 1, 1, 6, 0, 0, 0, time.UTC)
		readings := sheltertest.NewSource(
			Reading{1, zero}, Reading{2, day.Add(3 * time.Second)}, Reading{3, far}, Reading{4, day.Add(36 * time.Second)})
		calls := &WindowCalls{}
		clk := NewManualClock()
		b := dsl.New("event-time-range", windowConf)
		b.Streams(Sum{})
		spout := b.Spout("source", readings.Spout())
		window := b.Bolt("window", RecordingWindow(calls, func(r Reading) int { return r.E }, dsl.WindowSpec[Reading]{
			Length: 20 * time.Second, Slide: 10 * time.Second, Lag: 5 * time.Second, WatermarkInterval: time.Second,
			Timestamp: func(r Reading) time.Time { return r.At },
		}))
		b.Anchored(spout, window, dsl.Shuffle[Reading]())
		b.Unanchored(window, b.Bolt("sums", new(sheltertest.Recorder[Sum]).Bolt()), dsl.Shuffle[Sum]())
		logs, observed := ObserveLogs()
		w := runWindows(b, clk, logs)
		w.until(w.received("window", 4), "the window executing its 4 inputs")

		Eventually(func() []int { return readings.Nacked() }).Should(ConsistOf(1, 3), "the inputs out of range fail")
		failures := observed.FilterMessage("bolt failed its input").All()
		Expect(failures).To(HaveLen(2))
		for i, at := range []time.Time{zero, far} {
			Expect(failures[i].ContextMap()["error"]).To(And(
				ContainSubstring("event time "+at.String()), ContainSubstring("outside the range a window can compute with")))
		}

		By("the watermark 06:00:31 closes the windows holding 06:00:03 only")
		w.advanceTo(clk.Now().Add(time.Second))
		Eventually(calls.Len).Should(Equal(2))
		Expect(calls.All()).To(Equal([]WindowCall{
			{Tuples: []int{2}, New: []int{2}, Expired: []int{}, Start: day.Add(-10 * time.Second).Local(), End: day.Add(10 * time.Second).Local()},
			{Tuples: []int{2}, New: []int{}, Expired: []int{}, Start: day.Local(), End: day.Add(20 * time.Second).Local()},
		}))
		Eventually(func() []int { return readings.Acked() }).Should(ConsistOf(2))
		Stop(w.r)
		Expect(readings.Verify()).To(Succeed())
	})

	// Fields groupings hash the key's value: 0 and -0 are equal keys, and
	// NaN, which equals nothing, has a rule: every NaN goes to one task.
	It("sends float keys 0 and -0 to one task, and every NaN to one task", Label("grouping-fields"), func() {
		negZero := math.Copysign(0, -1)
		nans := []float64{math.NaN(), math.Copysign(math.NaN(), -1),
			math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000bad)}
		values := []FloatKeyed{{0, 1}, {negZero, 2}, {0, 3}, {negZero, 4}}
		for i, nan := range nans {
			values = append(values, FloatKeyed{nan, 5 + i})
		}
		got := new(sheltertest.Recorder[FloatKeyed])
		b := dsl.New("float-keys", nil)
		spout := b.Spout("floats", emitAll(values...))
		b.Unanchored(spout, b.Bolt("by-key", got.Bolt(), dsl.Parallelism(8)),
			dsl.Fields(func(f FloatKeyed) float64 { return f.K }, "K"))
		sheltertest.Start(GinkgoTB(), Build(b))
		Eventually(got.Len).Should(Equal(len(values)))

		zeroTasks, nanTasks := map[int]bool{}, map[int]bool{}
		for task, inputs := range got.ByTask() {
			for _, f := range inputs {
				if f.N <= 4 {
					zeroTasks[task] = true
				} else {
					nanTasks[task] = true
				}
			}
		}
		Expect(zeroTasks).To(HaveLen(1), "0 and -0 on one task")
		Expect(nanTasks).To(HaveLen(1), "every NaN on one task")
	})

	// An unreliable spout's next function cannot name a task: on a direct
	// stream its every emit was refused, logged, and lost.
	It("refuses a Direct edge from an unreliable spout, naming the edge", Label("dsl-validation", "grouping-direct"), func() {
		b := dsl.New("direct-unreliable", nil)
		numbers := b.Spout("numbers", CountTo(3))
		b.Unanchored(numbers, b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt(), dsl.Parallelism(2)), dsl.Direct[Num]())
		Expect(validationError(b).Problems).To(ConsistOf(
			ContainSubstring(`edge "numbers" -> "sink": spout "numbers" is unreliable and cannot name a task`)))
	})
})
