package specs_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The edges real components reach (issue 11): every message gets exactly one
// outcome whatever panics where, a Stop that always returns, and a topology that
// stays live under slow sources and slow ticks.

var _ = Describe("Edges: one outcome for every message", Label("edges"), func() {
	It("nacks a reliable spout's message whose grouping key panics, and the spout goes on", Label("grouping-fields"), func() {
		src := sheltertest.NewSource(KeyedNum{Key: "a", N: 1}, KeyedNum{Key: "boom", N: 2}, KeyedNum{Key: "c", N: 3})
		got := new(sheltertest.Recorder[KeyedNum])
		b := dsl.New("key-panics", nil)
		spout := b.Spout("spout", src.Spout())
		sink := b.Bolt("sink", got.Bolt(), dsl.Parallelism(2)) // two tasks, so the key is computed
		b.Anchored(spout, sink, keyOrPanic())
		logs, observed := ObserveLogs()
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option(), logs)

		Eventually(src.Outcomes).Should(HaveLen(3))
		Expect(src.Verify()).To(Succeed())
		Expect(src.Acked()).To(ConsistOf(1, 3))
		Expect(src.Nacked()).To(Equal([]int{2}))
		Expect(r.Stats().Restarts).To(BeZero(), "a bad tuple is not a broken task")
		Expect(observed.FilterMessage("spout could not emit; the message fails").Len()).To(Equal(1))
		Stop(r)
		Expect(src.Verify()).To(Succeed(), "and nothing more after the stop")
	})

	It("drops an unreliable spout's tuple whose grouping key panics, logs it, and goes on", Label("grouping-fields"), func() {
		got := new(sheltertest.Recorder[KeyedNum])
		var n atomic.Int32
		b := dsl.New("key-panics-unreliable", nil)
		spout := b.Spout("spout", dsl.Unreliable(func() (KeyedNum, bool) {
			i := n.Add(1)
			if i > 3 {
				return KeyedNum{}, false
			}
			return KeyedNum{Key: map[int32]string{1: "a", 2: "boom", 3: "c"}[i], N: int(i)}, true
		}))
		sink := b.Bolt("sink", got.Bolt(), dsl.Parallelism(2))
		b.Anchored(spout, sink, keyOrPanic())
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())
		Eventually(got.Len).Should(Equal(2))
		Consistently(got.Len).Should(Equal(2))
		Expect(r.Stats().Restarts).To(BeZero())
	})

	DescribeTable("fails a bolt's input whose emit's grouping key panics, and the bolt goes on",
		func(connect func(b *dsl.Builder, from, to string, g dsl.Grouping)) {
			src := sheltertest.NewSource(KeyedNum{Key: "a", N: 1}, KeyedNum{Key: "boom", N: 2}, KeyedNum{Key: "c", N: 3})
			got := new(sheltertest.Recorder[KeyedNum])
			b := dsl.New("bolt-key-panics", nil)
			relay := b.Bolt("relay", dsl.AutoAck(func(k KeyedNum, out dsl.Emitter) error {
				out.Emit(k)
				return nil
			}))
			connect(b, b.Spout("spout", src.Spout()), relay, dsl.Shuffle[KeyedNum]())
			b.Anchored(relay, b.Bolt("sink", got.Bolt(), dsl.Parallelism(2)), keyOrPanic())
			logs, observed := ObserveLogs()
			r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option(), logs)

			Eventually(src.Outcomes).Should(HaveLen(3))
			Eventually(got.Len).Should(Equal(2))
			Expect(got.All()).To(ConsistOf(KeyedNum{Key: "a", N: 1}, KeyedNum{Key: "c", N: 3}))
			Expect(src.Nacked()).To(Equal([]int{2}), "the relay failed the input whose emit panicked")
			Expect(src.Acked()).To(ConsistOf(1, 3))
			Expect(r.Stats().Restarts).To(BeZero(), "a bad key is not a broken task")
			Expect(observed.FilterMessage("bolt failed its input").Len()).To(Equal(1))
			Stop(r)
			Expect(src.Verify()).To(Succeed())
		},
		// The relay's emits join its input's tree: the router's general path.
		Entry("when its emits are anchored", (*dsl.Builder).Anchored),
		// Its input is tracked (a spout's tracked emit is, on every edge),
		// its emits are not: the short path (routing.Router.Unicast).
		Entry("when its emits are unanchored", (*dsl.Builder).Unanchored),
	)

	DescribeTable("gives every id exactly one outcome when a source callback panics",
		func(ackPanics, nackPanics int, fail bool) {
			// The source's Ack or Nack panics for one id, after the outcome
			// is recorded.
			src := sheltertest.NewSource(gpNums(1, 20)...).With(
				sheltertest.OnAck(func(id int) error {
					if id == ackPanics {
						panic("ack callback broke")
					}
					return nil
				}),
				sheltertest.OnNack(func(id int) error {
					if id == nackPanics {
						panic("nack callback broke")
					}
					return nil
				}))
			b := dsl.New("callback-panics", dsl.Conf{dsl.MaxSpoutPending: 4})
			spout := b.Spout("spout", src.Spout())
			sink := b.Bolt("sink", dsl.AutoAck(func(in Num, _ dsl.Emitter) error {
				if fail {
					return errors.New("rejected")
				}
				return nil
			}))
			b.Anchored(spout, sink, dsl.Shuffle[Num]())
			r := sheltertest.Start(GinkgoTB(), Build(b), Restarts(time.Millisecond, time.Millisecond, 10))

			Eventually(src.Outcomes).Should(HaveLen(20))
			Expect(src.Verify()).To(Succeed())
			Eventually(func() int { return r.Stats().Restarts }).Should(BeNumerically(">=", 1), "a callback that panics fails its task")
			Stop(r)
			Expect(src.Verify()).To(Succeed())
		},
		Entry("Ack panics", 3, 0, false),
		Entry("Nack panics", 0, 3, true),
	)

	It("tracks a reliable spout's tuples on an unanchored edge too: a failing bolt nacks them", Label("anchoring"), func() {
		src := sheltertest.NewSource(Num{N: 1}, Num{N: 2})
		b := dsl.New("unanchored-reliable", nil)
		spout := b.Spout("spout", src.Spout())
		reject := b.Bolt("reject", dsl.AutoAck(func(in Num, _ dsl.Emitter) error {
			if in.N == 2 {
				return errors.New("rejected")
			}
			return nil
		}))
		b.Unanchored(spout, reject, dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())

		Eventually(src.Outcomes).Should(HaveLen(2))
		Expect(src.Acked()).To(Equal([]int{1}))
		Expect(src.Nacked()).To(Equal([]int{2}), "Storm and FsShelter track a spout emit with an id on every edge")
	})

	// Issue 25 changed this expectation: the edge INTO cook is anchored, so
	// its emits join the input's tree on every edge out of it, unanchored
	// ones too (the routing document's rule; it used to be the edge out).
	It("joins a bolt's emit on an unanchored edge out to its input's tree when the input's edge is anchored", Label("anchoring"), func() {
		src := sheltertest.NewSource(Num{N: 1})
		b := dsl.New("unanchored-bolt", nil)
		b.Streams(Cooked{})
		spout := b.Spout("spout", src.Spout())
		cook := b.Bolt("cook", dsl.AutoAck(func(in Num, out dsl.Emitter) error { out.Emit(Cooked{N: in.N}); return nil }))
		reject := b.Bolt("reject", dsl.AutoAck(func(Cooked, dsl.Emitter) error { return errors.New("rejected") }))
		b.Anchored(spout, cook, dsl.Shuffle[Num]())
		b.Unanchored(cook, reject, dsl.Shuffle[Cooked]())
		sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())
		Eventually(src.Nacked).Should(Equal([]int{1}))
		Expect(src.Acked()).To(BeEmpty())
	})
})

