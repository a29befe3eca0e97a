package specs_test

import (
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// Scenario A of the reference message flow: an unreliable spout feeds a bolt,
// fire-and-forget. The spout is asked for Next, emits without a message id, the
// bolt receives the tuple and acks it with Ok, and nothing is tracked.
var _ = Describe("Scenario A: unreliable spout pipeline", Label("scenario-A"), func() {
	It("asks Next, emits untracked, and the bolt gets the Tuple and answers Ok", func() {
		trace := NewTrace()
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("scenario-a", nil)
		spout := b.Spout("spout", CountTo(3))
		bolt := b.Bolt("bolt", got.Bolt())
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option(), trace.Option())

		Eventually(got.Len).Should(Equal(3))
		// The fourth Next finds the source empty; the manual clock never ends the wait.
		Eventually(func() int { return trace.Count(FromComponent("spout"), KindIs("Next")) }).Should(Equal(4))
		Eventually(func() int { return trace.Count(FromComponent("bolt"), KindIs("Ok")) }).Should(Equal(3))
		Stop(r)

		By("the spout: activated, then Next and Emit for each tuple, and a last empty Next")
		Expect(trace.Steps(FromComponent("spout"))).To(Equal([]string{
			"spout <- Activate",
			"spout <- Next", "spout -> Emit",
			"spout <- Next", "spout -> Emit",
			"spout <- Next", "spout -> Emit",
			"spout <- Next",
			"spout <- Deactivate",
			"spout <- Stop",
		}))
		By("the bolt: activated, then Tuple and Ok for each tuple")
		Expect(trace.Steps(FromComponent("bolt"))).To(Equal([]string{
			"bolt <- Activate",
			"bolt <- Tuple", "bolt -> Ok",
			"bolt <- Tuple", "bolt -> Ok",
			"bolt <- Tuple", "bolt -> Ok",
			"bolt <- Deactivate",
			"bolt <- Stop",
		}))

		By("each tuple goes Next -> Emit -> Tuple -> Ok, in that order")
		events := trace.Events(FromComponent("spout", "bolt"))
		for n := 1; n <= 3; n++ {
			emit := IndexOf(events, KindIs("Emit"), func(e Event) bool {
				return e.Value == Num{N: n}
			})
			tuple := IndexOf(events, KindIs("Tuple"), func(e Event) bool {
				return e.Input.Value == Num{N: n}
			})
			Expect(emit).To(BeNumerically(">", 0), "Emit of tuple %d", n)
			// The bolt runs meanwhile: its steps may fall between the spout's
			// Next and Emit in the merged trace, so the spout's own order says it.
			own := trace.Events(FromComponent("spout"))
			at := IndexOf(own, KindIs("Emit"), func(e Event) bool { return e.Value == Num{N: n} })
			Expect(own[at-1].Kind).To(Equal("Next"), "Next before the Emit of tuple %d", n)
			Expect(tuple).To(BeNumerically(">", emit), "Tuple %d after its Emit", n)
			ok := tuple + 1 + IndexOf(events[tuple+1:], FromComponent("bolt"))
			Expect(Step(events[ok])).To(Equal("bolt -> Ok"), "the bolt's next step after Tuple %d", n)
		}

		By("nothing is tracked: no message id, no anchors, no acker traffic, no Ack or Nack")
		for _, e := range trace.Events(KindIs("Emit")) {
			Expect(e.Anchors).To(BeEmpty())
		}
		for _, e := range trace.Events(KindIs("Tuple")) {
			Expect(e.Input.ID.Edge).To(BeZero())
		}
		for _, e := range trace.Events(KindIs("Ok")) {
			Expect(e.ID.Edge).To(BeZero())
		}
		Expect(trace.Count(KindIs("AckerStep"))).To(BeZero())
		Expect(trace.Count(KindIs("Ack"))).To(BeZero())
		Expect(trace.Count(KindIs("Nack"))).To(BeZero())
	})

	It("keeps an unreliable spout emitting far beyond max spout pending", func() {
		const maxPending, total = 2, 1000
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("scenario-a-pending", dsl.Conf{dsl.MaxSpoutPending: maxPending})
		spout := b.Spout("spout", CountTo(total))
		bolt := b.Bolt("bolt", got.Bolt(), dsl.Parallelism(2))
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())

		// FsShelter counts pending on every emit and uncounts only on Ack/Nack, so
		// an unreliable spout stalls after max pending emits.
		Eventually(got.Len).Should(Equal(total))
		stats := r.Stats().Components["spout"]
		Expect(stats.Emitted).To(Equal(int64(total)))
		Expect(stats.Pending).To(BeZero())
		Eventually(func() int64 { return r.Stats().InFlight }).Should(BeZero())
	})

	It("acks at once a reliable message that no bolt subscribes to, beyond max spout pending", func() {
		const total = 50
		src := sheltertest.NewSource[Num]()
		for n := 1; n <= total; n++ {
			src.Push(Num{N: n})
		}
		b := dsl.New("scenario-a-unsubscribed", dsl.Conf{dsl.MaxSpoutPending: 2})
		b.Spout("lonely", src.Spout())
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())

		// No tree can be opened for a tuple nobody receives: each message is
		// complete as soon as it is emitted, so no pending counter leaks.
		Eventually(func() int { return len(src.Acked()) }).Should(Equal(total))
		Expect(src.Nacked()).To(BeEmpty())
		Expect(r.Stats().Components["lonely"].Pending).To(BeZero())
		Expect(r.Stats().InFlight).To(BeZero())
	})

	It("backs off by the spout wait when its source is empty, and resumes at once when it has work", func() {
		const wait = 250 * time.Millisecond
		src := newScriptedSource()
		got := new(sheltertest.Recorder[Num])
		// Without a flush beat, the emit leaves with the flush after the empty
		// Next, which follows the arming of the wait: its delivery tells the
		// spec the wait is armed before the clock moves.
		b := dsl.New("scenario-a-wait", dsl.Conf{dsl.SpoutWait: int(wait / time.Millisecond), dsl.BatchFlushInterval: 0})
		spout := b.Spout("spout", dsl.Unreliable(src.next))
		bolt := b.Bolt("bolt", got.Bolt())
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		clk := NewManualClock()
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		DeferCleanup(src.close)

		Eventually(src.calls.Load).Should(Equal(int32(1)), "the first Next is waiting for an answer")

		By("work flows: the spout asks Next again right after each emit")
		Eventually(src.answers).Should(BeSent(answer{v: Num{N: 1}, ok: true}))
		Eventually(src.calls.Load).Should(Equal(int32(2)))

		By("the source is empty: the spout flushes, arms one wait and asks nothing until it ends")
		Eventually(src.answers).Should(BeSent(answer{}))
		Eventually(got.Len).Should(Equal(1))
		clk.Advance(wait - time.Millisecond)
		Consistently(src.calls.Load).Should(Equal(int32(2)))
		clk.Advance(time.Millisecond)
		Eventually(src.calls.Load).Should(Equal(int32(3)))

		By("work again: the next Next follows at once, with no wait")
		Eventually(src.answers).Should(BeSent(answer{v: Num{N: 2}, ok: true}))
		Eventually(src.calls.Load).Should(Equal(int32(4)))
		Eventually(src.answers).Should(BeSent(answer{}))
		Eventually(got.Len).Should(Equal(2))
		clk.Advance(wait - time.Millisecond)
		Consistently(src.calls.Load).Should(Equal(int32(4)), "the wait armed again")
	})
})

// answer is what a scriptedSource's Next returns.
type answer struct {
	v  Num
	ok bool
}

// scriptedSource is an unreliable next function whose every call blocks until
// the spec sends the answer (or the source is closed, after which it is empty).
type scriptedSource struct {
	answers chan answer
	done    chan struct{}
	calls   atomic.Int32
}

func newScriptedSource() *scriptedSource {
	return &scriptedSource{answers: make(chan answer), done: make(chan struct{})}
}

func (s *scriptedSource) next() (Num, bool) {
	s.calls.Add(1)
	select {
	case a := <-s.answers:
		return a.v, a.ok
	case <-s.done:
		return Num{}, false
	}
}

func (s *scriptedSource) close() { close(s.done) }
