package specs_test

import (
	"bytes"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	"go.yaml.in/yaml/v3"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 25, items 3 and 5: Storm's acker keys mean what they mean in Storm and
// FsShelter, a mistyped conf key is seen, and a shell spout's activate is
// pinned directly. The keys are spelled out here, as a user coming from Storm
// writes them.
const (
	stormAckerTasks     = "topology.acker.tasks"
	stormAckerExecutors = "topology.acker.executors"
)

// fidelityChain is the kit's source of n numbers into one anchored bolt that
// acks them, under conf.
func fidelityChain(name string, conf dsl.Conf, src *sheltertest.Source[Num]) *dsl.Topology {
	b := dsl.New(name, conf)
	nums := b.Spout("nums", src.Spout())
	b.Anchored(nums, b.Bolt("sink", dsl.AutoAck(func(Num, dsl.Emitter) error { return nil })), dsl.Shuffle[Num]())
	return Build(b)
}

// fluxConf is the topology config multilang.Flux writes for topo: what Storm
// reads.
func fluxConf(topo *dsl.Topology) map[string]any {
	GinkgoHelper()
	var out bytes.Buffer
	Expect(multilang.Flux(&out, topo, "./binary", "serve")).To(Succeed())
	var def struct {
		Config map[string]any `yaml:"config"`
	}
	Expect(yaml.Unmarshal(out.Bytes(), &def)).To(Succeed())
	return def.Config
}

// ackerTasksRunning counts the acker tasks of r's current incarnation.
func ackerTasksRunning(r *supervision.Running) int {
	n := 0
	for _, t := range r.Stats().Tasks {
		if t.Kind == "acker" {
			n++
		}
	}
	return n
}

var _ = Describe("Storm's acker keys", Label("fidelity", "acker"), func() {
	// topology.acker.tasks was ignored and topology.acker.executors set the
	// task count. In Storm and FsShelter (reference: 4 acker tasks on 2
	// executors) executors are threads and tasks the instances; tasks
	// default to the executors, and executors above the tasks are lowered to
	// them. goshelter runs every task as an actor: the tasks size the ackers.
	DescribeTable("size the ackers by topology.acker.tasks, with the executors as Storm relates them",
		func(conf dsl.Conf, tasks, executors int) {
			src := sheltertest.NewSource(gpNums(1, 60)...)
			topo := fidelityChain("acker-keys", conf, src)
			Expect(topo.AckerTasks).To(HaveLen(tasks), "acker task ids")
			Expect(fluxConf(topo)).To(And(
				HaveKeyWithValue(stormAckerTasks, tasks),
				HaveKeyWithValue(stormAckerExecutors, executors)), "what Storm is told")
			r := sheltertest.Start(GinkgoTB(), topo)
			Expect(ackerTasksRunning(r)).To(Equal(tasks), "acker tasks running")
			ctx := kitCtx()
			Expect(sheltertest.WaitIdle(ctx, r)).To(Succeed())
			Expect(src.Acked()).To(HaveLen(60))
			Stop(r)
			Expect(src.Verify()).To(Succeed())
		},
		Entry("by default: the reference's 4 tasks on 2 executors", dsl.Conf{}, 4, 2),
		Entry("tasks alone keep the default executors", dsl.Conf{stormAckerTasks: 6}, 6, 2),
		Entry("executors alone set the tasks too (tasks default to executors)", dsl.Conf{stormAckerExecutors: 3}, 3, 3),
		Entry("both, as FsShelter's reference gives them", dsl.Conf{stormAckerTasks: 6, stormAckerExecutors: 3}, 6, 3),
		Entry("executors above the tasks are lowered to them", dsl.Conf{stormAckerTasks: 1, stormAckerExecutors: 3}, 1, 1),
		Entry("tasks below the default executors lower them", dsl.Conf{stormAckerTasks: 1}, 1, 1),
		Entry("no acker tasks: every tree completes at once", dsl.Conf{stormAckerTasks: 0}, 0, 0),
	)

	DescribeTable("refuse values Storm's rules cannot run, naming the key",
		func(conf dsl.Conf, want ...string) {
			b := dsl.New("acker-keys-bad", conf)
			nums := b.Spout("nums", sheltertest.NewSource(Num{N: 1}).Spout())
			b.Anchored(nums, b.Bolt("sink", dsl.AutoAck(func(Num, dsl.Emitter) error { return nil })), dsl.Shuffle[Num]())
			_, err := b.Build()
			Expect(err).To(HaveOccurred())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("tasks with no executor to run them", dsl.Conf{stormAckerTasks: 4, stormAckerExecutors: 0},
			`conf "topology.acker.executors" is 0 (no ackers) but "topology.acker.tasks" is 4`),
		Entry("executors above 1024", dsl.Conf{stormAckerExecutors: 1025}, `conf "topology.acker.executors": 1025 is above the maximum 1024`),
		Entry("negative executors", dsl.Conf{stormAckerExecutors: -1}, `conf "topology.acker.executors": -1 is below the minimum 0`),
		Entry("tasks above 1024", dsl.Conf{stormAckerTasks: 2000}, `conf "topology.acker.tasks": 2000 is above the maximum 1024`),
		Entry("fractional tasks", dsl.Conf{stormAckerTasks: 1.5}, `conf "topology.acker.tasks": want a whole number, got 1.5`),
	)
})

var _ = Describe("A conf key goshelter does not know", Label("fidelity", "dsl-validation"), func() {
	const built = "topology built with a warning"

	// A typo in a conf key used to leave the default in force, silently.
	It("draws a warning at Build naming the closest known key, which Run logs at warn level", func() {
		b := dsl.New("typos", dsl.Conf{
			"topology.max.spout.pendng": 10,  // a typo of topology.max.spout.pending
			"topology.workers":          2,   // Storm's, accepted without use
			"myapp.endpoint":            "x", // the application's own: never checked
		})
		nums := b.Spout("nums", sheltertest.NewSource(Num{N: 1}).Spout())
		sink := b.Bolt("sink", dsl.AutoAck(func(Num, dsl.Emitter) error { return nil }),
			dsl.WithConf(dsl.Conf{"goshelter.batch.sise": 8, stormAckerExecutors: 2}))
		b.Anchored(nums, sink, dsl.Shuffle[Num]())
		topo := Build(b)
		want := []string{
			`conf "topology.max.spout.pendng" is not a key goshelter or Storm knows; the closest known key is "topology.max.spout.pending"`,
			`component "sink": conf "topology.acker.executors" has no effect in a component's conf; the ackers are the topology's, sized by its conf`,
			`component "sink": conf "goshelter.batch.sise" is not a key goshelter or Storm knows; the closest known key is "goshelter.batch.size"`,
		}
		Expect(topo.Warnings).To(Equal(want))

		logsOpt, logs := ObserveLogs()
		r := sheltertest.Start(GinkgoTB(), topo, logsOpt)
		var logged []string
		for _, e := range logs.FilterMessage(built).All() {
			Expect(e.Level).To(Equal(zapcore.WarnLevel))
			logged = append(logged, e.ContextMap()["warning"].(string))
		}
		Expect(logged).To(Equal(want), "each warning logged once, as Run starts")
		Stop(r)
	})

	// Storm's own keys (workers, serializers, schedulers, its queues) mean
	// nothing to one process; a conf written for Storm must not be noisy.
	// topology.tasks passes when it is the parallelism (1 here): see below.
	It("stays quiet for every key Storm defines and goshelter passes through, and for the conf its Flux export writes", func() {
		passed := dsl.Conf{
			"topology.tasks": 1, "topology.workers": 3, "topology.name": "x", "topology.kryo.register": []any{"a.B"},
			"topology.worker.childopts": "-Xmx1g", "topology.multilang.serializer": "org.apache.storm.multilang.JsonSerializer",
			"topology.executor.send.buffer.size": 1024, "topology.disruptor.wait.strategy": "x", "topology.producer.batch.size": 1,
			"topology.bolts.window.length.count": 3, "topology.state.checkpoint.interval.ms": 1000,
			"topology.acker.executors": 2, "topology.acker.tasks": 4, "topology.shellbolt.max.pending": 10,
			"topology.bolts.window.max.tuples": 100, "goshelter.multilang.metrics": true, "goshelter.multilang.log.level": "debug",
			"goshelter.acker.capacity": 100, "goshelter.batch.size": 8,
		}
		topo := fidelityChain("storm-keys", passed, sheltertest.NewSource(Num{N: 1}))
		Expect(topo.Warnings).To(BeEmpty())

		exported := dsl.Conf{}
		for k, v := range fluxConf(topo) {
			exported[k] = v
		}
		again := fidelityChain("storm-keys-again", exported, sheltertest.NewSource(Num{N: 1}))
		Expect(again.Warnings).To(BeEmpty(), "the conf Flux writes for Storm, read back")

		logsOpt, logs := ObserveLogs()
		Stop(sheltertest.Start(GinkgoTB(), topo, logsOpt))
		Expect(logs.FilterMessage(built).Len()).To(BeZero())
	})
})

// Issue 34, item 1: Storm reads a component's task count from "topology.tasks"
// (TopologyBuilder's setNumTasks; the topology's conf merged under the
// component's) and runs those tasks on parallelism executors. goshelter runs
// one task per executor, so it cannot honour another count than the
// parallelism: Build refuses it, naming the component and what to use,
// instead of running another number of tasks than the conf says.
var _ = Describe("Storm's per-component task count (topology.tasks)", Label("fidelity", "dsl-validation"), func() {
	build := func(conf, own dsl.Conf, parallelism int) (*dsl.Topology, error) {
		b := dsl.New("tasks", conf)
		nums := b.Spout("nums", sheltertest.NewSource(Num{N: 1}).Spout())
		b.Anchored(nums, b.Bolt("sink", dsl.AutoAck(func(Num, dsl.Emitter) error { return nil }),
			dsl.Parallelism(parallelism), dsl.WithConf(own)), dsl.Shuffle[Num]())
		return b.Build()
	}

	DescribeTable("is refused at Build when it is not the parallelism, naming the component and dsl.Parallelism",
		func(conf, own dsl.Conf, parallelism int, want string) {
			_, err := build(conf, own, parallelism)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("more tasks than executors, in the component's conf", nil, dsl.Conf{"topology.tasks": 4}, 2,
			`component "sink": conf "topology.tasks" (from its conf) is 4 but its parallelism is 2: goshelter runs each task on an executor of its own, so the task count is the parallelism; set it with dsl.Parallelism(4) and drop the key`),
		Entry("fewer, as a float from JSON", nil, dsl.Conf{"topology.tasks": 1.0}, 3,
			`component "sink": conf "topology.tasks" (from its conf) is 1 but its parallelism is 3`),
		Entry("from the topology's conf, which Storm applies to every component", dsl.Conf{"topology.tasks": 2}, nil, 2,
			`component "nums": conf "topology.tasks" (from the topology's conf) is 2 but its parallelism is 1`),
		Entry("out of range", nil, dsl.Conf{"topology.tasks": 0}, 1, `component "sink": conf "topology.tasks": 0 is below the minimum 1`),
		Entry("not a number", dsl.Conf{"topology.tasks": "2"}, nil, 1, `conf "topology.tasks": want a number, got string`),
	)

	It("is accepted without a warning when it is the parallelism", func() {
		topo, err := build(nil, dsl.Conf{"topology.tasks": 3}, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(topo.Warnings).To(BeEmpty())
		Expect(topo.Component("sink").Tasks).To(HaveLen(3))
		topo, err = build(dsl.Conf{"topology.tasks": 1}, dsl.Conf{"topology.tasks": 3}, 3)
		Expect(err).NotTo(HaveOccurred(), "the component's own value overrides the topology's")
		Expect(topo.Warnings).To(BeEmpty())
	})
})

var _ = Describe("A shell spout's lifecycle commands", Label("fidelity", "multilang"), func() {
	// The reference activates a spout before asking it for tuples and
	// deactivates it on stop; this was pinned only through start-up timing.
	It("sends activate exactly once before the first next, and deactivate on stop", func() {
		logsOpt, logs := ObserveLogs()
		b := dsl.New("ml-activate", dsl.Conf{dsl.MaxSpoutPending: 4})
		numbers := b.Spout("numbers", multilang.Spout[MLLine](python("lifecycle_spout.py", "3")))
		got := new(sheltertest.Recorder[MLLine])
		b.Anchored(numbers, b.Bolt("sink", got.Bolt()), dsl.Shuffle[MLLine]())
		// On the manual clock a spout with nothing more to emit is not asked
		// again: the child sees exactly its three emitting nexts and one more.
		r := sheltertest.Start(GinkgoTB(), Build(b), logsOpt, NewManualClock().Option())
		Eventually(got.Len).WithTimeout(Scaled(10 * time.Second)).Should(Equal(3))
		lifecycle := func() []string {
			var out []string
			for _, m := range messages(logs, zapcore.InfoLevel) {
				if m == "activate" || m == "first next" || m == "deactivate" {
					out = append(out, m)
				}
			}
			return out
		}
		Expect(lifecycle()).To(Equal([]string{"activate", "first next"}))
		Stop(r)
		Expect(lifecycle()).To(Equal([]string{"activate", "first next", "deactivate"}))
		expectReaped(childPids(logs))
	})
})

var _ = Describe("A task's data lane", Label("fidelity", "batching"), func() {
	// README and the actors doc state the bound in tuples, the reference's
	// unit: slots x batch size per task, plus one batch per sender.
	It("holds at most receive.buffer.size x goshelter.batch.size tuples, and a sender parks on it", func() {
		const slots, batch = 4, 8
		release, started := make(chan struct{}), make(chan struct{})
		var once sync.Once
		src := sheltertest.Generate(1000, func(i int) Num { return Num{N: i} })
		b := dsl.New("lane-bound", dsl.Conf{dsl.ReceiveBufferSize: slots, dsl.BatchSize: batch,
			dsl.MaxSpoutPending: 1000, dsl.BatchFlushInterval: 0})
		nums := b.Spout("nums", src.Spout())
		sink := b.Bolt("sink", dsl.AutoAck(func(Num, dsl.Emitter) error {
			once.Do(func() { close(started); <-release }) // the first input holds the task
			return nil
		}))
		b.Anchored(nums, sink, dsl.Shuffle[Num]())
		// With no flush interval a batch flushes when full (or when its
		// sender has nothing to do): a spout's burst is a batch long, so every
		// batch of this fast source carries 8 tuples.
		r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())
		Eventually(started).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
		// The batch being executed, a full lane, and the batch the spout is
		// parked with: 8 + 4 x 8 + 8.
		const bound = batch + slots*batch + batch
		handouts := func() int { return len(src.Handouts()) }
		Eventually(handouts).WithTimeout(Scaled(10 * time.Second)).Should(Equal(bound))
		Expect(r.Stats().Components["sink"].MailboxDepth).To(Equal(slots))
		Consistently(handouts).WithTimeout(Scaled(200*time.Millisecond)).Should(Equal(bound), "the spout stays parked")
		close(release)
		Expect(sheltertest.WaitIdle(kitCtx(), r)).To(Succeed())
		Expect(src.Acked()).To(HaveLen(1000))
		Stop(r)
		Expect(src.Verify()).To(Succeed())
	})
})
