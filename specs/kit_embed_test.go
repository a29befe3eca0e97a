package specs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 32, item 2: what the embedding checks of a user's program wrote by
// hand on the kit (exact outcome sets, ticks in recorders and adapters, a
// source per spout task, a quiet period, timestamps, a hold-all bolt), a
// leak check that works beside an embedded broker and says what leaked, and
// MaxOutstanding per task as documented.

// runKit runs b with a short drain (held inputs must not keep the stop
// waiting) and a logger that goes to ginkgo, stopping it at the spec's end.
func runKit(b *dsl.Builder, opts ...supervision.Option) *supervision.Running {
	GinkgoHelper()
	all := append([]supervision.Option{supervision.WithLogger(ginkgoLogger()), supervision.WithDrainTimeout(10 * time.Millisecond)}, opts...)
	r, err := supervision.Run(context.Background(), Build(b), all...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Scaled(10*time.Second))
		defer cancel()
		if err := r.Stop(ctx); !errors.Is(err, supervision.ErrStopped) {
			Expect(err).NotTo(HaveOccurred())
		}
	})
	return r
}

// leaveGoroutines starts n goroutines in one function, blocked until released.
func leaveGoroutines(n int) (release func()) {
	done := make(chan struct{})
	for range n {
		go parkedUntil(done)
	}
	return func() { close(done) }
}

func parkedUntil(done chan struct{}) { <-done }