var _ = Describe("Edges: bad numbers fail at Build", Label("edges", "dsl-validation"), func() {
	DescribeTable("names the key and the value",
		func(key string, value any, message string) {
			b := dsl.New("absurd", dsl.Conf{key: value})
			spout := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout())
			b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
			verr := validationError(b)
			Expect(verr.Problems).To(ContainElement(ContainSubstring(message)))
		},
		Entry("a receive buffer of 2^62", dsl.ReceiveBufferSize, int64(1)<<62, `conf "topology.executor.receive.buffer.size": 4611686018427387904 is above the maximum 1048576`),
		Entry("a batch size of 2^40", dsl.BatchSize, int64(1)<<40, `conf "goshelter.batch.size": 1099511627776 is above the maximum 65536`),
		Entry("a max spout pending above 2^31-1", dsl.MaxSpoutPending, int64(1)<<40, `conf "topology.max.spout.pending": 1099511627776 is above the maximum 2147483647`),
		Entry("a million ackers", dsl.AckerExecutors, 1_000_000, `conf "topology.acker.executors": 1000000 is above the maximum 1024`),
		Entry("a message timeout of 2^62 seconds", dsl.MessageTimeout, int64(1)<<62, `conf "topology.message.timeout.secs": 4611686018427387904 is above the maximum`),
		Entry("a negative tick frequency", dsl.TickFrequency, -1, `conf "topology.tick.tuple.freq.secs": -1 is below the minimum 0`),
		Entry("a NaN timeout", dsl.MessageTimeout, math.NaN(), `conf "topology.message.timeout.secs": NaN is not a number of seconds`),
		Entry("a negative flush interval", dsl.BatchFlushInterval, -1, `conf "topology.batch.flush.interval.millis": -1 is below the minimum 0`),
	)

	It("rejects a parallelism that would spawn millions of tasks", func() {
		b := dsl.New("absurd", nil)
		spout := b.Spout("numbers", sheltertest.NewSource(Num{N: 1}).Spout(), dsl.Parallelism(1<<30))
		b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		Expect(validationError(b).Problems).To(ContainElement(`component "numbers" has parallelism 1073741824; it must be at most 4096`))
	})

	It("costs memory only for what is pending with max spout pending 2^31-1 (\"unlimited\")", func() {
		src := sheltertest.NewSource(gpNums(1, 100)...)
		b := dsl.New("unlimited", dsl.Conf{dsl.MaxSpoutPending: math.MaxInt32})
		spout := b.Spout("spout", src.Spout(), dsl.Parallelism(4))
		b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := sheltertest.Start(GinkgoTB(), Build(b))
		Eventually(func() []int { return src.Acked() }).Should(HaveLen(100))
		runtime.ReadMemStats(&after)
		Expect(after.HeapAlloc).To(BeNumerically("<", before.HeapAlloc+64<<20), "four spout tasks with an 'unlimited' max pending")
		Stop(r)
	})
})

