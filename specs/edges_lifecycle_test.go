package specs_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

var _ = Describe("Edges: a task's Context reaches its constructor", Label("edges", "lifecycle"), func() {
	// blockedConstructor is a component constructor that waits on its task's
	// Context, as one dialing a service with it would, and records how it ended.
	type blockedConstructor struct {
		waiting  chan struct{} // closed once it waits
		returned chan struct{} // closed once it has returned
		cause    atomic.Value  // context.Cause of the task's Context when it ended
	}
	newBlocked := func() *blockedConstructor {
		return &blockedConstructor{waiting: make(chan struct{}), returned: make(chan struct{})}
	}
	wait := func(c *blockedConstructor, info dsl.TaskInfo) {
		defer close(c.returned)
		close(c.waiting)
		<-info.Context().Done()
		c.cause.Store(context.Cause(info.Context()))
	}

	DescribeTable("Run's ctx ending while a constructor waits on TaskInfo.Context ends that context, and Run returns the ctx's cause at once",
		func(component func(c *blockedConstructor, b *dsl.Builder)) {
			c := newBlocked()
			b := dsl.New("blocked-constructor", nil)
			component(c, b)
			topo := Build(b)

			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			type result struct {
				r   *supervision.Running
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := supervision.Run(ctx, topo, supervision.WithLogger(ginkgoLogger()))
				done <- result{r, err}
			}()
			Eventually(c.waiting).Should(BeClosed(), "the constructor waits on its Context")

			cause := errors.New("the operator pulled the plug")
			cancel(cause)
			var res result
			// The default message timeout is 30 s, so a wait for a stuck task
			// (a grace of twice that) cannot hide under this bound.
			Eventually(done).WithTimeout(Scaled(10*time.Second)).Should(Receive(&res), "Run returns while the start-up is interrupted")
			Expect(res.r).To(BeNil())
			Expect(res.err).To(MatchError(cause), "Run's error carries the ctx's cause")
			Expect(c.returned).To(BeClosed(), "the constructor returned: its Context ended")
			Expect(c.cause.Load()).To(MatchError(cause), "the task's Context ended with Run's ctx's cause")
		},
		Entry("a bolt's constructor", func(c *blockedConstructor, b *dsl.Builder) {
			spout := b.Spout("spout", dsl.Unreliable(func() (Num, bool) { return Num{}, false }))
			bolt := b.Bolt("bolt", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
				wait(c, info)
				return idleHandler{}
			}))
			b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		}),
		Entry("a spout's constructor", func(c *blockedConstructor, b *dsl.Builder) {
			spout := b.Spout("spout", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Num, bool) {
				wait(c, info)
				return func() (Num, bool) { return Num{}, false }
			}))
			b.Unanchored(spout, b.Bolt("sink", dsl.Terminator(func(Num) {})), dsl.Shuffle[Num]())
		}),
	)
})

var _ = Describe("Edges: a task's Context ends when the task is stopped", Label("edges", "lifecycle"), func() {
	It("ends the Context of a bolt busy waiting on it, so Stop stops the bolt instead of abandoning it", func() {
		executing, returned := make(chan struct{}), make(chan struct{})
		b := dsl.New("busy-on-context", nil)
		bolt := b.Bolt("bolt", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
			return sheltertest.HandlerFunc[Num](func(Num, dsl.Emitter) error {
				close(executing)
				<-info.Context().Done() // a call to a service, bounded by the task's Context
				close(returned)
				return nil
			})
		}))
		b.Unanchored(b.Spout("spout", CountTo(1)), bolt, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option(), supervision.WithDrainTimeout(10*time.Millisecond))
		Eventually(executing).Should(BeClosed())

		// Busy, the bolt cannot take its deactivation; once its grace is over
		// the stop ends its Context, and it returns and stops within the next.
		Stop(r)
		Expect(returned).To(BeClosed())
	})
})

// idleHandler consumes its input (auto-acked).
type idleHandler struct{}

func (idleHandler) Execute(Num, dsl.Emitter) error { return nil }

