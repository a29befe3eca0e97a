package specs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 25, items 1 and 2. The routing document (fsshelter-routing.txt, "The
// ==> operator ..." and "Complete routing example") says `s1 ==> b1 //
// Anchored: b1's emits are tracked`: the anchoring of the edge INTO a bolt
// decides whether the bolt's emits, made while it processes an input from
// that edge, join the input's tree. A reliable spout's emits are tracked on
// every edge (Storm, FsShelter). And a Terminator, which fails every input,
// belongs only where nothing is tracked.

// The streams of the document's Guaranteed sample: addOne emits n+1 as
// AnchOdd or AnchEven.
type (
	AnchOdd  struct{ N int }
	AnchEven struct{ N int }
	// AnchPair is what a bolt anchored to two inputs emits.
	AnchPair struct{ A, B int }
)

// anchTimeout is the message timeout of these topologies (the manual clock's).
const anchTimeout = 30 * time.Second

// anchOutcomes maps each message's value to whether it was acked.
func anchOutcomes(src *sheltertest.Source[Num]) map[int]bool {
	out := map[int]bool{}
	for _, o := range src.Outcomes() {
		out[o.Value.N] = o.Acked
	}
	return out
}

// anchFailing is a bolt that fails every input, counting them.
func anchFailing[In any](failed *atomic.Int64) *dsl.BoltSpec {
	return dsl.AutoAck(func(In, dsl.Emitter) error {
		failed.Add(1)
		return errors.New("fails every input")
	})
}

// anchRelay passes its Num input on.
func anchRelay() *dsl.BoltSpec {
	return dsl.AutoAck(func(in Num, out dsl.Emitter) error { out.Emit(in); return nil })
}

// anchRun runs topo on a manual clock, quietly (bolts fail on purpose).
func anchRun(topo *dsl.Topology, clk *sheltertest.Clock) *supervision.Running {
	GinkgoHelper()
	return sheltertest.Start(GinkgoTB(), topo, clk.Option(), supervision.WithoutRestarts(), supervision.WithDrainTimeout(time.Millisecond),
		supervision.WithLogger(zap.NewNop()))
}

// anchNums returns Num{1} .. Num{n}.
func anchNums(n int) []Num {
	out := make([]Num, n)
	for i := range out {
		out[i] = Num{N: i + 1}
	}
	return out
}

// anchSettle waits until every message of src has its outcome, moving the
// clock past the message timeout while some are missing. Call it once the
// messages that end without the clock have ended: a move of the clock fails
// every tree still open. Advance only posts beats, so each poll moves one
// more period until the last tree has expired.
func anchSettle(src *sheltertest.Source[Num], clk *sheltertest.Clock, n int) {
	GinkgoHelper()
	Eventually(func() int {
		if len(src.Outcomes()) < n {
			clk.Advance(anchTimeout)
		}
		return len(src.Outcomes())
	}).WithTimeout(Scaled(10 * time.Second)).Should(Equal(n))
}

var _ = Describe("Fidelity: the anchoring of the edge into a bolt decides whether its emits join the input's tree", Label("fidelity", "anchoring"), func() {
	// The document's Guaranteed sample: numbers ==> addOne (2 tasks),
	// addOne ==> logOdd, addOne --> logEven. addOne's input edge is
	// anchored, so its emits are tracked on both its edges: logEven's
	// failures and timeouts reach the spout, whatever addOne --> logEven says.
	DescribeTable("ports the reference's routing example: what logEven does to its inputs reaches the spout",
		func(logEven func() *dsl.BoltSpec, expires bool) {
			src := sheltertest.NewSource(anchNums(10)...)
			b := dsl.New("guaranteed", dsl.Conf{dsl.MessageTimeout: anchTimeout})
			b.Streams(AnchOdd{}, AnchEven{})
			numbers := b.Spout("numbers", src.Spout())
			addOne := b.Bolt("addOne", dsl.AutoAck(func(in Num, out dsl.Emitter) error {
				if n := in.N + 1; n%2 == 1 {
					out.Emit(AnchOdd{N: n})
				} else {
					out.Emit(AnchEven{N: n})
				}
				return nil
			}), dsl.Parallelism(2))
			logOdd := b.Bolt("logOdd", dsl.AutoAck(func(AnchOdd, dsl.Emitter) error { return nil }))
			b.Anchored(numbers, addOne, dsl.Shuffle[Num]())
			b.Anchored(addOne, logOdd, dsl.Shuffle[AnchOdd]())
			b.Unanchored(addOne, b.Bolt("logEven", logEven()), dsl.Shuffle[AnchEven]())
			clk := NewManualClock()
			anchRun(Build(b), clk)

			ctx := kitCtx()
			if expires {
				// The acks need no clock; only the timeouts do.
				Expect(src.WaitOutcomes(ctx, 5)).To(Succeed())
				anchSettle(src, clk, 10)
			}
			Expect(src.WaitSettled(ctx)).To(Succeed())
			Expect(src.Verify()).To(Succeed())
			Expect(anchOutcomes(src)).To(Equal(map[int]bool{
				1: false, 3: false, 5: false, 7: false, 9: false, // n+1 even: logEven's
				2: true, 4: true, 6: true, 8: true, 10: true, // n+1 odd: logOdd acked
			}))
		},
		Entry("logEven fails every input: the failures reach the spout", func() *dsl.BoltSpec {
			return anchFailing[AnchEven](new(atomic.Int64))
		}, false),
		Entry("logEven never acks: the timeouts reach the spout", func() *dsl.BoltSpec {
			return dsl.Manual(func(dsl.TaskInfo) sheltertest.ManualFunc[AnchEven] {
				return func(AnchEven, dsl.Tuple, dsl.Collector) error { return nil } // holds every input
			})
		}, true),
	)

	It("acks the message of spout --> A ==> B with B failing every input: A's emits are not tracked", func() {
		src := sheltertest.NewSource(anchNums(3)...)
		var failed atomic.Int64
		b := dsl.New("unanchored-in", dsl.Conf{dsl.MessageTimeout: anchTimeout})
		spout := b.Spout("spout", src.Spout())
		a := b.Bolt("A", anchRelay())
		b.Unanchored(spout, a, dsl.Shuffle[Num]())
		b.Anchored(a, b.Bolt("B", anchFailing[Num](&failed)), dsl.Shuffle[Num]())
		anchRun(Build(b), NewManualClock())

		Expect(src.WaitSettled(kitCtx())).To(Succeed())
		Eventually(failed.Load).Should(BeEquivalentTo(3), "B got and failed every tuple")
		Expect(src.Verify()).To(Succeed())
		Expect(src.Acked()).To(ConsistOf(1, 2, 3))
		Expect(src.Nacked()).To(BeEmpty())
	})

	// join has two input edges, s1 ==> join and s2 --> join, and one output,
	// join --> sink (its anchoring changes nothing), and sink fails all.
	It("decides per input for a bolt with several input edges", func() {
		s1, s2 := sheltertest.NewSource(anchNums(3)...), sheltertest.NewSource(anchNums(3)...)
		var failed atomic.Int64
		b := dsl.New("two-inputs", dsl.Conf{dsl.MessageTimeout: anchTimeout})
		join := b.Bolt("join", anchRelay())
		b.Anchored(b.Spout("s1", s1.Spout()), join, dsl.Shuffle[Num]())
		b.Unanchored(b.Spout("s2", s2.Spout()), join, dsl.Shuffle[Num]())
		b.Unanchored(join, b.Bolt("sink", anchFailing[Num](&failed)), dsl.Shuffle[Num]())
		anchRun(Build(b), NewManualClock())

		ctx := kitCtx()
		Expect(s1.WaitSettled(ctx)).To(Succeed())
		Expect(s2.WaitSettled(ctx)).To(Succeed())
		Expect(s1.Verify()).To(Succeed())
		Expect(s2.Verify()).To(Succeed())
		Expect(s1.Nacked()).To(ConsistOf(1, 2, 3), "s1 ==> join: join's emits joined s1's trees, and sink failed them")
		Expect(s2.Acked()).To(ConsistOf(1, 2, 3), "s2 --> join: join's emits are not on s2's trees")
	})

	// Explicit anchors follow the same rule, anchor by anchor: an anchor joins
	// only if the edge it came in on is anchored.
	DescribeTable("applies the rule to each explicit anchor by the edge it came in on",
		func(pairer func(pairs *anchPairs) *dsl.BoltSpec) {
			s1, s2 := sheltertest.NewSource(Num{N: 1}), sheltertest.NewSource(Num{N: 2})
			var failed atomic.Int64
			b := dsl.New("explicit-anchors", dsl.Conf{dsl.MessageTimeout: anchTimeout})
			b.Streams(AnchPair{})
			pair := b.Bolt("pair", pairer(&anchPairs{}))
			b.Anchored(b.Spout("s1", s1.Spout()), pair, dsl.Shuffle[Num]())
			b.Unanchored(b.Spout("s2", s2.Spout()), pair, dsl.Shuffle[Num]())
			b.Anchored(pair, b.Bolt("sink", anchFailing[AnchPair](&failed)), dsl.Shuffle[AnchPair]())
			anchRun(Build(b), NewManualClock())

			ctx := kitCtx()
			Expect(s1.WaitSettled(ctx)).To(Succeed())
			Expect(s2.WaitSettled(ctx)).To(Succeed())
			Eventually(failed.Load).Should(BeEquivalentTo(1), "the pair was emitted and failed")
			Expect(s1.Nacked()).To(Equal([]int{1}), "the anchor from s1 ==> pair joined: sink's fail reached s1")
			Expect(s2.Acked()).To(Equal([]int{1}), "the anchor from s2 --> pair did not join")
			Expect(s1.Verify()).To(Succeed())
			Expect(s2.Verify()).To(Succeed())
		},
		Entry("a manual bolt's EmitAnchored", func(pairs *anchPairs) *dsl.BoltSpec {
			return dsl.Manual(func(dsl.TaskInfo) sheltertest.ManualFunc[Num] {
				return func(_ Num, input dsl.Tuple, c dsl.Collector) error {
					if first, ok := pairs.take(input); ok {
						c.EmitAnchored([]dsl.Tuple{first, input}, AnchPair{A: first.Value.(Num).N, B: input.Value.(Num).N})
						c.Ack(first)
						c.Ack(input)
					}
					return nil
				}
			})
		}),
		// A window's emits are anchored to one stand-in for all its inputs;
		// each input is still judged by its own edge.
		Entry("a windowed bolt's emits, anchored to the whole window", func(*anchPairs) *dsl.BoltSpec {
			return dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Num], dsl.Emitter) error {
				return func(w dsl.Window[Num], out dsl.Emitter) error {
					out.Emit(AnchPair{A: w.New[0].N, B: w.New[1].N})
					return nil
				}
			}, dsl.WindowSpec[Num]{Count: 2})
		}),
	)

	// multilang.Serve is the other host of goshelter's bolts: served to Storm,
	// a bolt knows each input's sender and stream, and its emits carry
	// anchors only for inputs that came in on anchored edges.
	DescribeTable("a bolt served to Storm anchors its emits to an input only if the input's edge is anchored",
		func(bolt string, want []string) {
			b := dsl.New("served", nil)
			b.Streams(AnchPair{})
			nothing := func() (int, Num, bool) { return 0, Num{}, false }
			s1 := b.Spout("s1", dsl.Reliable(nothing, func(int) {}, func(int) {}))
			s2 := b.Spout("s2", dsl.Reliable(nothing, func(int) {}, func(int) {}))
			relay := b.Bolt("relay", anchRelay())
			pairs := &anchPairs{}
			pair := b.Bolt("pair", dsl.Manual(func(dsl.TaskInfo) sheltertest.ManualFunc[Num] {
				return func(_ Num, input dsl.Tuple, c dsl.Collector) error {
					if first, ok := pairs.take(input); ok {
						c.EmitAnchored([]dsl.Tuple{first, input}, AnchPair{A: first.Value.(Num).N, B: input.Value.(Num).N})
					}
					return nil
				}
			}))
			for _, to := range []string{relay, pair} {
				b.Anchored(s1, to, dsl.Shuffle[Num]())
				b.Unanchored(s2, to, dsl.Shuffle[Num]())
			}
			sink := b.Bolt("sink", dsl.AutoAck(func(any, dsl.Emitter) error { return nil }))
			b.Unanchored(relay, sink, dsl.Shuffle[Num]()) // the edges out say nothing
			b.Unanchored(pair, sink, dsl.Shuffle[AnchPair]())
			host := strings.NewReader(fmt.Sprintf(`{"conf":{},"pidDir":"","context":{"componentid":%q,"taskid":3}}
end
{"id":"-1","comp":"s1","stream":"Num","task":1,"tuple":[1]}
end
{"id":"-2","comp":"s2","stream":"Num","task":2,"tuple":[2]}
end
`, bolt))
			var out strings.Builder
			Expect(multilang.Serve(context.Background(), Build(b), host, &out)).To(Succeed())
			var anchors []string
			for _, frame := range strings.Split(out.String(), "\nend\n") {
				var m struct {
					Command string   `json:"command"`
					Anchors []string `json:"anchors"`
				}
				if frame = strings.TrimSpace(frame); frame == "" {
					continue
				}
				Expect(json.Unmarshal([]byte(frame), &m)).To(Succeed(), frame)
				if m.Command == "emit" {
					anchors = append(anchors, fmt.Sprintf("%v", m.Anchors))
				}
			}
			Expect(anchors).To(Equal(want))
		},
		Entry("Emit, input by input", "relay", []string{"[-1]", "[]"}),
		Entry("EmitAnchored to both inputs", "pair", []string{"[-1]"}),
	)
})

