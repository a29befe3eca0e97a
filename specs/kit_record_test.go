package specs_test

// Specs of the kit's recording and starting helpers (issue 21, item 4):
// sheltertest.Recorder, the HandlerFunc and ManualFunc adapters, and Start.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// TaskCount is what the per-task counting bolt of the adapter specs emits.
type TaskCount struct {
	Task, Count int
}

var _ = Describe("sheltertest.Recorder", Label("kit", "kit-recorder"), func() {
	It("keeps what each task received, in order, with a key for every task, even one that got nothing", func() {
		everyone, lowest := new(sheltertest.Recorder[Num]), new(sheltertest.Recorder[Num])
		b := dsl.New("recorded", nil)
		numbers := b.Spout("numbers", CountTo(50))
		b.Unanchored(numbers, b.Bolt("everyone", everyone.Bolt(), dsl.Parallelism(3)), dsl.All[Num]())
		b.Unanchored(numbers, b.Bolt("lowest", lowest.Bolt(), dsl.Parallelism(3)), dsl.Global[Num]())
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Expect(everyone.Wait(waitCtx(10*time.Second), 150)).To(Succeed())
		Expect(lowest.Wait(waitCtx(10*time.Second), 50)).To(Succeed())
		byTask := everyone.ByTask()
		Expect(byTask).To(HaveLen(3))
		for _, task := range taskIDs(topo, "everyone") {
			Expect(byTask[task]).To(Equal(numRange(1, 50)), "task %d got every tuple, in the order emitted", task)
		}
		Expect(everyone.Len()).To(Equal(150))
		Expect(everyone.All()).To(HaveLen(150))

		tasks := taskIDs(topo, "lowest")
		Expect(lowest.ByTask()).To(Equal(map[int][]Num{tasks[0]: numRange(1, 50), tasks[1]: nil, tasks[2]: nil}))
		Expect(lowest.All()).To(Equal(numRange(1, 50)))
	})

	It("returns copies: a test cannot change what was recorded", func() {
		rec := new(sheltertest.Recorder[Num])
		b := dsl.New("copies", nil)
		b.Unanchored(b.Spout("numbers", CountTo(2)), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())
		Expect(rec.Wait(waitCtx(10*time.Second), 2)).To(Succeed())

		all, byTask := rec.All(), rec.ByTask()
		all[0] = Num{99}
		for task := range byTask {
			byTask[task][0] = Num{99}
		}
		Expect(rec.All()).To(Equal(numRange(1, 2)))
		for _, inputs := range rec.ByTask() {
			Expect(inputs).To(Equal(numRange(1, 2)))
		}
	})

	It("Wait returns once n inputs are recorded, and ctx's cause with the count when they are not", func() {
		rec := new(sheltertest.Recorder[Num])
		b := dsl.New("waits", nil)
		b.Unanchored(b.Spout("numbers", CountTo(5)), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Num]())
		sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())

		waited := make(chan error, 1)
		go func() { waited <- rec.Wait(context.Background(), 5) }() // waits from before the first input
		Eventually(waited).WithTimeout(Scaled(10 * time.Second)).Should(Receive(BeNil()))
		Expect(rec.Len()).To(Equal(5))
		Expect(rec.Wait(context.Background(), 0)).To(Succeed())

		ctx, cancel := context.WithCancelCause(context.Background())
		cause := errors.New("the spec gave up")
		cancel(cause)
		err := rec.Wait(ctx, 6)
		Expect(err).To(MatchError(cause))
		Expect(err.Error()).To(ContainSubstring("5 of 6 inputs recorded"))
	})

	It("Manual records each input before its handler acks, fails or holds it", func() {
		rec := new(sheltertest.Recorder[Num])
		src := sheltertest.NewSource(numRange(1, 6)...)
		held := make(chan dsl.Tuple, 6)
		b := dsl.New("manual-recorder", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
		numbers := b.Spout("numbers", src.Spout())
		b.Anchored(numbers, b.Bolt("settle", rec.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return sheltertest.ManualFunc[Num](func(n Num, input dsl.Tuple, c dsl.Collector) error {
				switch n.N % 3 {
				case 0:
					c.Ack(input)
				case 1:
					return fmt.Errorf("refusing %d", n.N) // an error fails the input
				default:
					held <- input // never settled: only the timeout ends its tree
				}
				return nil
			})
		})), dsl.Shuffle[Num]())
		clk := NewManualClock()
		r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option())

		Expect(rec.Wait(waitCtx(10*time.Second), 6)).To(Succeed())
		Expect(rec.All()).To(Equal(numRange(1, 6)), "every input, the held and failed ones too")
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(3, 6))
		Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(1, 4))
		Expect(held).To(HaveLen(2))

		clk.Advance(45 * time.Second) // the held inputs' trees time out
		Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(1, 4, 2, 5))
		Expect(sheltertest.WaitIdle(waitCtx(10*time.Second), r)).To(Succeed())
		Expect(src.Verify()).To(Succeed())
	})

	It("Manual passes tick tuples on to a handler with a Tick method, and does not record them", func() {
		rec := new(sheltertest.Recorder[Num])
		ticks := make(chan dsl.Tick, 10)
		b := dsl.New("manual-ticks", nil)
		numbers := b.Spout("numbers", CountTo(2))
		b.Unanchored(numbers, b.Bolt("ticked", rec.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
			return tickingAcker{ticks}
		}), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 1})), dsl.Shuffle[Num]())
		clk := NewManualClock()
		sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
		Expect(rec.Wait(waitCtx(10*time.Second), 2)).To(Succeed())

		clk.Advance(time.Second)
		Eventually(ticks).WithTimeout(Scaled(10 * time.Second)).Should(Receive(HaveField("RateSecs", 1)))
		Expect(rec.All()).To(Equal(numRange(1, 2)), "ticks are not inputs")
	})
})

