package specs_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// directNums is a reliable source of Num{1..total} that sends each number n
// to workers[n%len(workers)] (Storm's emitDirect from a spout).
type directNums struct {
	mu      sync.Mutex // mu guards acked and nacked
	next    int
	total   int
	acked   int
	nacked  int
	workers []int
}

func (d *directNums) Next() (int, Num, bool) {
	if d.next == d.total {
		return 0, Num{}, false
	}
	d.next++
	return d.next, Num{N: d.next}, true
}

func (d *directNums) DirectTask(n Num) int { return d.workers[n.N%len(d.workers)] }

func (d *directNums) Ack(int) {
	d.mu.Lock()
	d.acked++
	d.mu.Unlock()
}

func (d *directNums) Nack(int) {
	d.mu.Lock()
	d.nacked++
	d.mu.Unlock()
}

// outcomes returns how many messages were acked and nacked.
func (d *directNums) outcomes() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprintf("acked %d nacked %d", d.acked, d.nacked)
}

// taskIDs returns the task ids of component id in topo, as the runtime numbers them.
func taskIDs(topo *dsl.Topology, id string) []int {
	return topo.Component(id).Tasks
}

var _ = Describe("Shuffle grouping", Label("grouping-shuffle"), func() {
	It("spreads a spout's tuples evenly over the bolt's tasks", func() {
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("shuffle", nil)
		spout := b.Spout("numbers", CountTo(40))
		bolt := b.Bolt("workers", got.Bolt(), dsl.Parallelism(4))
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Eventually(got.Len).Should(Equal(40))
		byTask := got.ByTask()
		Expect(byTask).To(HaveLen(4))
		for _, task := range taskIDs(topo, "workers") {
			Expect(byTask[task]).To(HaveLen(10), "task %d", task)
		}
		var all []int
		for _, v := range got.All() {
			all = append(all, v.N)
		}
		slices.Sort(all)
		Expect(all).To(Equal(seq(1, 40)), "every tuple delivered exactly once")
	})
})

var _ = Describe("Local-or-shuffle and none groupings", Label("grouping-shuffle"), func() {
	DescribeTable("spread a spout's tuples evenly over the bolt's tasks, as shuffle does (every task is local)",
		func(g dsl.Grouping, kind string) {
			Expect(g.Kind.String()).To(Equal(kind))
			got := new(sheltertest.Recorder[Num])
			b := dsl.New("shuffle-like", nil)
			spout := b.Spout("numbers", CountTo(40))
			bolt := b.Bolt("workers", got.Bolt(), dsl.Parallelism(4))
			b.Anchored(spout, bolt, g)
			topo := Build(b)
			sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

			Eventually(got.Len).Should(Equal(40))
			byTask := got.ByTask()
			for _, task := range taskIDs(topo, "workers") {
				Expect(byTask[task]).To(HaveLen(10), "task %d", task)
			}
		},
		Entry("LocalOrShuffle", dsl.LocalOrShuffle[Num](), "local_or_shuffle"),
		Entry("None", dsl.None[Num](), "none"),
	)
})

var _ = Describe("Fields grouping", Label("grouping-fields"), func() {
	keys := []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "hazel"}

	It("always sends the same key to the same task", func() {
		got := new(sheltertest.Recorder[KeyedNum])
		b := dsl.New("fields", nil)
		spout := b.Spout("keys", keyedSpout(keys, 5), dsl.Parallelism(2))
		bolt := b.Bolt("workers", got.Bolt(), dsl.Parallelism(4))
		b.Anchored(spout, bolt, dsl.Fields(func(k KeyedNum) string { return k.Key }, "Key"))
		sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())

		Eventually(got.Len).Should(Equal(2 * len(keys) * 5))
		taskOf := map[string]int{}
		for task, inputs := range got.ByTask() {
			for _, k := range inputs {
				if other, seen := taskOf[k.Key]; seen {
					Expect(task).To(Equal(other), "key %q", k.Key)
				}
				taskOf[k.Key] = task
			}
		}
		Expect(taskOf).To(HaveLen(len(keys)))
	})

	It("hashes stably: a fixed key lands on a fixed task index in every run", func() {
		// The index is HashKey(key) mod parallelism, with an FNV-1a hash of the
		// string: the same in every process, unlike Go's seeded map hash.
		expected := map[string]int{"apple": 3, "banana": 0, "cherry": 0, "date": 1}
		got := new(sheltertest.Recorder[KeyedNum])
		b := dsl.New("fields-stable", nil)
		spout := b.Spout("keys", keyedSpout([]string{"apple", "banana", "cherry", "date"}, 1))
		bolt := b.Bolt("workers", got.Bolt(), dsl.Parallelism(4))
		b.Anchored(spout, bolt, dsl.Fields(func(k KeyedNum) string { return k.Key }, "Key"))
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Eventually(got.Len).Should(Equal(4))
		byTask := got.ByTask()
		for index, task := range taskIDs(topo, "workers") {
			for _, k := range byTask[task] {
				Expect(index).To(Equal(expected[k.Key]), "key %q", k.Key)
			}
		}
	})
})

