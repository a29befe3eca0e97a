package specs_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The kit's clock is a barrier: Advance returns once the timers it made due
// have been handled, and the work queued before it was seen by them.

// holdAll is a bolt that counts its inputs and never acks them: only the
// message timeout ends their trees.
func holdAll(received *atomic.Int64) *dsl.BoltSpec {
	return dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
		return sheltertest.ManualFunc[Num](func(Num, dsl.Tuple, dsl.Collector) error {
			received.Add(1)
			return nil
		})
	})
}

// clockRuns is how many fresh topologies a looped clock spec runs: 50, or
// 1,000 when GOSHELTER_SOAK is set.
func clockRuns() int {
	if os.Getenv("GOSHELTER_SOAK") != "" {
		return 1000
	}
	return 50
}

var _ = Describe("The kit's clock", Label("kit", "clock"), func() {
	It("advanced past the timeout, has nacked every open tree when Advance returns (200 fresh topologies)", func() {
		const n = 20
		for run := range 200 {
			clk := NewManualClock()
			src := sheltertest.NewSource(nums(seq(1, n)...)...)
			var received atomic.Int64
			b := dsl.New("timeouts", dsl.Conf{dsl.MessageTimeout: 30 * time.Second, dsl.AckerTasks: 2})
			spout := b.Spout("source", src.Spout())
			b.Anchored(spout, b.Bolt("hold", holdAll(&received), dsl.Parallelism(2)), dsl.Shuffle[Num]())
			r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
			// Every tuple was executed, so its Track has left the spout: it
			// may still wait in an acker's mailbox when the clock moves.
			Eventually(received.Load).Should(BeEquivalentTo(n), "run %d", run)

			clk.Advance(45 * time.Second)
			Expect(src.Nacked()).To(HaveLen(n), "run %d: trees open when Advance returned", run)
			Expect(src.Verify()).To(Succeed(), "run %d", run)
			Stop(r)
		}
	})

	It("runs the README's recipe: Run on the clock, Advance(45s), every held tree nacked, WaitIdle, Verify", func(ctx SpecContext) {
		for run := range clockRuns() {
			clk := sheltertest.NewClock(time.Unix(0, 0))
			src := sheltertest.NewSource(Num{1}, Num{2}, Num{3})
			held := make(chan Num, 3)
			b := dsl.New("recipe", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
			spout := b.Spout("source", src.Spout())
			ship := b.Bolt("ship", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
				return sheltertest.ManualFunc[Num](func(v Num, in dsl.Tuple, c dsl.Collector) error {
					if v.N == 2 {
						held <- v // never acked
						return nil
					}
					c.Ack(in)
					return nil
				})
			}))
			b.Anchored(spout, ship, dsl.Shuffle[Num]())
			running, err := supervision.Run(ctx, Build(b), clk.Option(), supervision.WithLogger(ginkgoLogger()))
			Expect(err).NotTo(HaveOccurred())

			Eventually(held).Should(Receive(), "run %d", run)
			clk.Advance(45 * time.Second) // the held tree times out
			Expect(src.Nacked()).To(Equal([]int{2}), "run %d: the held tree when Advance returned", run)
			Expect(sheltertest.WaitIdle(ctx, running)).To(Succeed())
			Expect(src.Acked()).To(ConsistOf(1, 3), "run %d", run)
			Expect(src.Verify()).To(Succeed(), "run %d", run)
			Expect(running.Stop(ctx)).To(Succeed())
		}
	})

	It("closes a processing-time window on the clock it runs on, without WindowSpec.Now", func() {
		clk := NewManualClock() // a multiple of 10 s: windows are aligned to the epoch
		t0 := clk.Now()
		src := sheltertest.NewSource(nums(1, 2, 3)...)
		calls := &WindowCalls{}
		b := dsl.New("window-clock", nil)
		b.Streams(Sum{})
		spout := b.Spout("source", src.Spout())
		window := b.Bolt("window", RecordingWindow(calls, numKey, dsl.WindowSpec[Num]{Length: 10 * time.Second}))
		b.Anchored(spout, window, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		Eventually(func() int64 { return r.Stats().Components["window"].Executed }).Should(BeEquivalentTo(3))

		clk.Advance(10*time.Second - time.Millisecond)
		Expect(calls.Len()).To(BeZero(), "the window ends at t0 + 10 s")
		clk.Advance(time.Millisecond)
		Expect(calls.All()).To(Equal([]WindowCall{{Tuples: []int{1, 2, 3}, New: []int{1, 2, 3}, Expired: []int{},
			Start: t0.Local(), End: t0.Add(10 * time.Second).Local()}}), "the window closed when Advance returned")
		Expect(src.Acked()).To(ConsistOf(1, 2, 3), "its inputs acked when Advance returned")
		Stop(r)
	})

	Describe("waits for an input a bolt is executing, and gives up when the topology", func() {
		// The bolt blocks on its first input until the spec opens the gate.
		run := func(extra ...supervision.Option) (*sheltertest.Clock, *gate, dsl.TaskInfo, *supervision.Running) {
			clk := NewManualClock()
			g := newGate()
			entered := make(chan struct{}, 1)
			infos := make(chan dsl.TaskInfo, 1)
			b := dsl.New("blocked", nil)
			spout := b.Spout("source", sheltertest.NewSource(Num{1}).Spout())
			b.Anchored(spout, b.Bolt("blocks", dsl.AutoAck(func(Num, dsl.Emitter) error {
				entered <- struct{}{}
				g.wait()
				return nil
			})), dsl.Shuffle[Num]())
			b.Anchored(spout, b.Bolt("other", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
				infos <- info
				return sheltertest.HandlerFunc[Num](func(Num, dsl.Emitter) error { return nil })
			})), dsl.Shuffle[Num]())
			opts := append([]supervision.Option{clk.Option(), supervision.WithDrainTimeout(20 * time.Millisecond)}, extra...)
			r := sheltertest.Start(GinkgoTB(), Build(b), opts...)
			Eventually(entered).Should(Receive())
			return clk, g, <-infos, r
		}
		advance := func(clk *sheltertest.Clock) chan struct{} {
			done := make(chan struct{})
			go func() {
				defer close(done)
				clk.Advance(time.Second)
			}()
			return done
		}

		It("stops", func() {
			clk, g, _, r := run()
			advanced := advance(clk)
			Consistently(advanced).ShouldNot(BeClosed(), "Advance waits for the input being executed")
			stopped := make(chan error, 1)
			go func() { stopped <- r.Stop(context.Background()) }()
			Eventually(advanced).Should(BeClosed(), "Advance gives up once the topology stops")
			g.open()
			Eventually(stopped).WithTimeout(Scaled(10 * time.Second)).Should(Receive(Succeed()))
		})

		It("has a task that fails", func() {
			clk, g, other, r := run(supervision.WithoutRestarts())
			advanced := advance(clk)
			Consistently(advanced).ShouldNot(BeClosed(), "Advance waits for the input being executed")
			other.Fail(errors.New("boom"))
			Eventually(advanced).Should(BeClosed(), "Advance gives up once a task failed")
			g.open()
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
		})
	})
})