// tickingAcker acks every input and reports every tick.
type tickingAcker struct{ ticks chan<- dsl.Tick }

func (h tickingAcker) Execute(_ Num, input dsl.Tuple, c dsl.Collector) error {
	c.Ack(input)
	return nil
}

func (h tickingAcker) Tick(t dsl.Tick, _ dsl.Collector) error {
	h.ticks <- t
	return nil
}

var _ = Describe("sheltertest.HandlerFunc and ManualFunc", Label("kit", "kit-adapters"), func() {
	It("adapt per-task closures to dsl.Handler and dsl.ManualHandler, each task keeping its own state", func() {
		src := sheltertest.NewSource(numRange(1, 4)...)
		counted := new(sheltertest.Recorder[TaskCount])
		count := dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
			n := 0 // this task's
			return sheltertest.HandlerFunc[Num](func(_ Num, out dsl.Emitter) error {
				n++
				out.Emit(TaskCount{Task: info.Task, Count: n})
				return nil
			})
		})
		ackPairs := dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[TaskCount] {
			var held []dsl.Tuple // this task's
			return sheltertest.ManualFunc[TaskCount](func(_ TaskCount, input dsl.Tuple, c dsl.Collector) error {
				if held = append(held, input); len(held) == 2 {
					c.Ack(held[0])
					c.Ack(held[1])
					held = nil
				}
				return nil
			})
		})
		b := dsl.New("adapters", nil).Streams(TaskCount{})
		numbers := b.Spout("numbers", src.Spout())
		counter := b.Bolt("count", count, dsl.Parallelism(2))
		b.Anchored(numbers, counter, dsl.All[Num]())
		b.Anchored(counter, b.Bolt("pairs", ackPairs), dsl.Shuffle[TaskCount]())
		b.Unanchored(counter, b.Bolt("record", counted.Bolt()), dsl.Shuffle[TaskCount]())
		topo := Build(b)
		sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())

		Expect(counted.Wait(waitCtx(10*time.Second), 8)).To(Succeed())
		perTask := map[int][]int{}
		for _, c := range counted.All() {
			perTask[c.Task] = append(perTask[c.Task], c.Count)
		}
		tasks := taskIDs(topo, "count")
		Expect(perTask).To(Equal(map[int][]int{tasks[0]: {1, 2, 3, 4}, tasks[1]: {1, 2, 3, 4}}))
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2, 3, 4))
	})
})

