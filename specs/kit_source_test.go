package specs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 21, items 1 and 2: the kit's source does what tests need (a
// generator, replay, hooks on Next, Ack and Nack, what it handed out, calls
// after the stop), and its waits cannot return early.

// kitChain builds a topology of src's spout into one bolt running consume,
// with conf and the spout's options.
func kitChain(name string, src *sheltertest.Source[Num], conf dsl.Conf, consume func(Num) error, opts ...dsl.Option) *dsl.Topology {
	b := dsl.New(name, conf)
	nums := b.Spout("nums", src.Spout(), opts...)
	b.Anchored(nums, b.Bolt("sink", dsl.AutoAck(func(in Num, _ dsl.Emitter) error { return consume(in) })), dsl.Shuffle[Num]())
	return Build(b)
}

func acceptNum(Num) error { return nil }

// kitCtx is a context bounded by a scaled 10 s, cancelled after the spec.
func kitCtx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(10*time.Second))
	DeferCleanup(cancel)
	return ctx
}

var _ = Describe("The test kit's source and waits", Label("kit"), func() {
	// It used to return whenever nothing was in flight: before the first
	// emit and between a Next and its emit (about 1 run in 4 at 300
	// messages), so Verify saw a message with no outcome, or none at all.
	It("WaitIdle returns only once every message is handed out and settled", Label("wait"), func() {
		for run := 1; run <= 20; run++ {
			src := sheltertest.NewSource(gpNums(1, 300)...)
			r := sheltertest.Start(GinkgoTB(), kitChain("recipe", src, dsl.Conf{dsl.MaxSpoutPending: 1}, acceptNum), NewManualClock().Option())
			Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
			Expect(src.Acked()).To(HaveLen(300), "run %d: WaitIdle returned early", run)
			Expect(src.Verify()).To(Succeed(), "run %d", run)
			Stop(r)
		}
	})

	It("WaitIdle waits for a Next in progress and says so", Label("wait"), func() {
		release, blocked := make(chan struct{}), make(chan struct{})
		src := sheltertest.NewSource(Num{N: 1}).With(sheltertest.OnNext(func(int) error {
			close(blocked)
			<-release
			return nil
		}))
		r := sheltertest.Start(GinkgoTB(), kitChain("blocked-next", src, nil, acceptNum), NewManualClock().Option())
		<-blocked
		short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err := sheltertest.WaitIdle(short, r)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err).To(MatchError(ContainSubstring(`spout "nums" waits for 1 Next in progress`)))
		close(release)
		Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
		Expect(src.Acked()).To(Equal([]int{1}))
	})

	It("Verify fails a source that handed out nothing", Label("source"), func() {
		Expect(sheltertest.NewSource(Num{N: 1}).Verify()).To(MatchError("sheltertest: no message was handed out"))
	})

	// Message 1's Next waits until message 2 is taken, which only the other
	// task can do: without it, a task activated late on a loaded machine
	// could find the source drained by the first (seen once in a full run).
	It("a generated source feeds its n values to every task, each acked once, within max pending", Label("source"), func() {
		second := make(chan struct{})
		src := sheltertest.Generate(200, func(i int) Num { return Num{N: i} }, sheltertest.OnNext(func(id int) error {
			switch id {
			case 1:
				<-second
			case 2:
				close(second)
			}
			return nil
		}))
		r := sheltertest.Start(GinkgoTB(), kitChain("generated", src, dsl.Conf{dsl.MaxSpoutPending: 2}, acceptNum, dsl.Parallelism(2)), NewManualClock().Option())
		Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
		Expect(src.Verify()).To(Succeed())
		Expect(src.Acked()).To(HaveLen(200))
		Expect(src.MaxOutstanding()).To(BeNumerically("<=", 2), "two pending per task")
		tasks := map[int]int{}
		for _, h := range src.Handouts() {
			tasks[h.Task]++
			Expect(h.Outstanding).To(BeNumerically("<=", src.MaxOutstanding()))
		}
		Expect(tasks).To(HaveLen(2), "both spout tasks pulled from the one source")
	})

	DescribeTable("replays a nacked message with its id, as often as told", Label("source"),
		func(replays int, nacked []int) {
			src := sheltertest.NewSource(Num{N: 1}, Num{N: 2}).With(sheltertest.Replay(replays))
			r := sheltertest.Start(GinkgoTB(), kitChain("replays", src, dsl.Conf{dsl.MaxSpoutPending: 1}, func(Num) error { return errors.New("always") }),
				NewManualClock().Option())
			Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
			Expect(src.Nacked()).To(Equal(nacked))
			Expect(src.Acked()).To(BeEmpty())
			last := src.Handouts()[len(src.Handouts())-1]
			Expect(last.Attempt).To(Equal(replays+1), "the last handout is message 2's last attempt")
			Expect(src.Verify()).To(Succeed(), "one outcome per handout")
		},
		Entry("off", 0, []int{1, 2}),
		Entry("at most twice", 2, []int{1, 1, 1, 2, 2, 2}),
	)

	It("a hook that makes Next panic for one id fails the task; the message is handed out after the restart with its id", Label("source"), func() {
		var panicked atomic.Bool
		src := sheltertest.NewSource(Num{N: 1}, Num{N: 2}, Num{N: 3}).With(sheltertest.OnNext(func(id int) error {
			if id == 2 && panicked.CompareAndSwap(false, true) {
				panic("broker gone")
			}
			return nil
		}))
		r := sheltertest.Start(GinkgoTB(), kitChain("next-panics", src, dsl.Conf{dsl.MaxSpoutPending: 1}, acceptNum), Restarts(time.Millisecond, time.Millisecond, 0))
		Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
		Expect(r.Stats().Restarts).To(Equal(1))
		Expect(src.Acked()).To(Equal([]int{1, 2, 3}))
		Expect(src.Handouts()).To(HaveLen(3), "the panicking Next handed nothing out")
		Expect(src.Verify()).To(Succeed())
	})

	It("a hook's error on Ack fails the task, and the ack still counts", Label("source"), func() {
		var failed atomic.Bool
		src := sheltertest.NewSource(Num{N: 1}, Num{N: 2}).With(sheltertest.OnAck(func(id int) error {
			if failed.CompareAndSwap(false, true) {
				return errors.New("commit failed")
			}
			return nil
		}))
		r := sheltertest.Start(GinkgoTB(), kitChain("ack-fails", src, dsl.Conf{dsl.MaxSpoutPending: 1}, acceptNum), Restarts(time.Millisecond, time.Millisecond, 0))
		Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
		Expect(r.Stats().Restarts).To(Equal(1))
		Expect(r.Stats().Components["nums"].LastError).To(ContainSubstring("sheltertest: Ack of message 1: commit failed"))
		Expect(src.Acked()).To(Equal([]int{1, 2}))
		Expect(src.Verify()).To(Succeed())
	})

	It("Verify reports a call that arrives after Close", Label("source"), func() {
		held := make(chan Num, 1)
		src := sheltertest.NewSource(Num{N: 1})
		b := dsl.New("late-nack", nil)
		nums := b.Spout("nums", src.Spout())
		b.Anchored(nums, b.Bolt("holder", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return sheltertest.ManualFunc[Num](func(in Num, _ dsl.Tuple, _ dsl.Collector) error { held <- in; return nil })
		})), dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option(), supervision.WithDrainTimeout(time.Millisecond))
		<-held
		src.Close() // too early: the stop abandons the open tree, nacking it
		Stop(r)
		Expect(src.Verify()).To(MatchError("sheltertest: message 1 has no outcome; Nack of message 1 after Close"))
	})

	It("WaitOutcomes and WaitSettled wake on outcomes and return ctx's error saying what they wait for", Label("wait"), func() {
		held := make(chan Num, 1)
		src := sheltertest.NewSource(Num{N: 1}, Num{N: 2})
		b := dsl.New("waits", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
		nums := b.Spout("nums", src.Spout())
		b.Anchored(nums, b.Bolt("holder", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return sheltertest.ManualFunc[Num](func(in Num, input dsl.Tuple, c dsl.Collector) error {
				if in.N == 2 {
					held <- in // never acked: only the timeout ends its tree
					return nil
				}
				c.Ack(input)
				return nil
			})
		})), dsl.Shuffle[Num]())
		clk := NewManualClock()
		r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option(), supervision.WithDrainTimeout(time.Millisecond))
		<-held
		Expect(src.WaitOutcomes(kitCtx(), 1)).To(Succeed())
		short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err := src.WaitOutcomes(short, 2)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err).To(MatchError(ContainSubstring("1 outcomes, want 2")))
		err = src.WaitSettled(short)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err).To(MatchError(ContainSubstring("1 outstanding")))
		clk.Advance(45 * time.Second)
		Expect(src.WaitSettled(kitCtx())).To(Succeed())
		Expect(src.Acked()).To(Equal([]int{1}))
		Expect(src.Nacked()).To(Equal([]int{2}))
		Stop(r)
	})
})
