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

// Tick is the single stream of the supervision specs.
type Beat struct{ N int }

// eventLog records lifecycle events in order; safe for the supervisor's goroutine.
type eventLog struct {
	mu     sync.Mutex
	events []supervision.Event
	ch     chan supervision.Event
}

func newEventLog() *eventLog { return &eventLog{ch: make(chan supervision.Event, 256)} }

func (l *eventLog) record(e supervision.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	l.ch <- e
}

// next waits for the next event of kind, skipping none: it fails on any other kind.
func (l *eventLog) next(kind supervision.EventKind) supervision.Event {
	GinkgoHelper()
	var e supervision.Event
	Eventually(l.ch).WithTimeout(Scaled(5 * time.Second)).Should(Receive(&e))
	Expect(e.Kind).To(Equal(kind), "event %v", e)
	return e
}

// errs returns the errors of the events recorded so far, in order.
func (l *eventLog) errs() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []error
	for _, e := range l.events {
		if e.Err != nil {
			out = append(out, e.Err)
		}
	}
	return out
}

func (l *eventLog) kinds() []supervision.EventKind {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []supervision.EventKind
	for _, e := range l.events {
		out = append(out, e.Kind)
	}
	return out
}

// failSwitch hands out each spout task's dsl.TaskInfo.Fail, so a spec can fail
// a task of the current incarnation at will. Tasks start concurrently, so fails
// are kept by task id; a restarted incarnation's tasks replace them.
type failSwitch struct {
	mu    sync.Mutex
	fails map[int]func(error)
}

func (f *failSwitch) set(info dsl.TaskInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails == nil {
		f.fails = map[int]func(error){}
	}
	f.fails[info.Task] = info.Fail
}

// count returns how many tasks it can fail.
func (f *failSwitch) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.fails)
}

// failAll fails every task it knows of and reports how many.
func (f *failSwitch) failAll(err error) int {
	f.mu.Lock()
	fails := f.fails
	f.fails = nil
	f.mu.Unlock()
	for _, fail := range fails {
		fail(err)
	}
	return len(fails)
}

// ready returns how many tasks of the current incarnation have registered.
func (f *failSwitch) ready() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.fails)
}

// idleTopology has a spout with nothing to emit whose tasks register with sw.
func idleTopology(sw *failSwitch, parallelism int) *dsl.Topology {
	b := dsl.New("restartable", nil)
	spout := b.Spout("beats", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Beat, bool) {
		sw.set(info)
		return func() (Beat, bool) { return Beat{}, false }
	}), dsl.Parallelism(parallelism))
	sink := b.Bolt("sink", dsl.AutoAck(func(Beat, dsl.Emitter) error { return nil }))
	b.Anchored(spout, sink, dsl.Shuffle[Beat]())
	topo, err := b.Build()
	Expect(err).NotTo(HaveOccurred())
	return topo
}