var _ = Describe("Edges: live under slow sources and slow ticks", Label("edges", "batching"), func() {
	// A source that waits for data: each Next blocks until the spec hands it a
	// value (or the feed closes), as a queue consumer does.
	type feed struct {
		values chan Num
		calls  atomic.Int32
	}
	newFeed := func() *feed { return &feed{values: make(chan Num)} }
	// release ends the source's wait; registered after sheltertest.Start, it
	// runs before Start's stop does (cleanups run last registered first).
	release := func(f *feed) { DeferCleanup(func() { close(f.values) }) }

	It("delivers a slow source's tuple once the flush interval has passed, not after a batch of Next calls", func() {
		f := newFeed()
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("slow-source", dsl.Conf{dsl.BatchFlushInterval: 5})
		spout := b.Spout("spout", dsl.Unreliable(func() (Num, bool) {
			f.calls.Add(1)
			v, ok := <-f.values
			return v, ok
		}))
		b.Anchored(spout, b.Bolt("sink", got.Bolt()), dsl.Shuffle[Num]())
		clk := NewManualClock()
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		release(f)

		for n := 1; n <= 3; n++ {
			Eventually(f.calls.Load).Should(Equal(int32(n)), "Next %d is waiting for data", n)
			clk.Advance(5 * time.Millisecond) // the source took longer than the flush interval
			f.values <- Num{N: n}
			Eventually(got.Len).Should(Equal(n), "tuple %d is delivered while the next Next waits", n)
		}
	})

	It("serves acks between slow Next calls", func() {
		f := newFeed()
		var acked atomic.Int32
		b := dsl.New("slow-source-acks", dsl.Conf{dsl.BatchFlushInterval: 5})
		spout := b.Spout("spout", dsl.Reliable(func() (int, Num, bool) {
			f.calls.Add(1)
			v, ok := <-f.values
			return v.N, v, ok
		}, func(int) { acked.Add(1) }, func(int) {}))
		b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		clk := NewManualClock()
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		release(f)

		for n := 1; n <= 6; n++ {
			Eventually(f.calls.Load).Should(Equal(int32(n)), "Next %d is waiting for data", n)
			clk.Advance(5 * time.Millisecond)
			f.values <- Num{N: n}
			if n > 2 {
				// Next n answered, its burst ended, and the spout served its
				// mailbox before asking again. Message n-1's ack may still be on
				// its way back when Next n returns (nothing orders the two), so
				// it may wait out one more Next; message n-2's has been in the
				// mailbox for a whole Next, and is served. A spout that serves
				// acks only when its source runs dry would serve none here.
				Eventually(acked.Load).Should(BeNumerically(">=", int32(n-2)), "the ack of message %d", n-2)
			}
		}
	})

	It("keeps executing inputs when tick work takes longer than the tick period", Label("tick"), func() {
		clk := NewManualClock()
		var ticks atomic.Int32
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("slow-ticks", dsl.Conf{dsl.TickFrequency: 10 * time.Millisecond})
		n := 0 // touched only by the spout's task
		spout := b.Spout("spout", dsl.Unreliable(func() (Num, bool) {
			if ticks.Load() == 0 || n == 500 {
				return Num{}, false // data starts once the ticks do
			}
			n++
			return Num{N: n}, true
		}))
		sink := b.Bolt("sink", got.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return &slowTicker{work: func() {
				ticks.Add(1)
				clk.Advance(15 * time.Millisecond) // a tick's work outlasts the period
			}}
		}))
		b.Anchored(spout, sink, dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		clk.Advance(10 * time.Millisecond)

		Eventually(got.Len).Should(Equal(500), "inputs keep flowing between ticks")
		Expect(ticks.Load()).To(BeNumerically(">", 1))
	})
})

