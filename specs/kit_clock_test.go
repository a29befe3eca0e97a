package specs_test

import (
	"os"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The kit's clock fires timers: Advance returns once the callbacks that fell
// due have run. What they cause reaches each task after what was sent to it
// before (an acker rotates after the Tracks queued to it), and a spec waits
// for that effect with the kit's waits.

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
	It("advanced past the timeout, times out every tree whose tuple reached a bolt before Advance (200 fresh topologies)", func() {
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
			// may still wait in an acker's mailbox when the clock moves, and
			// the rotation comes after it.
			Eventually(received.Load).Should(BeEquivalentTo(n), "run %d", run)

			clk.Advance(45 * time.Second) // one Advance, however the Tracks and the rotation race
			Expect(src.WaitOutcomes(kitCtx(), n)).To(Succeed(), "run %d: a tree missed the rotation", run)
			Expect(src.Nacked()).To(HaveLen(n), "run %d", run)
			Expect(src.Verify()).To(Succeed(), "run %d", run)
			Stop(r)
		}
	})

	It("runs the README's recipe: Run on the clock, wait for the held tuple and the others' acks, Advance(45s), WaitIdle, the held tree nacked, Verify", func(ctx SpecContext) {
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
			// The other trees are acked first: a rotation would time out a
			// tree whose ack is still on its way to the acker.
			Expect(src.WaitOutcomes(ctx, 2)).To(Succeed(), "run %d", run)
			clk.Advance(45 * time.Second) // the held tree times out
			Expect(sheltertest.WaitIdle(ctx, running)).To(Succeed(), "run %d", run)
			Expect(src.Nacked()).To(Equal([]int{2}), "run %d: the held tree", run)
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
		Consistently(calls.Len).WithTimeout(50*time.Millisecond).Should(BeZero(), "the window ends at t0 + 10 s")
		clk.Advance(time.Millisecond)
		Eventually(calls.All).Should(Equal([]WindowCall{{Tuples: []int{1, 2, 3}, New: []int{1, 2, 3}, Expired: []int{},
			Start: t0.Local(), End: t0.Add(10 * time.Second).Local()}}), "the window closed on the tick")
		Expect(src.WaitOutcomes(kitCtx(), 3)).To(Succeed())
		Expect(src.Acked()).To(ConsistOf(1, 2, 3), "its inputs acked when it closed")
		Stop(r)
	})

	It("waits for nothing but its timers: Advance returns while a bolt is busy in user code", func() {
		clk := NewManualClock()
		g := newGate()
		DeferCleanup(g.open)
		entered := make(chan struct{}, 1)
		ticks := make(chan dsl.Tick, 1)
		b := dsl.New("blocked", nil)
		spout := b.Spout("source", sheltertest.NewSource(Num{1}).Spout())
		b.Anchored(spout, b.Bolt("blocks", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return gatedTicker{entered: entered, gate: g, ticks: ticks}
		}), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 1})), dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		Eventually(entered).Should(Receive())

		advanced := make(chan struct{})
		go func() {
			defer close(advanced)
			clk.Advance(time.Second)
		}()
		Eventually(advanced).Should(BeClosed(), "Advance returned while the bolt executes")
		Consistently(ticks).WithTimeout(20*time.Millisecond).ShouldNot(Receive(), "the busy bolt has not seen its tick")
		g.open()
		Eventually(ticks).Should(Receive(HaveField("RateSecs", 1)), "the tick reaches the bolt once its input returned")
		Stop(r)
	})

	It("may be advanced from inside a component: a bolt that moves the clock gets the tick it made due", func() {
		clk := NewManualClock()
		ticks := make(chan dsl.Tick, 1)
		started := newGate()
		DeferCleanup(started.open)
		b := dsl.New("inside", nil)
		spout := b.Spout("source", sheltertest.NewSource(Num{1}).Spout())
		b.Anchored(spout, b.Bolt("mover", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return movingTicker{clk: clk, started: started, ticks: ticks}
		}), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 1})), dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		started.open() // Start returned: the tick timer is armed
		Eventually(ticks).Should(Receive(HaveField("RateSecs", 1)))
	})
})

// gatedTicker acks its input once the gate opens, after it said it entered,
// and hands its ticks to the spec.
type gatedTicker struct {
	entered chan<- struct{}
	gate    *gate
	ticks   chan<- dsl.Tick
}

func (h gatedTicker) Execute(_ Num, in dsl.Tuple, c dsl.Collector) error {
	h.entered <- struct{}{}
	h.gate.wait()
	c.Ack(in)
	return nil
}

func (h gatedTicker) Tick(t dsl.Tick, _ dsl.Collector) error {
	h.ticks <- t
	return nil
}

// movingTicker moves the clock by a tick period from inside its Execute, once
// started opens, and hands its ticks to the spec.
type movingTicker struct {
	clk     *sheltertest.Clock
	started *gate
	ticks   chan<- dsl.Tick
}

func (h movingTicker) Execute(_ Num, in dsl.Tuple, c dsl.Collector) error {
	h.started.wait()
	h.clk.Advance(time.Second)
	c.Ack(in)
	return nil
}

func (h movingTicker) Tick(t dsl.Tick, _ dsl.Collector) error {
	h.ticks <- t
	return nil
}