var _ = Describe("Scenario F: the topology restarts with exponential back-off", Label("scenario-F"), func() {
	var (
		manual *sheltertest.Clock
		events *eventLog
		sw     *failSwitch
	)
	const base = 10 * time.Millisecond

	BeforeEach(func() {
		manual = sheltertest.NewClock(time.Unix(0, 0))
		events = newEventLog()
		sw = &failSwitch{}
	})

	// run starts the idle topology with back-off base..8*base and the given
	// restart limit and stable period (zero: the defaults, 5 and 1 minute).
	run := func(parallelism, max int, stable time.Duration, opts ...supervision.Option) *supervision.Running {
		GinkgoHelper()
		opts = append([]supervision.Option{manual.Option(), supervision.WithEvents(events.record),
			supervision.WithRestarts(supervision.Restarts{Base: base, Cap: 8 * base, Max: max, StablePeriod: stable})}, opts...)
		r := sheltertest.Start(GinkgoTB(), idleTopology(sw, parallelism), opts...)
		events.next(supervision.Started)
		Eventually(sw.ready).Should(Equal(parallelism))
		return r
	}

	// crash fails the current incarnation and returns the restart's announced delay.
	crash := func() supervision.Event {
		GinkgoHelper()
		Expect(sw.failAll(errors.New("boom"))).To(BeNumerically(">", 0))
		events.next(supervision.Failed)
		return events.next(supervision.Restarting)
	}

	It("waits base*2^n, capped, before each restart and gives up after the maximum", func() {
		r := run(1, 0, 0) // the default limit: 5 restarts
		want := []time.Duration{2 * base, 4 * base, 8 * base, 8 * base, 8 * base}
		for i, delay := range want {
			e := crash()
			Expect(e.Attempt).To(Equal(i + 1))
			Expect(e.Delay).To(Equal(delay), "restart %d", i+1)

			manual.Advance(delay - time.Nanosecond)
			Consistently(events.ch).WithTimeout(20 * time.Millisecond).ShouldNot(Receive())
			manual.Advance(time.Nanosecond)
			Expect(events.next(supervision.Started).Incarnation).To(Equal(i + 2))
			Eventually(sw.ready).Should(Equal(1))
		}
		sw.failAll(errors.New("last straw"))
		events.next(supervision.Failed)
		gaveUp := events.next(supervision.GaveUp)

		err := r.Wait()
		Expect(err).To(Equal(gaveUp.Err))
		Expect(errors.Is(err, supervision.ErrGaveUp)).To(BeTrue())
		var te *supervision.TaskError
		Expect(errors.As(err, &te)).To(BeTrue())
		Expect(te.Component).To(Equal("beats"))
		Expect(te.Err).To(MatchError("last straw"))
		Expect(r.Stop(context.Background())).To(MatchError(supervision.ErrStopped))
	})

	It("waits by the documented defaults: base 1 s (first wait 2 s), cap 30 s", func() {
		sheltertest.Start(GinkgoTB(), idleTopology(sw, 1), manual.Option(),
			supervision.WithEvents(events.record), supervision.WithRestarts(supervision.Restarts{Max: 6}))
		events.next(supervision.Started)
		var got []time.Duration
		for range 6 {
			Eventually(sw.ready).Should(Equal(1))
			e := crash()
			got = append(got, e.Delay)
			manual.Advance(e.Delay)
			events.next(supervision.Started)
		}
		Expect(got).To(Equal([]time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}))
	})

	It("resets the attempt count only after a stable period", func() {
		const stable = time.Second
		r := run(1, 10, stable)
		Expect(crash().Attempt).To(Equal(1))
		manual.Advance(2 * base)
		events.next(supervision.Started)
		Eventually(sw.ready).Should(Equal(1))

		By("failing again before the stable period: the count goes on")
		Expect(crash().Attempt).To(Equal(2))
		manual.Advance(4 * base)
		events.next(supervision.Started)
		Eventually(sw.ready).Should(Equal(1))

		By("running cleanly for the stable period: the count starts over")
		manual.Advance(stable)
		Eventually(func() int { return crashAttempt(sw, events) }).Should(Equal(1))
		Expect(r.Stop(context.Background())).To(Succeed())
	})

	It("coalesces failures that arrive together into one restart", func() {
		r := run(3, 0, 0)
		Expect(sw.failAll(errors.New("all at once"))).To(Equal(3))
		events.next(supervision.Failed)
		Expect(events.next(supervision.Restarting).Attempt).To(Equal(1))
		Consistently(events.ch).WithTimeout(50 * time.Millisecond).ShouldNot(Receive())
		manual.Advance(2 * base)
		events.next(supervision.Started)
		Expect(r.Stats().Restarts).To(Equal(1))
		Expect(r.Stop(context.Background())).To(Succeed())
		Expect(events.kinds()).To(Equal([]supervision.EventKind{
			supervision.Started, supervision.Failed, supervision.Restarting, supervision.Started, supervision.Stopped}))
	})
})

// crashAttempt fails the current incarnation once it is up, restarts it and
// returns the attempt number the supervisor announced.
func crashAttempt(sw *failSwitch, events *eventLog) int {
	if sw.ready() == 0 {
		return -1
	}
	sw.failAll(errors.New("again"))
	events.next(supervision.Failed)
	return events.next(supervision.Restarting).Attempt
}