// anchPairs pairs inputs: take holds the first and returns it with the second.
type anchPairs struct {
	mu    sync.Mutex // mu guards first
	first *dsl.Tuple
}

func (p *anchPairs) take(in dsl.Tuple) (dsl.Tuple, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		p.first = &in
		return dsl.Tuple{}, false
	}
	first := *p.first
	p.first = nil
	return first, true
}

var _ = Describe("Fidelity: Build accepts a Terminator only where nothing is tracked", Label("fidelity", "dsl-validation"), func() {
	unreliable := func(b *dsl.Builder) string { return b.Spout("spout", CountTo(1)) }
	reliable := func(b *dsl.Builder) string { return b.Spout("spout", sheltertest.NewSource(Num{N: 1}).Spout()) }
	shell := func(b *dsl.Builder) string {
		return b.Spout("spout", multilang.Spout[Num](multilang.Command{Path: "true"}))
	}
	terminator := func(b *dsl.Builder) string { return b.Bolt("drain", dsl.Terminator(func(Num) {})) }
	manual := func(b *dsl.Builder, id string) string {
		return b.Bolt(id, dsl.Manual(func(dsl.TaskInfo) sheltertest.ManualFunc[Num] {
			return func(Num, dsl.Tuple, dsl.Collector) error { return nil }
		}))
	}
	shellBolt := func(b *dsl.Builder, id string) string {
		return b.Bolt(id, multilang.Bolt(multilang.Command{Path: "true"}))
	}

	DescribeTable("rejects a Terminator on an edge whose tuples can be tracked, naming the edge",
		func(wire func(b *dsl.Builder), edge string) {
			b := dsl.New("drains", nil)
			wire(b)
			verr := validationError(b)
			Expect(verr.Problems).To(ContainElement(SatisfyAll(
				ContainSubstring(edge), ContainSubstring(`bolt "drain" is a Terminator`))))
		},
		Entry("a reliable spout's unanchored edge (every message nacked forever)", func(b *dsl.Builder) {
			b.Unanchored(reliable(b), terminator(b), dsl.Shuffle[Num]())
		}, `edge "spout" -> "drain"`),
		Entry("a reliable spout's anchored edge", func(b *dsl.Builder) {
			b.Anchored(reliable(b), terminator(b), dsl.Shuffle[Num]())
		}, `edge "spout" -> "drain"`),
		Entry("a shell spout's edge", func(b *dsl.Builder) {
			b.Unanchored(shell(b), terminator(b), dsl.Shuffle[Num]())
		}, `edge "spout" -> "drain"`),
		Entry("an edge out of a bolt whose emits join trees (reliable ==> relay --> drain)", func(b *dsl.Builder) {
			relay := b.Bolt("relay", anchRelay())
			b.Anchored(reliable(b), relay, dsl.Shuffle[Num]())
			b.Unanchored(relay, terminator(b), dsl.Shuffle[Num]())
		}, `edge "relay" -> "drain"`),
		Entry("two bolts down the tracked path (reliable ==> a ==> b --> drain)", func(b *dsl.Builder) {
			a, c := b.Bolt("a", anchRelay()), b.Bolt("b", anchRelay())
			b.Anchored(reliable(b), a, dsl.Shuffle[Num]())
			b.Anchored(a, c, dsl.Shuffle[Num]())
			b.Unanchored(c, terminator(b), dsl.Shuffle[Num]())
		}, `edge "b" -> "drain"`),
		Entry("an edge out of a manual bolt on a tracked path", func(b *dsl.Builder) {
			b.Anchored(reliable(b), manual(b, "relay"), dsl.Shuffle[Num]())
			b.Unanchored("relay", terminator(b), dsl.Shuffle[Num]())
		}, `edge "relay" -> "drain"`),
		Entry("an edge out of a shell bolt on a tracked path", func(b *dsl.Builder) {
			b.Anchored(reliable(b), shellBolt(b, "relay"), dsl.Shuffle[Num]())
			b.Unanchored("relay", terminator(b), dsl.Shuffle[Num]())
		}, `edge "relay" -> "drain"`),
	)

	DescribeTable("accepts a Terminator where nothing is tracked",
		func(conf dsl.Conf, wire func(b *dsl.Builder)) {
			b := dsl.New("drains", conf)
			wire(b)
			_, err := b.Build()
			Expect(err).NotTo(HaveOccurred())
		},
		Entry("an unreliable spout's unanchored edge", nil, func(b *dsl.Builder) {
			b.Unanchored(unreliable(b), terminator(b), dsl.Shuffle[Num]())
		}),
		Entry("an unreliable spout's anchored edge: there is no tree to fail", nil, func(b *dsl.Builder) {
			b.Anchored(unreliable(b), terminator(b), dsl.Shuffle[Num]())
		}),
		Entry("out of a bolt whose input edge is unanchored (reliable --> relay ==> drain)", nil, func(b *dsl.Builder) {
			relay := b.Bolt("relay", anchRelay())
			b.Unanchored(reliable(b), relay, dsl.Shuffle[Num]())
			b.Anchored(relay, terminator(b), dsl.Shuffle[Num]())
		}),
		Entry("a reliable spout in a topology without ackers", dsl.Conf{dsl.AckerTasks: 0}, func(b *dsl.Builder) {
			b.Unanchored(reliable(b), terminator(b), dsl.Shuffle[Num]())
		}),
	)
})