var _ = Describe("sheltertest.Start", Label("kit", "kit-start"), func() {
	// build is a topology that records what its one bolt gets.
	build := func(name string, rec *sheltertest.Recorder[Num], n int) *dsl.Topology {
		b := dsl.New(name, nil)
		b.Unanchored(b.Spout("numbers", CountTo(n)), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Num]())
		return Build(b)
	}

	It("runs the topology until the test ends, then stops it and fails nothing when nothing is left behind", func() {
		t := &fakeTB{}
		rec := new(sheltertest.Recorder[Num])
		r := sheltertest.Start(t, build("started", rec, 3), NewManualClock().Option())
		Expect(rec.Wait(waitCtx(10*time.Second), 3)).To(Succeed())
		Expect(r.Done()).NotTo(BeClosed(), "running while the test runs")

		t.end()
		Expect(r.Done()).To(BeClosed(), "stopped when the test ended")
		Expect(t.failures()).To(BeEmpty())
	})

	It("leaves no false alarm after a topology with child processes: its children, pipes and goroutines are gone", func() {
		t := &fakeTB{}
		words := new(sheltertest.Recorder[MLWord])
		src := sheltertest.NewSource(MLLine{"the cow jumped"}, MLLine{"over the moon"})
		b := dsl.New("started-shell", nil).Streams(MLWord{})
		lines := b.Spout("lines", src.Spout())
		split := b.Bolt("split", multilang.Bolt(withOutputs(python("bolt.py", "split"), 300*time.Millisecond)), dsl.Parallelism(2))
		b.Anchored(lines, split, dsl.Shuffle[MLLine]())
		b.Anchored(split, b.Bolt("sink", words.Bolt()), dsl.Shuffle[MLWord]())
		r := sheltertest.Start(t, Build(b))
		Expect(words.Wait(waitCtx(10*time.Second), 6)).To(Succeed())
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2))

		t.end()
		Expect(r.Done()).To(BeClosed())
		Expect(t.failures()).To(BeEmpty())
	})

	It("accepts a topology the test stopped itself", func() {
		t := &fakeTB{}
		r := sheltertest.Start(t, build("stopped-early", new(sheltertest.Recorder[Num]), 1))
		Stop(r)
		t.end()
		Expect(t.failures()).To(BeEmpty())
	})

	It("sends the runtime's warnings to t.Logf, and stops sending when the test ends", func() {
		t := &fakeTB{}
		refused := make(chan struct{}, 1)
		b := dsl.New("logged", nil)
		b.Unanchored(b.Spout("numbers", CountTo(1)), b.Bolt("refuse", dsl.AutoAck(func(Num, dsl.Emitter) error {
			refused <- struct{}{}
			return errors.New("no thanks")
		})), dsl.Shuffle[Num]())
		sheltertest.Start(t, Build(b))
		Eventually(refused).WithTimeout(Scaled(10 * time.Second)).Should(Receive())
		Eventually(t.logged).Should(ContainElement(And(ContainSubstring("bolt failed its input"), ContainSubstring("no thanks"))))

		t.end()
		logged := len(t.logged())
		Expect(t.failures()).To(BeEmpty())
		Consistently(func() int { return len(t.logged()) }).Should(Equal(logged))
	})

	It("runs under ginkgo with GinkgoTB(): the spec's cleanup stops the topology", func() {
		rec := new(sheltertest.Recorder[Num])
		r := sheltertest.Start(GinkgoTB(), build("ginkgo", rec, 2), NewManualClock().Option())
		DeferCleanup(func() { // registered after Start's, so it runs before it
			Expect(r.Done()).NotTo(BeClosed())
		})
		Expect(rec.Wait(waitCtx(10*time.Second), 2)).To(Succeed())
	})

	// Each entry leaves something behind after Start; the fake test must fail
	// with a message naming it. The spec then releases it, so that the
	// suite's own leak check passes.
	DescribeTable("fails the test when something started during it outlives it",
		func(leave []func() (release func()), want, notWant []string) {
			if _, err := os.Stat("/proc/self/fd"); err != nil {
				Skip("no /proc here: the fd and child checks are skipped")
			}
			t := &fakeTB{}
			r := sheltertest.Start(t, build("leaky", new(sheltertest.Recorder[Num]), 1))
			for _, f := range leave {
				DeferCleanup(f())
			}

			t.end()
			Expect(r.Done()).To(BeClosed())
			failures := t.failures()
			Expect(failures).To(HaveLen(1), "one failure naming every problem")
			Expect(failures[0]).To(HavePrefix("sheltertest: "))
			for _, w := range want {
				Expect(failures[0]).To(ContainSubstring(w))
			}
			for _, w := range notWant {
				Expect(failures[0]).NotTo(ContainSubstring(w))
			}
		},
		Entry("a goroutine", []func() func(){leaveGoroutine},
			[]string{"a goroutine outlived the test", "leaveGoroutine"},
			[]string{"file descriptors outlived", "child processes outlived"}),
		Entry("a file descriptor", []func() func(){leaveFD},
			[]string{"file descriptors outlived the test: ", "pipe:["},
			[]string{"goroutine outlived", "child processes outlived"}),
		// Go keeps a pidfd for each child it started until it is waited for:
		// that fd is left behind too.
		Entry("a child process", []func() func(){leaveChild},
			[]string{"child processes outlived the test: pid ", "(sleep, state "},
			[]string{"goroutine outlived", "pipe:["}),
		Entry("all three at once", []func() func(){leaveGoroutine, leaveFD, leaveChild},
			[]string{"a goroutine outlived the test", "file descriptors outlived the test: ", "pipe:[", "child processes outlived the test: pid "},
			nil),
	)

	It("fails the test when the topology does not stop cleanly, naming the stuck task", func() {
		t := &fakeTB{}
		release, executing := make(chan struct{}), make(chan struct{})
		b := dsl.New("stuck", nil)
		b.Unanchored(b.Spout("numbers", CountTo(1)), b.Bolt("stuck", dsl.AutoAck(func(Num, dsl.Emitter) error {
			close(executing)
			<-release // not even the task's Context ends this
			return nil
		})), dsl.Shuffle[Num]())
		sheltertest.Start(t, Build(b), supervision.WithDrainTimeout(time.Millisecond))
		DeferCleanup(func() { close(release) })
		Eventually(executing).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())

		t.end()
		failures := t.failures()
		Expect(failures).To(HaveLen(1))
		Expect(failures[0]).To(ContainSubstring(`stopping topology "stuck"`))
		Expect(failures[0]).To(ContainSubstring("still running user code"))
	})
})