var _ = Describe("Edges: the manual clock runs only what a test asks for", Label("edges", "clock"), func() {
	DescribeTable("delivers and acks a slow source's tuples while the manual clock stands still",
		func(conf dsl.Conf) {
			// Each Next waits for the spec to hand it a value, as a queue
			// consumer does; nothing moves the clock.
			values := make(chan Num)
			var closeOnce sync.Once
			closeValues := func() { closeOnce.Do(func() { close(values) }) }
			var calls, acked atomic.Int32
			got := new(sheltertest.Recorder[Num])
			b := dsl.New("slow-source-still-clock", conf)
			spout := b.Spout("spout", dsl.Reliable(func() (int, Num, bool) {
				calls.Add(1)
				v, ok := <-values
				return v.N, v, ok
			}, func(int) { acked.Add(1) }, func(int) {}))
			b.Anchored(spout, b.Bolt("sink", got.Bolt()), dsl.Shuffle[Num]())
			r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())
			DeferCleanup(closeValues)

			for n := 1; n <= 4; n++ {
				Eventually(calls.Load).Should(Equal(int32(n)), "Next %d waits for data", n)
				values <- Num{N: n}
				Eventually(got.Len).Should(Equal(n), "tuple %d is delivered while Next %d waits", n, n+1)
			}
			// Acks reach the spout between its Next calls: once Next says the
			// source is empty, every one is served (and whether one came in
			// before a Next began is a race no spec should depend on).
			closeValues()
			Eventually(acked.Load).Should(Equal(int32(4)), "every message is acked")
			Stop(r)
		},
		Entry("with the default flush interval", nil),
		// No flush beat comes during the spec: a source counts as slow until a
		// beat shows it is not, so even its first tuple leaves at once.
		Entry("with a flush interval longer than the spec", dsl.Conf{dsl.BatchFlushInterval: time.Hour}),
	)

	It("advances an hour in one step per timer, not per period, with every beat still counted", func() {
		clk, trace := NewManualClock(), NewTrace()
		src := sheltertest.NewSource(Num{N: 1})
		var ticks atomic.Int32
		held := make(chan struct{}, 1)
		b := dsl.New("long-advance", nil)
		spout := b.Spout("spout", src.Spout())
		hold := b.Bolt("hold", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return &tickCounter{ticks: &ticks, held: held} // never acks: only expiry ends the tree
		}), dsl.WithConf(dsl.Conf{dsl.TickFrequency: time.Millisecond}))
		b.Anchored(spout, hold, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option(), trace.Option())
		Eventually(held).Should(Receive())
		Eventually(func() int { return trace.Count(FromComponent("__acker"), KindIs("AckerStep")) }).Should(Equal(2), "Track and Anchor applied")
		Expect(ticks.Load()).To(BeZero(), "no tick before the clock moves")

		// 3.6 million tick periods and 240 acker rotations pass in one Advance.
		// A task that could not keep up with a real ticker would get one tick
		// for all of them; so does the bolt here, and Advance does the work of
		// one firing per timer. The acker still counts every rotation it
		// missed: the tree expires.
		clk.Advance(time.Hour)
		Eventually(func() []int { return src.Nacked() }).Should(Equal([]int{1}), "the held tree timed out")
		Eventually(ticks.Load).Should(Equal(int32(1)))
		Consistently(ticks.Load).Should(Equal(int32(1)), "one tick tuple for the hour")
		Expect(clk.Now()).To(Equal(NewManualClock().Now().Add(time.Hour)))
		Stop(r)
	})
})

// tickCounter holds its inputs (never acks them) and counts its tick tuples.
type tickCounter struct {
	ticks *atomic.Int32
	held  chan<- struct{}
}

func (t *tickCounter) Execute(Num, dsl.Tuple, dsl.Collector) error {
	t.held <- struct{}{}
	return nil
}

func (t *tickCounter) Tick(dsl.Tick, dsl.Collector) error {
	t.ticks.Add(1)
	return nil
}
