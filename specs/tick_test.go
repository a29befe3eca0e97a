package specs_test

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

var _ = Describe("Tick tuples", Label("tick"), func() {
	var (
		clk          *sheltertest.Clock
		trace        *Trace
		fast, slow   *tickLog
		fastT, slowT []int
	)

	BeforeEach(func() {
		clk, trace = NewManualClock(), NewTrace()
		fast, slow = &tickLog{}, &tickLog{}
		// The topology asks for a tick every 10 s; bolt "fast" overrides it with 2 s.
		b := dsl.New("ticks", dsl.Conf{dsl.TickFrequency: 10, dsl.MessageTimeout: 600})
		spout := b.Spout("numbers", CountTo(0))
		fastBolt := b.Bolt("fast", tickBolt(fast), dsl.Parallelism(2), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 2}))
		slowBolt := b.Bolt("slow", tickBolt(slow), dsl.Parallelism(2))
		b.Anchored(spout, fastBolt, dsl.Shuffle[Num]())
		b.Anchored(spout, slowBolt, dsl.Shuffle[Num]())
		topo := Build(b)
		fastT, slowT = taskIDs(topo, "fast"), taskIDs(topo, "slow")
		sheltertest.Start(GinkgoTB(), topo, clk.Option(), trace.Option())
	})

	// perTask counts the ticks each task of a bolt received, in task order.
	perTask := func(d *tickLog, tasks []int) func() []int {
		return func() []int {
			byTask := d.ByTask()
			out := make([]int, len(tasks))
			for i, t := range tasks {
				out[i] = len(byTask[t])
			}
			return out
		}
	}

	It("sends each bolt task a tick at the bolt's frequency, the bolt's conf winning over the topology's", func() {
		Expect(fast.Len()+slow.Len()).To(BeZero(), "no tick before time moves")
		for step := 1; step <= 5; step++ {
			clk.Advance(2 * time.Second)
			Eventually(perTask(fast, fastT)).Should(Equal([]int{step, step}), "fast after %d s", 2*step)
			if step < 5 {
				Expect(perTask(slow, slowT)()).To(Equal([]int{0, 0}), "slow after %d s", 2*step)
			}
		}
		Eventually(perTask(slow, slowT)).Should(Equal([]int{1, 1}), "slow after 10 s")
		Consistently(perTask(slow, slowT)).Should(Equal([]int{1, 1}))
		Expect(perTask(fast, fastT)()).To(Equal([]int{5, 5}))

		By("each tick carries its rate")
		for _, t := range fast.All() {
			Expect([]any{t.RateSecs, t.Period}).To(Equal([]any{2, 2 * time.Second}))
		}
		for _, t := range slow.All() {
			Expect([]any{t.RateSecs, t.Period}).To(Equal([]any{10, 10 * time.Second}))
		}
		Expect(slow.All()[0].Time).To(Equal(NewManualClock().Now().Add(10*time.Second)), "the clock's time at the tick")
	})

	It("delivers tick tuples from component __system, task -1, on no declared stream (Storm's __tick)", func() {
		for step := 1; step <= 5; step++ { // one period at a time: beats a busy task missed coalesce
			clk.Advance(2 * time.Second)
			Eventually(fast.Len).Should(Equal(2 * step))
		}
		Eventually(func() int { return fast.Len() + slow.Len() }).Should(Equal(12))

		ticks := trace.Events(FromComponent("fast", "slow"), KindIs("Tuple"), func(e Event) bool {
			_, isTick := e.Input.Value.(dsl.Tick)
			return isTick
		})
		Expect(ticks).To(HaveLen(12))
		for _, e := range ticks {
			t := e.Input
			Expect(t.Source).To(Equal("__system"))
			Expect(t.Task).To(Equal(-1))
			Expect(t.IsTick()).To(BeTrue())
			Expect(t.Stream).To(BeNil(), "ticks are on none of the topology's streams")
			Expect(t.ID.Edge).To(BeZero(), "ticks are not part of any tuple tree")
		}
	})
})

// tickLog records the ticks each task of a bolt got. sheltertest.Recorder
// records inputs, not ticks, so the tick specs keep this small log.
type tickLog struct {
	mu     sync.Mutex         // mu guards all and byTask
	all    []dsl.Tick         // every tick, in the order recorded
	byTask map[int][]dsl.Tick // task id -> its ticks
}

func (l *tickLog) add(task int, t dsl.Tick) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byTask == nil {
		l.byTask = map[int][]dsl.Tick{}
	}
	l.all = append(l.all, t)
	l.byTask[task] = append(l.byTask[task], t)
}

// All returns every tick recorded, in order.
func (l *tickLog) All() []dsl.Tick {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]dsl.Tick(nil), l.all...)
}

// Len returns how many ticks were recorded.
func (l *tickLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

// ByTask returns the ticks of each task that got one.
func (l *tickLog) ByTask() map[int][]dsl.Tick {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int][]dsl.Tick, len(l.byTask))
	for task, ticks := range l.byTask {
		out[task] = append([]dsl.Tick(nil), ticks...)
	}
	return out
}

// tickBolt is an auto-ack bolt of Num whose handlers record every tick they get.
func tickBolt(ticks *tickLog) *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
		return &tickRecorder{info: info, ticks: ticks}
	})
}

// tickRecorder is a Handler that also implements dsl.Ticker.
type tickRecorder struct {
	info  dsl.TaskInfo
	ticks *tickLog
}

func (r *tickRecorder) Execute(Num, dsl.Emitter) error { return nil }

func (r *tickRecorder) Tick(t dsl.Tick, _ dsl.Collector) error {
	r.ticks.add(r.info.Task, t)
	return nil
}