var _ = Describe("Nothing is lost across restarts", Label("scenario-F"), func() {

	It("processes every message of a replaying spout at least once while the spout keeps crashing", func() {
		const total = 3000
		// A queue that replays what was nacked, whose Next panics at every
		// 700th message it is about to hand out (that message stays first in
		// line for the next incarnation).
		var nexts atomic.Int64
		src := sheltertest.Generate(total, func(i int) Beat { return Beat{i + 1} }, sheltertest.Replay(-1),
			sheltertest.OnNext(func(int) error {
				if nexts.Add(1)%700 == 0 {
					panic("spout crash on purpose")
				}
				return nil
			}))
		b := dsl.New("at-least-once", dsl.Conf{dsl.MaxSpoutPending: 64})
		spout := b.Spout("queue", src.Spout())
		seen := new(sheltertest.Recorder[Beat])
		b.Anchored(spout, b.Bolt("work", seen.Bolt(), dsl.Parallelism(2)), dsl.Shuffle[Beat]())
		events := newEventLog()
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithEvents(events.record),
			Restarts(time.Millisecond, 4*time.Millisecond, 100))

		ctx, cancel := context.WithTimeout(context.Background(), Scaled(30*time.Second))
		defer cancel()
		Expect(src.WaitSettled(ctx)).To(Succeed(), "every message acked in the end")
		Expect(r.Stop(context.Background())).To(Succeed())
		Expect(r.Stats().Restarts).To(BeNumerically(">=", 3))
		got := map[Beat]bool{}
		for _, v := range seen.All() {
			got[v] = true
		}
		for id := 1; id <= total; id++ {
			Expect(got[Beat{id}]).To(BeTrue(), "message %d never reached the bolt", id)
		}
		Expect(r.Wait()).To(Succeed())
		Expect(src.Verify()).To(Succeed(), "one outcome per handout, across restarts")
	})
})

var _ = Describe("Run modes and the handle", Label("run-modes"), func() {

	It("fails fast without restarts: Wait returns the task's error", func() {
		sw := &failSwitch{}
		events := newEventLog()
		r := sheltertest.Start(GinkgoTB(), idleTopology(sw, 2),
			supervision.WithoutRestarts(), supervision.WithEvents(events.record))
		Eventually(sw.ready).Should(Equal(2))
		sw.failAll(errors.New("disk on fire"))

		err := r.Wait()
		var te *supervision.TaskError
		Expect(errors.As(err, &te)).To(BeTrue(), "%v", err)
		Expect(te.Component).To(Equal("beats"))
		Expect(te.Task).To(BeNumerically(">", 0))
		Expect(err).To(MatchError(ContainSubstring("disk on fire")))
		Expect(errors.Is(err, supervision.ErrGaveUp)).To(BeFalse())
		Expect(events.kinds()).To(Equal([]supervision.EventKind{supervision.Started, supervision.Failed, supervision.GaveUp}))
		Eventually(r.Done()).Should(BeClosed())
	})

	It("reports a spout panic with the component and task that failed", func() {
		b := dsl.New("panicky", nil)
		var calls atomic.Int64
		spout := b.Spout("bomb", dsl.Unreliable(func() (Beat, bool) {
			if calls.Add(1) == 3 {
				panic("kaboom")
			}
			return Beat{}, true
		}))
		sink := b.Bolt("sink", dsl.AutoAck(func(Beat, dsl.Emitter) error { return nil }))
		b.Anchored(spout, sink, dsl.Shuffle[Beat]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithoutRestarts())
		err := r.Wait()
		var te *supervision.TaskError
		Expect(errors.As(err, &te)).To(BeTrue(), "%v", err)
		Expect(te.Component).To(Equal("bomb"))
		Expect(te.Err).To(MatchError("panic: kaboom"))
		Expect(string(te.Stack)).To(ContainSubstring("specs_test"))
	})

	It("stops once: Stop drains, Wait returns nil, a second Stop says it is already stopped", func() {
		sw := &failSwitch{}
		events := newEventLog()
		r := sheltertest.Start(GinkgoTB(), idleTopology(sw, 1), supervision.WithEvents(events.record))
		Expect(r.Stop(context.Background())).To(Succeed())
		Expect(r.Wait()).To(Succeed())
		Expect(r.Stop(context.Background())).To(MatchError(supervision.ErrStopped))
		Expect(events.kinds()).To(Equal([]supervision.EventKind{supervision.Started, supervision.Stopped}))
	})

	It("refuses to start with a context that is already over", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := supervision.Run(ctx, idleTopology(&failSwitch{}, 1))
		Expect(err).To(MatchError(context.Canceled))
	})
})

// stopQuietly stops a topology a spec may have left running when it failed, so the
// suite's leak check reports the spec's own failure and not a cascade.
func stopQuietly(r *supervision.Running) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.Stop(ctx)
}