// slowTicker acks inputs and does work on every tick.
type slowTicker struct{ work func() }

func (s *slowTicker) Execute(_ Num, input dsl.Tuple, c dsl.Collector) error {
	c.Ack(input)
	return nil
}

func (s *slowTicker) Tick(dsl.Tick, dsl.Collector) error {
	s.work()
	return nil
}

// gate blocks callers until it is opened. A spec opens it in a cleanup it
// registers after sheltertest.Start, so that nothing stays blocked when Start's
// cleanup stops the topology (cleanups run last registered first).
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) wait() { <-g.ch }
func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

var _ = Describe("Edges: Stop always returns", Label("edges", "lifecycle"), func() {
	// stopWithin calls r.Stop(ctx) on another goroutine and returns its result
	// channel, so a spec can bound how long it may take.
	stopAsync := func(r *supervision.Running, ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() { done <- r.Stop(ctx) }()
		return done
	}

	It("returns by ctx's deadline while a restarted incarnation is stuck activating", func() {
		stuck := newGate()
		var spouts, bolts, activations atomic.Int32
		b := dsl.New("stuck-activation", nil)
		spout := b.Spout("spout", dsl.UnreliableFrom(func(dsl.TaskInfo) func() (Num, bool) {
			if spouts.Add(1) == 1 {
				return func() (Num, bool) { panic("first incarnation breaks") }
			}
			return func() (Num, bool) { return Num{}, false }
		}))
		sink := b.Bolt("sink", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Num] {
			incarnation := bolts.Add(1)
			return sheltertest.HandlerFunc[Num](func(in Num, _ dsl.Emitter) error {
				if in.N == -1 && incarnation > 1 {
					activations.Add(1)
					stuck.wait() // blocks on its activation tuple after the restart
				}
				return nil
			})
		}), dsl.LifecycleTuples(Num{N: -1}, nil))
		b.Anchored(spout, sink, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), Restarts(time.Millisecond, time.Millisecond, 5), supervision.WithDrainTimeout(time.Hour))
		DeferCleanup(stuck.open)
		Eventually(activations.Load).Should(Equal(int32(1)), "the restarted bolt is stuck activating")

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		var err error
		Eventually(stopAsync(r, ctx)).WithTimeout(Scaled(2 * time.Second)).Should(Receive(&err))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(time.Since(start)).To(BeNumerically("<", Scaled(time.Second)))
		stuck.open()
		Eventually(r.Done()).WithTimeout(Scaled(5*time.Second)).Should(BeClosed(), "the stop goes on and ends once the bolt lets go")
	})

	It("returns after the drain timeout and a bounded grace when a bolt never returns, naming it", func() {
		blocked := newGate()
		b := dsl.New("stuck-bolt", nil)
		spout := b.Spout("spout", CountTo(1))
		b.Anchored(spout, b.Bolt("wedged", dsl.AutoAck(func(Num, dsl.Emitter) error { blocked.wait(); return nil })), dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithDrainTimeout(100*time.Millisecond))
		DeferCleanup(blocked.open)
		Eventually(func() int64 { return r.Stats().Components["wedged"].Executed + int64(r.Stats().InFlight) }).Should(BeNumerically(">", 0))

		var err error
		Eventually(stopAsync(r, context.Background())).WithTimeout(Scaled(10 * time.Second)).Should(Receive(&err))
		Expect(err).To(HaveOccurred())
		var te *supervision.TaskError
		Expect(errors.As(err, &te)).To(BeTrue(), "%v", err)
		Expect(te.Component).To(Equal("wedged"))
		Expect(err.Error()).To(ContainSubstring("still running"))
		Expect(err).To(MatchError(supervision.ErrStuck), "a stuck task is testable with errors.Is")
		Expect(r.Done()).To(BeClosed())
	})

	It("stops asynchronously when Stop is called from inside a bolt", func() {
		var r *supervision.Running
		var ready sync.WaitGroup
		ready.Add(1)
		var got atomic.Value
		b := dsl.New("stop-inside", nil)
		spout := b.Spout("spout", CountTo(1))
		b.Anchored(spout, b.Bolt("quitter", dsl.AutoAck(func(Num, dsl.Emitter) error {
			ready.Wait()
			got.Store(r.Stop(context.Background()))
			return nil
		})), dsl.Shuffle[Num]())
		r = sheltertest.Start(GinkgoTB(), Build(b))
		ready.Done()
		Eventually(r.Done()).WithTimeout(Scaled(5 * time.Second)).Should(BeClosed())
		Expect(got.Load()).To(MatchError(supervision.ErrStopping))
		Expect(r.Wait()).To(Succeed())
	})

	It("stops asynchronously when Stop is called from an event callback, and survives a panicking callback", func() {
		var r *supervision.Running
		var stopErr atomic.Value
		started := make(chan struct{})
		r = sheltertest.Start(GinkgoTB(), Build(idleBuilder()), supervision.WithEvents(func(e supervision.Event) {
			switch e.Kind {
			case supervision.Started:
				<-started
				stopErr.Store(r.Stop(context.Background()))
			case supervision.Stopped:
				panic("a callback that panics")
			}
		}))
		close(started)
		Eventually(r.Done()).WithTimeout(Scaled(5 * time.Second)).Should(BeClosed())
		Expect(stopErr.Load()).To(MatchError(supervision.ErrStopping))
	})

	It("stops when Run's ctx is cancelled, as exec.CommandContext does", func() {
		ctx, cancel := context.WithCancel(context.Background())
		r, err := supervision.Run(ctx, Build(idleBuilder()), supervision.WithLogger(ginkgoLogger()))
		Expect(err).NotTo(HaveOccurred())
		cancel()
		Eventually(r.Done()).WithTimeout(Scaled(5 * time.Second)).Should(BeClosed())
		Expect(r.Wait()).To(MatchError(context.Canceled))
		Expect(r.Stop(context.Background())).To(MatchError(supervision.ErrStopped))
	})
})