var _ = Describe("All grouping", Label("grouping-all"), func() {
	It("delivers every tuple to every task", func() {
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("all", nil)
		spout := b.Spout("numbers", CountTo(10))
		bolt := b.Bolt("everyone", got.Bolt(), dsl.Parallelism(3))
		b.Anchored(spout, bolt, dsl.All[Num]())
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Eventually(got.Len).Should(Equal(30))
		byTask := got.ByTask()
		for _, task := range taskIDs(topo, "everyone") {
			var ns []int
			for _, v := range byTask[task] {
				ns = append(ns, v.N)
			}
			Expect(ns).To(ConsistOf(seq(1, 10)), "task %d", task)
		}
	})

	It("gives each copy its own edge, so the tree completes only when every task acks", func() {
		src := sheltertest.NewSource(Num{N: 1})
		hold := newHolder()
		b := dsl.New("all-tree", nil)
		spout := b.Spout("numbers", src.Spout())
		bolt := b.Bolt("everyone", dsl.Manual(hold.handler), dsl.Parallelism(3))
		b.Anchored(spout, bolt, dsl.All[Num]())
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())
		DeferCleanup(hold.releaseAll)

		tasks := taskIDs(topo, "everyone")
		Eventually(hold.count).Should(Equal(3))
		hold.release(tasks[0])
		hold.release(tasks[1])
		// FsShelter gives every copy the same id, so the first ack would complete
		// the tree; here two acks of three leave it open.
		Consistently(func() []int { return src.Acked() }).Should(BeEmpty())
		hold.release(tasks[2])
		Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1}))
		Expect(src.Nacked()).To(BeEmpty())
	})
})

var _ = Describe("Direct grouping", Label("grouping-direct"), func() {
	It("delivers EmitDirect to the chosen task only", func() {
		got := new(sheltertest.Recorder[Num])
		var workers []int // set before the topology runs
		b := dsl.New("direct", nil)
		b.Streams(Num{})
		spout := b.Spout("numbers", CountTo(12))
		dispatch := b.Bolt("dispatch", dsl.AutoAck(func(in Num, out dsl.Emitter) error {
			out.EmitDirect(workers[in.N%len(workers)], in)
			return nil
		}))
		bolt := b.Bolt("workers", got.Bolt(), dsl.Parallelism(3))
		b.Anchored(spout, dispatch, dsl.Shuffle[Num]())
		b.Anchored(dispatch, bolt, dsl.Direct[Num]())
		topo := Build(b)
		workers = taskIDs(topo, "workers")
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Eventually(got.Len).Should(Equal(12))
		for task, inputs := range got.ByTask() {
			for _, v := range inputs {
				Expect(task).To(Equal(workers[v.N%3]), "tuple %d", v.N)
			}
		}
	})

	It("delivers a reliable Go spout's messages to the task its Source names, and acks their trees", func() {
		got := new(sheltertest.Recorder[Num])
		src := &directNums{total: 12}
		b := dsl.New("direct-spout", nil)
		spout := b.Spout("numbers", dsl.ReliableFrom(func(info dsl.TaskInfo) dsl.Source[int, Num] {
			src.workers = info.Model.Component("workers").Tasks
			return src
		}))
		bolt := b.Bolt("workers", got.Bolt(), dsl.Parallelism(3))
		b.Anchored(spout, bolt, dsl.Direct[Num]())
		topo := Build(b)
		workers := taskIDs(topo, "workers")
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Eventually(src.outcomes).Should(Equal("acked 12 nacked 0"))
		Expect(got.Len()).To(Equal(12))
		for task, inputs := range got.ByTask() {
			for _, v := range inputs {
				Expect(task).To(Equal(workers[v.N%3]), "tuple %d", v.N)
			}
		}
	})

	It("fails the message with a clear error when a spout emits on a direct stream without naming a task, and goes on", func() {
		src := sheltertest.NewSource(Num{N: 1}, Num{N: 2})
		b := dsl.New("direct-spout-misuse", nil)
		spout := b.Spout("numbers", src.Spout())
		b.Anchored(spout, b.Bolt("workers", new(sheltertest.Recorder[Num]).Bolt(), dsl.Parallelism(2)), dsl.Direct[Num]())
		logs, observed := ObserveLogs()
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option(), supervision.WithoutRestarts(), logs)
		Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(1, 2), "both messages fail")
		Expect(src.Verify()).To(Succeed())
		Expect(r.Done()).NotTo(BeClosed(), "the spout goes on")
		failures := observed.FilterMessage("spout could not emit; the message fails")
		Expect(failures.Len()).To(Equal(2))
		Expect(fmt.Sprint(failures.All()[0].ContextMap()["error"])).To(ContainSubstring(`component "numbers" cannot emit Num: the stream is direct`))
	})

	DescribeTable("fails the input with a clear error when direct emitting is misused",
		func(emit func(out dsl.Emitter, in Num), grouping dsl.Grouping, message string) {
			src := sheltertest.NewSource(Num{N: 1}, Num{N: 2})
			b := dsl.New("direct-misuse", nil)
			b.Streams(Num{})
			spout := b.Spout("numbers", src.Spout())
			misuser := b.Bolt("misuser", dsl.AutoAck(func(in Num, out dsl.Emitter) error {
				emit(out, in)
				return nil
			}))
			sink := b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt(), dsl.Parallelism(2))
			b.Anchored(spout, misuser, dsl.Shuffle[Num]())
			b.Anchored(misuser, sink, grouping)
			topo := Build(b)
			logs, observed := ObserveLogs()
			sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option(), logs)

			Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(1, 2), "both inputs fail, so both messages are nacked")
			Expect(src.Acked()).To(BeEmpty())
			failures := observed.FilterMessage("bolt failed its input").FilterField(zap.String("component", "misuser"))
			Expect(failures.Len()).To(Equal(2))
			for _, entry := range failures.All() {
				Expect(entry.ContextMap()["error"]).To(ContainSubstring(message))
				Expect(entry.ContextMap()["error"]).To(ContainSubstring(`component "misuser"`))
			}
		},
		Entry("EmitDirect on a stream subscribed with shuffle",
			func(out dsl.Emitter, in Num) { out.EmitDirect(1, in) }, dsl.Shuffle[Num](),
			"EmitDirect on a stream whose subscribers do not use direct grouping"),
		Entry("Emit without a task on a direct stream",
			func(out dsl.Emitter, in Num) { out.Emit(in) }, dsl.Direct[Num](),
			"the stream is direct: use EmitDirect with a task id"),
		Entry("EmitDirect to a task that does not subscribe",
			func(out dsl.Emitter, in Num) { out.EmitDirect(999, in) }, dsl.Direct[Num](),
			"task 999 does not subscribe to the stream"),
	)
})

