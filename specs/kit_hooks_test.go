package specs_test

import (
	"context"
	"errors"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 21, item 5: an optional hook (a method the runtime looks for on a
// handler or a Source) whose signature is wrong used to be ignored in
// silence: a Tick(dsl.Tick) error method got no ticks, an Activate() error
// method heard of no activation. Build now refuses such a component, naming
// the signature the runtime calls.

// hookBolt is an auto-ack handler of Num; each variant below adds one
// method named like a hook.
type hookBolt struct{}

func (hookBolt) Execute(Num, dsl.Emitter) error { return nil }

// tickWithoutCollector has the Tick of Storm's IBolt-less imagination: no Collector.
type tickWithoutCollector struct{ hookBolt }

func (*tickWithoutCollector) Tick(dsl.Tick) error { return nil }

// tickOnPointer has the right Tick on its pointer only; its constructor
// returns the value, whose method set lacks it.
type tickOnPointer struct{ hookBolt }

func (*tickOnPointer) Tick(dsl.Tick, dsl.Collector) error { return nil }

// manualNoError is a manual handler whose Tick returns nothing.
type manualNoError struct{}

func (manualNoError) Execute(Num, dsl.Tuple, dsl.Collector) error { return nil }
func (manualNoError) Tick(dsl.Tick, dsl.Collector)                {}

// hookSource is a Source of Num that never has a message; each variant
// below adds one method named like a hook.
type hookSource struct{}

func (hookSource) Next() (int, Num, bool) { return 0, Num{}, false }
func (hookSource) Ack(int)                {}
func (hookSource) Nack(int)               {}

// activateWithError has an Activate that returns an error.
type activateWithError struct{ hookSource }

func (activateWithError) Activate() error { return nil }
func (activateWithError) Deactivate()     {}

// directByPointer names a task from a *Num, not a Num.
type directByPointer struct{ hookSource }

func (directByPointer) DirectTask(*Num) int { return 0 }

// activateOnly has Activate and no Deactivate.
type activateOnly struct {
	hookSource
	activated *atomic.Int32
}

func (s activateOnly) Activate() { s.activated.Add(1) }

var _ = Describe("Optional hooks", Label("kit", "dsl-validation"), func() {
	DescribeTable("Build refuses a method named like a hook whose signature the runtime does not call, naming the signature it calls",
		func(component string, define func(b *dsl.Builder) (spout, bolt string), want string) {
			b := dsl.New("hooks", nil)
			b.Streams(Num{})
			spout, bolt := define(b)
			b.Anchored(spout, bolt, dsl.Shuffle[Num]())
			_, err := b.Build()
			var invalid *dsl.ValidationError
			Expect(errors.As(err, &invalid)).To(BeTrue(), "Build accepted it: %v", err)
			Expect(invalid.Problems).To(ContainElement(And(ContainSubstring(component), ContainSubstring(want))))
		},
		Entry("an auto-ack handler's Tick without the Collector", `bolt "sink"`, func(b *dsl.Builder) (string, string) {
			return b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout()), b.Bolt("sink", dsl.AutoAckFrom(func(dsl.TaskInfo) *tickWithoutCollector { return &tickWithoutCollector{} }))
		}, "Tick(dsl.Tick) error, but tick tuples are delivered only to a method Tick(dsl.Tick, dsl.Collector) error"),
		Entry("a Tick on the pointer of a handler returned by value", `bolt "sink"`, func(b *dsl.Builder) (string, string) {
			return b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout()), b.Bolt("sink", dsl.AutoAckFrom(func(dsl.TaskInfo) tickOnPointer { return tickOnPointer{} }))
		}, "pointer receiver"),
		Entry("a manual handler's Tick without an error", `bolt "sink"`, func(b *dsl.Builder) (string, string) {
			return b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout()), b.Bolt("sink", dsl.Manual(func(dsl.TaskInfo) manualNoError { return manualNoError{} }))
		}, "Tick(dsl.Tick, dsl.Collector), but tick tuples are delivered only to a method Tick(dsl.Tick, dsl.Collector) error"),
		Entry("a Source's Activate that returns an error", `spout "numbers"`, func(b *dsl.Builder) (string, string) {
			return b.Spout("numbers", dsl.ReliableFrom(func(dsl.TaskInfo) activateWithError { return activateWithError{} })), b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt())
		}, "Activate() error, but activation is reported only to a method Activate()"),
		Entry("a Source's DirectTask of a pointer", `spout "numbers"`, func(b *dsl.Builder) (string, string) {
			return b.Spout("numbers", dsl.ReliableFrom(func(dsl.TaskInfo) directByPointer { return directByPointer{} })), b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt())
		}, "DirectTask(*specs_test.Num) int, but the task of a message is asked only of a method DirectTask(specs_test.Num) int"),
	)

	It("fails the task at its start, naming the signature, when the constructor returns the interface and hides the type from Build", func() {
		b := dsl.New("hidden-hook", nil)
		b.Streams(Num{})
		spout := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
		b.Anchored(spout, b.Bolt("sink", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Num] { return &tickWithoutCollector{} })), dsl.Shuffle[Num]())
		topo := Build(b) // Build sees only dsl.Handler[Num]

		r, err := supervision.Run(context.Background(), topo, supervision.WithoutRestarts(), supervision.WithLogger(ginkgoLogger()))
		if err == nil {
			DeferCleanup(stopQuietly, r)
			Eventually(r.Done()).Should(BeClosed(), "the task's start fails, and with it the topology")
			err = r.Wait()
		}
		Expect(err).To(MatchError(And(ContainSubstring(`"sink"`),
			ContainSubstring("Tick(dsl.Tick) error, but tick tuples are delivered only to a method Tick(dsl.Tick, dsl.Collector) error"))))
	})

	It("calls a Source's Activate when it has no Deactivate", func() {
		var activated atomic.Int32
		b := dsl.New("activate-only", nil)
		b.Streams(Num{})
		spout := b.Spout("numbers", dsl.ReliableFrom(func(dsl.TaskInfo) activateOnly { return activateOnly{activated: &activated} }))
		b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b))
		Eventually(activated.Load).Should(Equal(int32(1)))
	})

	It("accepts every hook with its documented signature", func() {
		src := sheltertest.NewSource(Num{N: 1})
		b := dsl.New("right-hooks", nil)
		b.Streams(Num{})
		numbers := b.Spout("numbers", src.Spout())
		direct := b.Spout("direct", dsl.ReliableFrom(func(dsl.TaskInfo) *directNums { return &directNums{} }))
		sink := b.Bolt("sink", dsl.AutoAckFrom(func(dsl.TaskInfo) *tickOnPointer { return &tickOnPointer{} }))
		b.Anchored(numbers, sink, dsl.Shuffle[Num]())
		b.Anchored(direct, b.Bolt("workers", relayNum()), dsl.Direct[Num]())
		b.Anchored(spoutOf(b, "activated"), b.Bolt("more", relayNum()), dsl.Shuffle[Num]())
		Expect(b.Build()).Error().NotTo(HaveOccurred())
	})
})

// spoutOf adds a reliable spout whose Source has both activation hooks.
func spoutOf(b *dsl.Builder, id string) string {
	return b.Spout(id, dsl.ReliableFrom(func(dsl.TaskInfo) *activatedSource { return &activatedSource{} }))
}
