package specs_test

import (
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// Undeclared is a struct type no topology in these specs declares as a stream.
type Undeclared struct{ X int }

// relayNum is a bolt that passes Num on.
func relayNum() *dsl.BoltSpec {
	return dsl.AutoAck(func(in Num, out dsl.Emitter) error { out.Emit(in); return nil })
}

// validationError builds b and returns its *dsl.ValidationError, failing the spec
// if Build succeeds or returns another error type.
func validationError(b *dsl.Builder) *dsl.ValidationError {
	GinkgoHelper()
	topo, err := b.Build()
	Expect(err).To(HaveOccurred())
	Expect(topo).To(BeNil())
	var verr *dsl.ValidationError
	Expect(errors.As(err, &verr)).To(BeTrue(), "Build's error is a *dsl.ValidationError")
	return verr
}

var _ = Describe("Topology validation", Label("dsl-validation"), func() {
	// Each entry starts from a valid topology, numbers (the kit's source of Num) -> sink,
	// breaks it in one way, and expects a problem naming the culprit.
	DescribeTable("rejects each bad form with a message that names the culprit",
		func(conf dsl.Conf, breakIt func(b *dsl.Builder), message string) {
			b := dsl.New("bad", conf)
			b.Streams(Num{})
			numbers := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
			sink := b.Bolt("sink", relayNum())
			b.Anchored(numbers, sink, dsl.Shuffle[Num]())
			breakIt(b)

			verr := validationError(b)
			Expect(verr.Topology).To(Equal("bad"))
			Expect(verr.Problems).To(ContainElement(ContainSubstring(message)))
			Expect(verr.Error()).To(ContainSubstring(message))
		},
		// A Terminator fails every input: on an edge whose tuples are tracked
		// every tree through it would be nacked, silently (issue 11, item 3).
		// Since issue 25 the edge's tuples decide, not its anchoring: sink's
		// input edge from a reliable spout is anchored, so its emits are
		// tracked on every edge out of it.
		Entry("a Terminator on an edge whose tuples are tracked", Label("edges"), nil, func(b *dsl.Builder) {
			reliable := dsl.Reliable(func() (int, Num, bool) { return 0, Num{}, false }, func(int) {}, func(int) {})
			b.Anchored(b.Spout("reliable", reliable), "sink", dsl.Shuffle[Num]())
			b.Unanchored("sink", b.Bolt("drain", dsl.Terminator(func(Num) {})), dsl.Shuffle[Num]())
		}, `edge "sink" -> "drain": bolt "drain" is a Terminator, which fails every input, on an edge whose tuples are tracked`),
		Entry("an edge from an unknown component", nil, func(b *dsl.Builder) {
			b.Anchored("ghost", "sink", dsl.Shuffle[Num]())
		}, `edge "ghost" -> "sink": source component "ghost" is not defined`),
		Entry("an edge to an unknown component", nil, func(b *dsl.Builder) {
			b.Anchored("numbers", "phantom", dsl.Shuffle[Num]())
		}, `edge "numbers" -> "phantom": destination component "phantom" is not defined`),
		Entry("an edge to a spout", nil, func(b *dsl.Builder) {
			b.Anchored("sink", "numbers", dsl.Shuffle[Num]())
		}, `edge "sink" -> "numbers": destination "numbers" is a spout; only bolts subscribe to streams`),
		Entry("a duplicate bolt id", nil, func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt("sink", relayNum()), dsl.All[Num]())
		}, `component "sink" is defined more than once`),
		Entry("a bolt with a spout's id", nil, func(b *dsl.Builder) {
			b.Anchored("sink", b.Bolt("numbers", relayNum()), dsl.Shuffle[Num]())
		}, `component "numbers" is defined more than once`),
		Entry("a reserved component id", nil, func(b *dsl.Builder) {
			b.Anchored("sink", b.Bolt("__system", relayNum()), dsl.Shuffle[Num]())
		}, `component id "__system" is reserved`),
		Entry("an edge whose stream type is not in the schema", nil, func(b *dsl.Builder) {
			other := b.Bolt("other", dsl.AutoAck(func(Undeclared, dsl.Emitter) error { return nil }))
			b.Anchored("sink", other, dsl.Shuffle[Undeclared]())
		}, `edge "sink" -> "other": stream type specs_test.Undeclared is not in the topology's schema`),
		Entry("a bolt that cannot take the stream", nil, func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt("keyed", new(sheltertest.Recorder[KeyedNum]).Bolt()), dsl.Shuffle[Num]())
		}, `edge "numbers" -> "keyed": bolt "keyed" takes specs_test.KeyedNum and cannot accept stream "Num"`),
		Entry("a bolt with no input", nil, func(b *dsl.Builder) {
			b.Bolt("lonely", relayNum())
		}, `bolt "lonely" has no input`),
		Entry("a fields grouping on a field the stream lacks", nil, func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt("keyed", relayNum()), dsl.Fields(func(n Num) int { return n.N }, "Key"))
		}, `edge "numbers" -> "keyed": fields grouping on "Key", which stream "Num" lacks (it has [N])`),
		Entry("a fields grouping that names no field", nil, func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt("keyed", relayNum()), dsl.Fields(func(n Num) int { return n.N }))
		}, `edge "numbers" -> "keyed": fields grouping on stream "Num" names no fields`),
		Entry("zero parallelism", nil, func(b *dsl.Builder) {
			b.Anchored("numbers", b.Bolt("zero", relayNum(), dsl.Parallelism(0)), dsl.Shuffle[Num]())
		}, `component "zero" has parallelism 0; it must be at least 1`),
		Entry("negative parallelism on a spout", nil, func(b *dsl.Builder) {
			b.Spout("negative", CountTo(1), dsl.Parallelism(-2))
		}, `component "negative" has parallelism -2; it must be at least 1`),
		Entry("a stream that is both direct and not", nil, func(b *dsl.Builder) {
			b.Anchored("sink", b.Bolt("direct", relayNum()), dsl.Direct[Num]())
			b.Anchored("sink", b.Bolt("shuffled", relayNum()), dsl.Shuffle[Num]())
		}, `stream "Num" of "sink" mixes direct and non-direct groupings`),
		Entry("a cycle between bolts", nil, func(b *dsl.Builder) {
			a, c := b.Bolt("a", relayNum()), b.Bolt("c", relayNum())
			b.Anchored("sink", a, dsl.Shuffle[Num]())
			b.Anchored(a, c, dsl.Shuffle[Num]())
			b.Anchored(c, a, dsl.Shuffle[Num]())
		}, `cycle "a" -> "c" -> "a": topologies must be acyclic`),
		Entry("a bolt subscribed to itself", nil, func(b *dsl.Builder) {
			b.Anchored("sink", "sink", dsl.Shuffle[Num]())
		}, `cycle "sink" -> "sink": topologies must be acyclic`),
		Entry("topology conf of the wrong type", dsl.Conf{dsl.MaxSpoutPending: "lots"}, func(*dsl.Builder) {},
			`conf "topology.max.spout.pending": want a number, got string`),
		Entry("topology conf below its minimum", dsl.Conf{dsl.MaxSpoutPending: 0}, func(*dsl.Builder) {},
			`conf "topology.max.spout.pending": 0 is below the minimum 1`),
		Entry("a debug flag that is not a bool", dsl.Conf{dsl.Debug: "yes"}, func(*dsl.Builder) {},
			`conf "topology.debug": want a bool, got string`),
		Entry("bad component conf", nil, func(b *dsl.Builder) {
			picky := b.Bolt("picky", relayNum(), dsl.WithConf(dsl.Conf{dsl.MessageTimeout: -5}))
			b.Anchored("numbers", picky, dsl.Shuffle[Num]())
		}, `component "picky": conf "topology.message.timeout.secs": -5 is below the minimum 1`),
	)

	It("lists every problem of a definition in one error", func() {
		b := dsl.New("many-problems", dsl.Conf{dsl.MaxSpoutPending: "lots"})
		numbers := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
		sink := b.Bolt("sink", relayNum(), dsl.Parallelism(0))
		b.Anchored(numbers, sink, dsl.Shuffle[Num]())
		b.Anchored("ghost", sink, dsl.Shuffle[Num]())
		b.Bolt("lonely", relayNum())

		verr := validationError(b)
		Expect(verr.Problems).To(ConsistOf(
			ContainSubstring(`conf "topology.max.spout.pending": want a number, got string`),
			ContainSubstring(`component "sink" has parallelism 0`),
			ContainSubstring(`source component "ghost" is not defined`),
			ContainSubstring(`bolt "lonely" has no input`),
		))
		msg := verr.Error()
		Expect(msg).To(HavePrefix(`dsl: topology "many-problems" is invalid:`))
		for _, p := range verr.Problems {
			Expect(msg).To(ContainSubstring("\n  - " + p))
		}
		Expect(strings.Count(msg, "\n  - ")).To(Equal(4))
	})

	It("accepts the valid base topology", func() {
		b := dsl.New("good", nil)
		b.Anchored(b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout()), b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		Expect(b.Build()).NotTo(BeNil())
	})
})