// idleBuilder is a spout with nothing to say and a sink.
func idleBuilder() *dsl.Builder {
	b := dsl.New("idle", nil)
	spout := b.Spout("spout", CountTo(0))
	b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
	return b
}

var _ = Describe("Edges: a failure drains before the restart (scenario F, better than the reference)", Label("edges", "scenario-F"), func() {
	It("stops the spouts, lets the trees in flight finish during the back-off, then nacks once what is still open and restarts", func() {
		const base = 10 * time.Millisecond
		src := sheltertest.NewSource(Num{N: 1}, Num{N: 2})
		hold := newHolder()
		alarm := &failSwitch{}
		b := dsl.New("drain-on-failure", dsl.Conf{dsl.MessageTimeout: time.Hour})
		b.Streams(Beat{})
		spout := b.Spout("source", src.Spout())
		held := b.Bolt("hold", dsl.Manual(hold.handler), dsl.Parallelism(2)) // a message each
		b.Anchored(spout, held, dsl.Shuffle[Num]())
		beats := b.Spout("alarm", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Beat, bool) {
			alarm.set(info)
			return func() (Beat, bool) { return Beat{}, false }
		}))
		b.Unanchored(beats, b.Bolt("sink", dsl.AutoAck(func(Beat, dsl.Emitter) error { return nil })), dsl.Shuffle[Beat]())
		topo := Build(b)
		clk, events, trace := NewManualClock(), newEventLog(), NewTrace()
		sheltertest.Start(GinkgoTB(), topo, clk.Option(), trace.Option(), supervision.WithEvents(events.record),
			supervision.WithRestarts(supervision.Restarts{Base: base, Cap: base, StablePeriod: time.Hour}))
		DeferCleanup(hold.releaseAll)
		events.next(supervision.Started)
		Eventually(hold.count).Should(Equal(2), "both messages are held in flight")

		By("a task fails: the spouts stop emitting, the in-flight trees stay open")
		Expect(alarm.failAll(errors.New("alarm"))).To(Equal(1))
		events.next(supervision.Failed)
		restarting := events.next(supervision.Restarting)
		Eventually(func() int { return trace.Count(FromComponent("source"), KindIs("Deactivate")) }).Should(Equal(1))
		Expect(src.Nacked()).To(BeEmpty(), "nothing is nacked at the failure")

		By("during the back-off a held tree completes, and the spout hears its ack")
		hold.release(taskIDs(topo, "hold")[0])
		Eventually(func() []int { return src.Acked() }).Should(HaveLen(1))
		Consistently(events.ch).ShouldNot(Receive(), "no restart before the back-off ends")

		By("when the back-off ends, what is still open is nacked once, then the new incarnation starts")
		clk.Advance(restarting.Delay)
		Expect(events.next(supervision.Started).Incarnation).To(Equal(2))
		Expect(src.Acked()).To(HaveLen(1))
		Expect(src.Nacked()).To(HaveLen(1))
		Expect(append(src.Acked(), src.Nacked()...)).To(ConsistOf(1, 2))
		Expect(src.Verify()).To(Succeed())

		By("in that order: the spout deactivated, the Ack, the stop that abandons (nacks) the rest, the new activation")
		source := trace.Steps(FromComponent("source"))
		Expect(source).To(ContainElements("source <- Deactivate", "source <- Ack", "source <- Stop"))
		Expect(indexOf(source, "source <- Deactivate")).To(BeNumerically("<", indexOf(source, "source <- Ack")))
		Expect(indexOf(source, "source <- Ack")).To(BeNumerically("<", indexOf(source, "source <- Stop")))
		Expect(source[indexOf(source, "source <- Stop")+1]).To(Equal("source <- Activate"), "the next incarnation's")
	})
})