var _ = Describe("The kit for real topologies", Label("kit"), func() {
	It("MaxOutstanding counts per spout task: max pending 3 with 2 tasks reports 3, not 6", Label("source"), func() {
		src := sheltertest.Generate(20, func(i int) Num { return Num{i} })
		held := new(sheltertest.Recorder[Num])
		b := dsl.New("per-task-pending", dsl.Conf{dsl.MaxSpoutPending: 3})
		b.Anchored(b.Spout("numbers", src.Spout(), dsl.Parallelism(2)), b.Bolt("hold", held.Hold()), dsl.Shuffle[Num]())
		runKit(b, NewManualClock().Option())
		Expect(held.Wait(waitCtx(10*time.Second), 6)).To(Succeed(), "each task fills its 3 pending")
		Expect(src.MaxOutstanding()).To(Equal(3))
		perTask := map[int]int{}
		for _, h := range src.Handouts() {
			perTask[h.Task]++
		}
		Expect(perTask).To(HaveLen(2))
		for task, n := range perTask {
			Expect(n).To(Equal(3), "task %d", task)
		}
	})

	It("VerifyOutcomes names the ids acked or nacked against the sets given", Label("source"), func() {
		src := sheltertest.Generate(4, func(i int) Num { return Num{i + 1} })
		b := dsl.New("outcome-sets", nil)
		b.Anchored(b.Spout("numbers", src.Spout()), b.Bolt("odd", dsl.AutoAck(func(n Num, _ dsl.Emitter) error {
			if n.N%2 == 0 {
				return errors.New("even")
			}
			return nil
		})), dsl.Shuffle[Num]())
		r := runKit(b)
		Expect(sheltertest.WaitIdle(waitCtx(10*time.Second), r)).To(Succeed())
		Expect(src.VerifyOutcomes([]int{1, 3}, []int{2, 4})).To(Succeed())
		err := src.VerifyOutcomes([]int{1, 2, 3}, []int{4, 5})
		Expect(err).To(MatchError(And(
			ContainSubstring("not acked [2], which should be"),
			ContainSubstring("nacked [2], which should not be"),
			ContainSubstring("not nacked [5], which should be"))))
	})

	It("SpoutPerTask feeds each task from its own source, and WaitIdle waits for every one", Label("source", "wait"), func() {
		sources := []*sheltertest.Source[Num]{
			sheltertest.Generate(30, func(i int) Num { return Num{i} }),
			sheltertest.Generate(40, func(i int) Num { return Num{100 + i} }),
			sheltertest.Generate(50, func(i int) Num { return Num{200 + i} }),
		}
		rec := new(sheltertest.Recorder[Num])
		b := dsl.New("per-task-sources", nil)
		b.Anchored(b.Spout("numbers", sheltertest.SpoutPerTask(sources...), dsl.Parallelism(3)), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Num]())
		r := runKit(b)
		Expect(sheltertest.WaitIdle(waitCtx(10*time.Second), r)).To(Succeed())
		Expect(rec.Len()).To(Equal(120), "WaitIdle returned only once every source was drained")
		tasks := taskIDs(r.Topology(), "numbers")
		for i, src := range sources {
			Expect(src.Verify()).To(Succeed())
			Expect(src.Acked()).To(HaveLen(30 + 10*i))
			for _, h := range src.Handouts() {
				Expect(h.Task).To(Equal(tasks[i]), "source %d is task index %d's alone", i, i)
			}
		}
	})

	It("WaitIdle's error names the per-task source that is not settled", Label("wait"), func() {
		block := make(chan struct{})
		DeferCleanup(func() { close(block) })
		busy := sheltertest.NewSource(Num{1}).With(sheltertest.OnNext(func(int) error { <-block; return nil }))
		b := dsl.New("per-task-busy", nil)
		b.Anchored(b.Spout("numbers", sheltertest.SpoutPerTask(sheltertest.NewSource[Num](), busy), dsl.Parallelism(2)),
			b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt()), dsl.Shuffle[Num]())
		r, err := supervision.Run(waitCtx(10*time.Second), Build(b), supervision.WithLogger(ginkgoLogger()))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { // before block closes: its Next returns once the Stop's drain gives up on it
			ctx, cancel := context.WithTimeout(context.Background(), Scaled(10*time.Second))
			defer cancel()
			_ = r.Stop(ctx)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		Expect(sheltertest.WaitIdle(ctx, r)).To(MatchError(ContainSubstring(`spout "numbers (task index 1)" waits for 1 Next in progress`)))
	})

	It("a Recorder records tick tuples with its Bolt, its Manual and its Hold, with the clock's time", Label("tick", "kit-recorder"), func() {
		clk := NewManualClock()
		auto, manual, held := new(sheltertest.Recorder[Num]), new(sheltertest.Recorder[Num]), new(sheltertest.Recorder[Num])
		var handlerTicks sync.Map // the manual handler's own ticks, by task
		b := dsl.New("recorded-ticks", dsl.Conf{dsl.TickFrequency: 5})
		numbers := b.Spout("numbers", sheltertest.NewSource(Num{1}).Spout())
		b.Anchored(numbers, b.Bolt("auto", auto.Bolt()), dsl.All[Num]())
		b.Anchored(numbers, b.Bolt("manual", manual.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[Num] {
			return sheltertest.ManualFunc[Num](func(_ Num, in dsl.Tuple, c dsl.Collector) error {
				c.Ack(in)
				return nil
			}).WithTick(func(t dsl.Tick, _ dsl.Collector) error {
				handlerTicks.Store(info.Task, t.Time)
				return nil
			})
		})), dsl.All[Num]())
		b.Anchored(numbers, b.Bolt("held", held.Hold()), dsl.All[Num]())
		r := runKit(b, clk.Option())
		Expect(held.Wait(waitCtx(10*time.Second), 1)).To(Succeed())

		clk.Advance(5 * time.Second)
		for _, rec := range []*sheltertest.Recorder[Num]{auto, manual, held} {
			Expect(rec.WaitTicks(waitCtx(10*time.Second), 1)).To(Succeed())
			ticks := rec.Ticks()
			Expect(ticks).To(HaveLen(1))
			Expect(ticks[0].At).To(Equal(clk.Now()))
			Expect(ticks[0].Value.Period).To(Equal(5 * time.Second))
			Expect(rec.Records()).To(HaveLen(1), "a tick is not an input")
		}
		manualTask := taskIDs(r.Topology(), "manual")[0]
		Eventually(func() bool { _, ok := handlerTicks.Load(manualTask); return ok }).Should(BeTrue(), "the handler gets the tick too")
	})

	It("HandlerFunc.WithTick gives an auto-ack handler made of functions its ticks", Label("tick", "kit-adapters"), func() {
		clk := NewManualClock()
		ticks := make(chan time.Time, 1)
		b := dsl.New("handler-ticks", dsl.Conf{dsl.TickFrequency: 1})
		b.Anchored(b.Spout("numbers", sheltertest.NewSource[Num]().Spout()), b.Bolt("count", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Num] {
			return sheltertest.HandlerFunc[Num](func(Num, dsl.Emitter) error { return nil }).
				WithTick(func(t dsl.Tick, _ dsl.Collector) error { ticks <- t.Time; return nil })
		})), dsl.Shuffle[Num]())
		runKit(b, clk.Option())
		clk.Advance(time.Second)
		Eventually(ticks).WithTimeout(Scaled(10 * time.Second)).Should(Receive(Equal(clk.Now())))
	})

	It("Hold keeps every tree open until its timeout, and a held input is recorded with its task and time", Label("kit-recorder"), func() {
		clk := NewManualClock()
		src := sheltertest.NewSource(Num{1}, Num{2}, Num{3})
		held := new(sheltertest.Recorder[Num])
		b := dsl.New("hold-all", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
		b.Anchored(b.Spout("numbers", src.Spout()), b.Bolt("hold", held.Hold(), dsl.Parallelism(2)), dsl.Shuffle[Num]())
		r := runKit(b, clk.Option())
		Expect(held.Wait(waitCtx(10*time.Second), 3)).To(Succeed())
		Expect(clk.Quiet(waitCtx(10*time.Second), r, 20*time.Second)).To(Succeed())
		Expect(src.Outcomes()).To(BeEmpty(), "nothing acked: Hold never acks")
		clk.Advance(25 * time.Second) // past the timeout and the acker's rotation
		Expect(sheltertest.WaitIdle(waitCtx(10*time.Second), r)).To(Succeed())
		Expect(src.VerifyOutcomes(nil, []int{1, 2, 3})).To(Succeed())
		holdTasks := taskIDs(r.Topology(), "hold")
		for _, rec := range held.Records() {
			Expect(holdTasks).To(ContainElement(rec.Task))
			Expect(rec.At).To(Equal(NewManualClock().Now()), "held before the clock moved")
		}
	})

	It("Clock.Quiet waits until the kit's tasks handled what the clock sent: a spout's back-off, a tick", Label("clock", "wait"), func() {
		clk := NewManualClock()
		src := sheltertest.NewSource[Num]()
		rec := new(sheltertest.Recorder[Num])
		b := dsl.New("quiet", dsl.Conf{dsl.TickFrequency: 10, dsl.SpoutWait: 100 * time.Millisecond})
		b.Anchored(b.Spout("numbers", src.Spout()), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Num]())
		r := runKit(b, clk.Option())
		for range 9 { // 9 s: the spout's back-off passes 90 times, the tick never
			Expect(clk.Quiet(waitCtx(10*time.Second), r, time.Second)).To(Succeed())
			Expect(rec.Ticks()).To(BeEmpty())
		}
		src.Push(Num{7}) // the spout sleeps: only the clock wakes it
		Expect(clk.Quiet(waitCtx(10*time.Second), r, time.Second)).To(Succeed())
		Expect(rec.Ticks()).To(HaveLen(1), "the tick came at 10 s, and Quiet waited for it")
		Expect(src.Handouts()).To(HaveLen(1), "Quiet waited for the woken spout's Next")
	})

	It("Clock.Quiet ends with the context, or with the topology", Label("clock", "wait"), func() {
		clk := NewManualClock()
		b := dsl.New("quiet-stopped", nil)
		b.Anchored(b.Spout("numbers", sheltertest.NewSource[Num]().Spout()), b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt()), dsl.Shuffle[Num]())
		r := runKit(b, clk.Option())
		Stop(r)
		Expect(clk.Quiet(waitCtx(10*time.Second), r, time.Second)).To(MatchError(supervision.ErrStopped))
	})
})

