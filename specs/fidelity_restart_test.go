package specs_test

import (
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 25, item 4: a restart waits no longer than it says. With a fast spout,
// default mailbox sizes and a bolt that fails, the bolt upstream of the failed
// one parked on its full mailbox; the stop of the failed incarnation then
// waited out the bolts' grace (twice the drain timeout) for that bolt to
// deactivate, so the restart came two drain timeouts after the back-off.
//
// The back-off runs on the manual clock and the drain timeout on the wall
// clock (30 s here, the message timeout): the spec advances the clock by the
// back-off alone and expects the next incarnation within seconds, well before
// any drain timeout or grace could have run out.

// restartConf is the scenario's conf: the defaults (mailbox sizes included)
// but for max spout pending, high enough for a reliable spout to fill both
// bolts' mailboxes.
var restartConf = dsl.Conf{dsl.MessageTimeout: 30 * time.Second, dsl.MaxSpoutPending: 1 << 20}

// breaker is bolt B: in the first incarnation it holds its first input until
// the test breaks it, then fails its task (dsl.TaskInfo.Fail, as a component
// does that finds itself unusable); later incarnations ack every input.
type breaker struct {
	first  atomic.Bool   // the first incarnation's first input was taken
	broken chan struct{} // closed by the test: the held input fails the task
	once   atomic.Bool
}

func newBreaker() *breaker { return &breaker{broken: make(chan struct{})} }

func (k *breaker) breakNow() {
	if k.once.CompareAndSwap(false, true) {
		close(k.broken)
	}
}

func (k *breaker) bolt() *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(info dsl.TaskInfo) sheltertest.HandlerFunc[Num] {
		return func(Num, dsl.Emitter) error {
			if k.first.CompareAndSwap(false, true) {
				<-k.broken
				info.Fail(errors.New("B is broken"))
			}
			return nil
		}
	})
}

// restartChain is spout -> A -> B, both edges anchored: A forwards every
// input to B.
func restartChain(spout *dsl.SpoutSpec, b *breaker) *dsl.Topology {
	t := dsl.New("restart-drain", restartConf)
	nums := t.Spout("nums", spout)
	a := t.Bolt("A", dsl.AutoAck(func(n Num, out dsl.Emitter) error {
		out.Emit(n)
		return nil
	}))
	t.Anchored(nums, a, dsl.Shuffle[Num]())
	t.Anchored(a, t.Bolt("B", b.bolt()), dsl.Shuffle[Num]())
	return Build(t)
}

// mailboxesFull reports whether A's and B's data lanes are both full: B holds
// an input, A is parked on B's mailbox (or about to be) and the spout on A's.
func mailboxesFull(r *supervision.Running, slots int) bool {
	c := r.Stats().Components
	return c["A"].MailboxDepth == slots && c["B"].MailboxDepth == slots
}

var _ = Describe("A restart waits no longer than it says", Label("fidelity", "supervision"), func() {
	DescribeTable("starts the next incarnation when the back-off is over, though a bolt was parked on the failed bolt's full mailbox",
		func(reliable bool) {
			const base = 10 * time.Millisecond
			const messages = 40_000 // more than A's and B's mailboxes hold: 2 x 256 x 64
			var src *sheltertest.Source[Num]
			spout := CountTo(1 << 30) // fast and unreliable: it fills every mailbox
			if reliable {
				src = sheltertest.Generate(messages, func(i int) Num { return Num{N: i + 1} })
				spout = src.Spout()
			}
			b := newBreaker()
			topo := restartChain(spout, b)
			clk := NewManualClock()
			events := newEventLog()
			r := sheltertest.Start(GinkgoTB(), topo, clk.Option(), supervision.WithEvents(events.record),
				Restarts(base, 8*base, 0))
			DeferCleanup(b.breakNow) // before Start's stop, should the spec end early
			events.next(supervision.Started)

			By("filling B's mailbox while B holds an input, then A's")
			slots := topo.Settings.ReceiveBufferSize
			Eventually(func() bool { return mailboxesFull(r, slots) }).WithTimeout(Scaled(30*time.Second)).
				Should(BeTrue(), "A's and B's mailboxes full (%d batches)", slots)

			By("failing B: the incarnation backs off, its spouts deactivated")
			b.breakNow()
			failed := events.next(supervision.Failed)
			Expect(failed.Err).To(MatchError(ContainSubstring("B is broken")))
			restarting := events.next(supervision.Restarting)
			Expect(restarting.Delay).To(Equal(2 * base))

			By("moving the clock by the back-off only: the next incarnation starts at once")
			clk.Advance(restarting.Delay)
			var started supervision.Event
			Eventually(events.ch).WithTimeout(Scaled(5*time.Second)).Should(Receive(&started),
				"the restart waited for more than the back-off (the drain timeout is 30 s of wall time)")
			Expect(started.Kind).To(Equal(supervision.Started))
			Expect(started.Incarnation).To(Equal(2))

			if reliable {
				By("the trees the failed incarnation held, parked tuples' included, are nacked once each")
				Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
				Expect(src.Verify()).To(Succeed())
				Expect(src.Nacked()).NotTo(BeEmpty())
				Expect(len(src.Acked()) + len(src.Nacked())).To(Equal(messages))
			}
			Stop(r)
		},
		Entry("with an unreliable spout", false),
		Entry("with a reliable spout: what A held is nacked with the rest", true),
	)
})