var _ = Describe("Global grouping", Label("grouping-global"), func() {
	It("sends every tuple to the bolt's task with the lowest id", func() {
		got := new(sheltertest.Recorder[Num])
		b := dsl.New("global", nil)
		spout := b.Spout("numbers", CountTo(10), dsl.Parallelism(2))
		bolt := b.Bolt("single", got.Bolt(), dsl.Parallelism(3))
		b.Anchored(spout, bolt, dsl.Global[Num]())
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Eventually(got.Len).Should(Equal(20))
		byTask := got.ByTask()
		Expect(byTask).To(HaveLen(3), "every task was created")
		lowest := slices.Min(slices.Collect(maps.Keys(byTask)))
		Expect(lowest).To(Equal(taskIDs(topo, "single")[0]))
		for task, inputs := range byTask {
			if task != lowest {
				Expect(inputs).To(BeEmpty(), "task %d", task)
			}
		}
	})
})

// keyedSpout is an unreliable spout whose every task emits each key rounds times.
func keyedSpout(keys []string, rounds int) *dsl.SpoutSpec {
	return dsl.UnreliableFrom(func(dsl.TaskInfo) func() (KeyedNum, bool) {
		i := 0
		return func() (KeyedNum, bool) {
			if i >= len(keys)*rounds {
				return KeyedNum{}, false
			}
			i++
			return KeyedNum{Key: keys[i%len(keys)], N: i}, true
		}
	})
}

// holder is a manual bolt handler that keeps each input until the spec
// releases its task, then acks it.
type holder struct {
	mu   sync.Mutex // mu guards held
	held map[int]func()
}

func newHolder() *holder { return &holder{held: map[int]func(){}} }

func (h *holder) handler(info dsl.TaskInfo) dsl.ManualHandler[Num] {
	return sheltertest.ManualFunc[Num](func(_ Num, input dsl.Tuple, _ dsl.Collector) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		// Ack on the task's own goroutine when released.
		h.held[info.Task] = func() { info.Post(func(c dsl.Collector) { c.Ack(input) }) }
		return nil
	})
}

func (h *holder) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

// release acks the input held by task.
func (h *holder) release(task int) {
	h.mu.Lock()
	ack := h.held[task]
	delete(h.held, task)
	h.mu.Unlock()
	Expect(ack).NotTo(BeNil(), "task %d holds no input", task)
	ack()
}

func (h *holder) releaseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for task, ack := range h.held {
		ack()
		delete(h.held, task)
	}
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from+1)
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