var _ = Describe("sheltertest.Start beside an embedded broker", Label("kit", "kit-start"), func() {
	build := func(name string) *dsl.Topology {
		b := dsl.New(name, nil)
		b.Unanchored(b.Spout("numbers", CountTo(1)), b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt()), dsl.Shuffle[Num]())
		return Build(b)
	}

	It("does not count goroutines that existed before Start", func() {
		t := &fakeTB{}
		release := leaveGoroutines(3) // a broker's, started first
		defer release()
		sheltertest.Start(t, build("before-start"))
		t.end()
		Expect(t.failures()).To(BeEmpty())
	})

	It("exempts the goroutines IgnoreGoroutines names, started after Start (a broker's connections)", func() {
		t := &fakeTB{}
		sheltertest.IgnoreGoroutines(t, "github.com/goshelter/goshelter/specs_test.parkedUntil")
		sheltertest.Start(t, build("exempted"))
		DeferCleanup(leaveGoroutines(3))
		t.end()
		Expect(t.failures()).To(BeEmpty())
	})

	It("names leaked goroutines by top function, grouped and counted, and says what to do, instead of a dump", func() {
		t := &fakeTB{}
		sheltertest.Start(t, build("leaky-broker"))
		DeferCleanup(leaveGoroutines(3))
		DeferCleanup(leaveGoroutine())
		t.end()
		failures := t.failures()
		Expect(failures).To(HaveLen(1))
		msg := failures[0]
		Expect(msg).To(ContainSubstring("4 goroutines outlived the test, by top function:"))
		Expect(msg).To(MatchRegexp(`\n  3 × github\.com/goshelter/goshelter/specs_test\.parkedUntil \[chan receive\], created by github\.com/goshelter/goshelter/specs_test\.leaveGoroutines`))
		Expect(msg).To(MatchRegexp(`\n  1 × github\.com/goshelter/goshelter/specs_test\.leaveGoroutine\.func1 \[chan receive\]`))
		Expect(msg).To(ContainSubstring("What to do:"))
		Expect(msg).To(ContainSubstring("sheltertest.IgnoreGoroutines"))
		Expect(strings.Count(msg, "\n")).To(BeNumerically("<=", 4), "a line per group and the advice, no stack dump:\n%s", msg)
	})
})