// leaveGoroutine starts a goroutine that blocks until released.
func leaveGoroutine() (release func()) {
	done := make(chan struct{})
	go func() { <-done }()
	return func() { close(done) }
}

// leaveFD opens a pipe and keeps it open until released.
func leaveFD() (release func()) {
	r, w, err := os.Pipe()
	Expect(err).NotTo(HaveOccurred())
	return func() { r.Close(); w.Close() }
}

// leaveChild starts a child process and leaves it running until released.
func leaveChild() (release func()) {
	cmd := exec.Command("sleep", "60")
	Expect(cmd.Start()).To(Succeed())
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// fakeTB is the testing.TB a spec hands to sheltertest.Start, to see what
// Start does to a test without failing the spec: it records failures and log
// lines, and runs the cleanups when the spec ends the "test".
type fakeTB struct {
	testing.TB // nil: a method Start should not call panics

	mu       sync.Mutex // mu guards the fields below
	cleanups []func()
	errs     []string
	logs     []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	Fail("the fake test failed fatally: " + fmt.Sprintf(format, args...))
}

func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// end runs the cleanups, last registered first, as a test does when it ends.
func (f *fakeTB) end() {
	f.mu.Lock()
	cleanups := f.cleanups
	f.cleanups = nil
	f.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

func (f *fakeTB) failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

func (f *fakeTB) logged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.logs...)
}

// numRange returns Num{from} .. Num{to}.
func numRange(from, to int) []Num {
	var out []Num
	for i := from; i <= to; i++ {
		out = append(out, Num{N: i})
	}
	return out
}

// waitCtx is a context ending after a scaled d, cancelled when the spec ends.
func waitCtx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(d))
	DeferCleanup(cancel)
	return ctx
}