// indexOf returns the position of the first s in steps, or -1.
func indexOf(steps []string, s string) int {
	for i, x := range steps {
		if x == s {
			return i
		}
	}
	return -1
}

var _ = Describe("Edges: the pins", Label("edges"), func() {
	It("drains at most the message timeout by default", Label("lifecycle"), func() {
		hold := newHolder()
		src := sheltertest.NewSource(Num{N: 1})
		b := dsl.New("drain-default", dsl.Conf{dsl.MessageTimeout: 300 * time.Millisecond})
		spout := b.Spout("source", src.Spout())
		b.Anchored(spout, b.Bolt("hold", dsl.Manual(hold.handler)), dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b))
		DeferCleanup(hold.releaseAll)
		Eventually(hold.count).Should(Equal(1))
		start := time.Now()
		Stop(r)
		Expect(time.Since(start)).To(BeNumerically(">=", 300*time.Millisecond), "the drain waited for the tree in flight")
		Expect(time.Since(start)).To(BeNumerically("<", Scaled(5*time.Second)), "and no longer than the message timeout")
		Expect(src.Nacked()).To(Equal([]int{1}))
	})

	It("stops spouts, then bolts, then ackers, then the system task", Label("lifecycle"), func() {
		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), Build(idleBuilder()), trace.Option(), NewManualClock().Option())
		Stop(r)
		var order []string
		for _, e := range trace.Events(KindIs("Stop")) {
			if n := len(order); n == 0 || order[n-1] != e.Component {
				order = append(order, e.Component)
			}
		}
		Expect(order).To(Equal([]string{"spout", "sink", "__acker", "__system"}))
	})

	It("sends the acker's rotation ticks to the spouts too, every half message timeout", Label("tick"), func() {
		clk, trace := NewManualClock(), NewTrace()
		b := dsl.New("rotation", dsl.Conf{dsl.MessageTimeout: 10, dsl.AckerTasks: 1})
		spout := b.Spout("spout", CountTo(0), dsl.Parallelism(2))
		b.Anchored(spout, b.Bolt("sink", relayNum()), dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option(), trace.Option())
		clk.Advance(5 * time.Second)
		Eventually(func() int { return trace.Count(FromComponent("spout"), KindIs("Tick")) }).Should(Equal(2))
		Eventually(func() int { return trace.Count(FromComponent("__acker"), KindIs("Tick")) }).Should(Equal(1))
	})

	It("leaves no goroutine behind, protoactor-go's included, over restarts under load", Label("lifecycle"), func() {
		for round := range 5 {
			sw := &failSwitch{}
			var n atomic.Int64
			b := dsl.New("leaks", dsl.Conf{dsl.MaxSpoutPending: 64})
			spout := b.Spout("beats", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Beat, bool) {
				sw.set(info)
				return func() (Beat, bool) { return Beat{N: int(n.Add(1))}, true }
			}), dsl.Parallelism(2))
			b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(Beat, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Shuffle[Beat]())
			r := sheltertest.Start(GinkgoTB(), Build(b), Restarts(time.Millisecond, time.Millisecond, 10))
			for restarts := 1; restarts <= 2; restarts++ {
				Eventually(sw.count).Should(BeNumerically(">", 0))
				sw.failAll(errors.New("restart under load"))
				Eventually(func() int { return r.Stats().Restarts }).Should(Equal(restarts), "round %d", round)
			}
			Stop(r)
			Expect(goleak.Find(leakOptions()...)).To(Succeed(), "round %d", round)
		}
	})
})

// keyOrPanic groups KeyedNum by its Key, and its key function panics for the
// key "boom": a grouping key that is user code gone wrong.
func keyOrPanic() dsl.Grouping {
	return dsl.Fields(func(k KeyedNum) string {
		if k.Key == "boom" {
			panic("no key for boom")
		}
		return k.Key
	}, "Key")
}