// sourceEvents is a Source of Num that records, in order, the calls it gets
// and closes a channel from Close, for the Close hook's specs.
type sourceEvents struct {
	mu     *sync.Mutex
	events *[]string
	next   int
	max    int
	closed chan<- int
	inc    int
}

func (s *sourceEvents) log(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.events = append(*s.events, fmt.Sprintf("%d:%s", s.inc, e))
}

func (s *sourceEvents) Next() (int, Num, bool) {
	if s.next == s.max {
		return 0, Num{}, false
	}
	s.next++
	s.log(fmt.Sprintf("next %d", s.next))
	return s.next, Num{s.next}, true
}
func (s *sourceEvents) Ack(id int)  { s.log(fmt.Sprintf("ack %d", id)) }
func (s *sourceEvents) Nack(id int) { s.log(fmt.Sprintf("nack %d", id)) }
func (s *sourceEvents) Close() error {
	s.log("close")
	s.closed <- s.inc
	return nil
}

// closeWithoutError has a Close the runtime would never call.
type closeWithoutError struct{ hookSource }

func (closeWithoutError) Close() {}

var _ = Describe("A source's Close hook", Label("kit", "lifecycle"), func() {
	It("is called once per incarnation, after its last Ack or Nack, and a restart makes a new source with its own", func() {
		var mu sync.Mutex
		var events []string
		closed := make(chan int, 4)
		incarnation := 0
		held := new(sheltertest.Recorder[Num])
		b := dsl.New("closing", nil)
		numbers := b.Spout("numbers", dsl.ReliableFrom(func(info dsl.TaskInfo) *sourceEvents {
			incarnation++ // one task: its constructor runs on its goroutine, one incarnation at a time
			return &sourceEvents{mu: &mu, events: &events, max: 2, closed: closed, inc: incarnation}
		}))
		b.Anchored(numbers, b.Bolt("hold", held.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[Num] {
			return sheltertest.ManualFunc[Num](func(n Num, in dsl.Tuple, c dsl.Collector) error {
				if n.N == 1 {
					c.Ack(in)
				}
				return nil // 2 is held: the stop abandons it
			})
		})), dsl.Shuffle[Num]())
		r := runKit(b, Restarts(time.Millisecond, time.Millisecond, 0))
		Expect(held.Wait(waitCtx(10*time.Second), 2)).To(Succeed())
		Eventually(func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), events...) }).Should(ContainElement("1:ack 1"))
		Stop(r)
		Expect(closed).To(Receive(Equal(1)))
		Expect(closed).NotTo(Receive(), "once")
		mu.Lock()
		defer mu.Unlock()
		Expect(events).To(Equal([]string{"1:next 1", "1:next 2", "1:ack 1", "1:nack 2", "1:close"}), "Close last, after the abandoned message's Nack")
	})

	It("closes the failed incarnation's source before the restart's first Next", func() {
		var mu sync.Mutex
		var events []string
		closed := make(chan int, 4)
		incarnation := 0
		rec := new(sheltertest.Recorder[Num])
		b := dsl.New("closing-restart", nil)
		numbers := b.Spout("numbers", dsl.ReliableFrom(func(info dsl.TaskInfo) *sourceEvents {
			incarnation++
			if incarnation == 1 {
				info.Fail(errors.New("first incarnation fails"))
			}
			return &sourceEvents{mu: &mu, events: &events, max: 1, closed: closed, inc: incarnation}
		}))
		b.Anchored(numbers, b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Num]())
		r := runKit(b, Restarts(time.Millisecond, time.Millisecond, 0))
		Expect(rec.Wait(waitCtx(10*time.Second), 1)).To(Succeed())
		Eventually(closed).WithTimeout(Scaled(10 * time.Second)).Should(Receive(Equal(1)))
		Stop(r)
		Expect(closed).To(Receive(BeNumerically(">", 1)))
		mu.Lock()
		defer mu.Unlock()
		first := -1
		for i, e := range events {
			if strings.HasPrefix(e, "2:") || strings.HasPrefix(e, "3:") {
				first = i
				break
			}
		}
		Expect(first).To(BeNumerically(">", 0))
		Expect(events[:first]).To(ContainElement("1:close"), "the failed incarnation's source was closed before the next one's first call: %v", events)
	})

	It("Build refuses a Close with another signature, naming Close() error", Label("dsl-validation"), func() {
		b := dsl.New("close-signature", nil)
		b.Streams(Num{})
		spout := b.Spout("numbers", dsl.ReliableFrom(func(dsl.TaskInfo) closeWithoutError { return closeWithoutError{} }))
		b.Anchored(spout, b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt()), dsl.Shuffle[Num]())
		_, err := b.Build()
		Expect(err).To(MatchError(ContainSubstring("a method Close() error")))
	})
})
