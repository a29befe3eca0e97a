package specs_test

// Issue 20, item 3: a shell child that emits faster than its downstream takes
// is slowed down, so memory stays bounded, and topology.shellbolt.max.pending
// is range-checked like every other size.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
)

// floodHeapLimit is the most the heap may grow while a child floods.
const floodHeapLimit = 64 << 20

// floodSlack bounds what a slowed child may emit while nothing is taken: the
// pipe and the reader's buffer (64 KiB each) and what the host holds come to
// a few thousand of its 1 KiB emits; a child that is not slowed emits more
// than this in a fraction of a second.
const floodSlack = 10000

// heapInUse returns the bytes of heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// childCount reads how many tuples flood.py says it emitted (0 before its first report).
func childCount(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// logged returns the messages logged at level, each with its error if it has one.
func logged(logs *observer.ObservedLogs, level zapcore.Level) []string {
	var out []string
	for _, e := range logs.All() {
		if e.Level == level {
			out = append(out, fmt.Sprintf("%s: %v", e.Message, e.ContextMap()["error"]))
		}
	}
	return out
}

var _ = Describe("A shell child flooding a slow bolt", Label("edges", "multilang"), func() {
	// floodFor watches the heap while the child floods for d, sampling it
	// every 100 ms, and returns the highest growth seen.
	floodFor := func(d time.Duration, base uint64) (peak uint64) {
		GinkgoHelper()
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if h := heapInUse(); h > base && h-base > peak {
				peak = h - base
			}
			Expect(peak).To(BeNumerically("<", floodHeapLimit), "the heap grew by %d MiB", peak>>20)
			time.Sleep(100 * time.Millisecond) // sampling period, not a wait for an event
		}
		return peak
	}

	// floodTopology wires a flooding child into a bolt that takes nothing until
	// the gate opens, with small rings and a short subprocess timeout: the child
	// must not be taken for silent while it waits for the host.
	floodTopology := func(name string, child func(b *dsl.Builder) string) (b *dsl.Builder, gate chan struct{}, taken *atomic.Int64) {
		gate, taken = make(chan struct{}), &atomic.Int64{}
		b = dsl.New(name, dsl.Conf{dsl.ReceiveBufferSize: 2, dsl.BatchSize: 8, dsl.AckerTasks: 1, dsl.SubprocessTimeout: 600 * time.Millisecond})
		b.Streams(MLLine{})
		b.Unanchored(child(b), b.Bolt("slow", dsl.AutoAck(func(MLLine, dsl.Emitter) error {
			<-gate
			taken.Add(1)
			return nil
		})), dsl.Shuffle[MLLine]())
		return b, gate, taken
	}

	// expectSlowedThenFlowing runs the flood against the closed gate for a
	// while, checks the heap and the child's emits, then opens the gate and
	// checks that the flood flows again with no failure, and stops.
	expectSlowedThenFlowing := func(topo *dsl.Topology, count string, gate chan struct{}, taken *atomic.Int64, d time.Duration) {
		GinkgoHelper()
		logsOpt, logs := ObserveLogs()
		base := heapInUse()
		r := sheltertest.Start(GinkgoTB(), topo, logsOpt)
		DeferCleanup(func() { // runs before Start's stop, which runs before the count file's directory goes
			select {
			case <-gate:
			default:
				close(gate)
			}
		})

		By("flooding while the slow bolt takes nothing")
		Eventually(func() int { return childCount(count) }).WithTimeout(Scaled(10*time.Second)).Should(BeNumerically(">", 0), "the child started emitting")
		peak := floodFor(d, base)
		emitted := childCount(count)
		GinkgoWriter.Printf("heap growth %d KiB, child emitted %d\n", peak>>10, emitted)
		Expect(emitted).To(BeNumerically("<", floodSlack), "the child was slowed down to what the host holds")

		By("letting the slow bolt go: the flood flows again")
		close(gate)
		Eventually(taken.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeNumerically(">", int64(emitted)))
		// A standstill is the defect; how long the flow takes is the machine's
		// throughput (under -race on a loaded machine, 10 s once saw 7,000 of
		// these 11,000 emits): bound each wait for progress, not the whole.
		expectProgressTo(func() int64 { return int64(childCount(count)) }, emitted+floodSlack+1, Scaled(10*time.Second), "the child's emits after the gate opened")
		Expect(logged(logs, zapcore.ErrorLevel)).To(BeEmpty(), "a child waiting for the host is not silent")

		By("stopping while the child still floods")
		Stop(r)
		expectReaped(childPids(logs))
	}

	It("stops reading a bolt's child while its task's output is held: the heap stays bounded, the child is slowed, and flow and stop resume", func() {
		count := filepath.Join(GinkgoT().TempDir(), "count")
		b, gate, taken := floodTopology("ml-flood-bolt", func(b *dsl.Builder) string {
			cmd := python("flood.py", "bolt", count)
			cmd.Outputs = map[string]any{"default": MLLine{}}
			flood := b.Bolt("flood", multilang.Bolt(cmd))
			b.Unanchored(b.Spout("idle", CountTo(0)), flood, dsl.Shuffle[Num]())
			return flood
		})
		expectSlowedThenFlowing(Build(b), count, gate, taken, Scaled(2*time.Second))
	})

	It("stops reading a spout's child while its task's output is held, however many tuples one next emits", func() {
		count := filepath.Join(GinkgoT().TempDir(), "count")
		b, gate, taken := floodTopology("ml-flood-spout", func(b *dsl.Builder) string {
			return b.Spout("flood", multilang.Spout[MLLine](python("flood.py", "spout", count)))
		})
		expectSlowedThenFlowing(Build(b), count, gate, taken, Scaled(2*time.Second))
	})
})

var _ = Describe("A shell bolt whose inputs wait for its flooding child", Label("edges", "multilang"), func() {
	// The child reads its next input only once the host has read what it
	// emitted for the last one, and 16 KiB inputs fill its stdin pipe after a
	// few: the task then waits in Execute for room in the input queue while the
	// reader waits for the task. The task must take the child's emits while it
	// waits, or neither ever moves again.
	It("takes the child's emits while Execute waits for room for an input", func() {
		const inputs, perInput = 12, 3000
		lines := make([]MLLine, inputs)
		for i := range lines {
			lines[i] = MLLine{strings.Repeat(strconv.Itoa(i%10), 16<<10)}
		}
		src := sheltertest.NewSource(lines...)
		var taken atomic.Int64
		b := dsl.New("ml-flood-echo", dsl.Conf{"topology.shellbolt.max.pending": 1, dsl.AckerTasks: 1})
		b.Streams(MLWord{})
		cmd := python("flood.py", "echo", filepath.Join(GinkgoT().TempDir(), "count"))
		cmd.Outputs = map[string]any{"default": MLWord{}}
		echo := b.Bolt("echo", multilang.Bolt(cmd))
		b.Anchored(b.Spout("lines", src.Spout()), echo, dsl.Shuffle[MLLine]())
		b.Unanchored(echo, b.Bolt("count", dsl.AutoAck(func(MLWord, dsl.Emitter) error {
			taken.Add(1)
			return nil
		})), dsl.Shuffle[MLWord]())
		r := sheltertest.Start(GinkgoTB(), Build(b)) // its stop runs before the count file's directory goes
		expectProgressTo(taken.Load, inputs*perInput, Scaled(10*time.Second), "tuples taken from the child")
		Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(HaveLen(inputs))
		Expect(taken.Load()).To(Equal(int64(inputs*perInput)), "no tuple taken twice")
		Stop(r)
	})
})

// expectProgressTo waits until count reaches want, failing if it stands still
// for stall. The spec above pushes 36 MB of JSON through a child under -race:
// its duration is the machine's throughput (about 8 s alone, over 20 s under
// a loaded full run), while the defect it guards against is a standstill. A
// bound on the whole run failed a loaded machine; a bound on each wait for
// progress fails only a stall.
func expectProgressTo(count func() int64, want int, stall time.Duration, what string) {
	GinkgoHelper()
	for last := count(); last < int64(want); last = count() {
		Eventually(count).WithTimeout(stall).Should(BeNumerically(">", last), "%s stood still at %d of %d", what, last, want)
	}
}

var _ = Describe("topology.shellbolt.max.pending", Label("edges", "multilang"), func() {
	const key = "topology.shellbolt.max.pending"

	build := func(conf dsl.Conf) error {
		b := dsl.New("ml-max-pending", conf)
		b.Streams(MLWord{})
		src := sheltertest.NewSource(MLLine{"a"})
		b.Anchored(b.Spout("lines", src.Spout()), b.Bolt("split", multilang.Bolt(withOutputs(python("bolt.py", "split"), 0))), dsl.Shuffle[MLLine]())
		_, err := b.Build()
		return err
	}

	DescribeTable("is range-checked at Build, naming the key",
		func(v any, want string) {
			err := build(dsl.Conf{key: v})
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(key))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("zero", 0, "below the minimum 1"),
		Entry("negative", -5, "below the minimum 1"),
		Entry("above 2^31-1", int64(math.MaxInt32)+1, "above the maximum"),
		Entry("a fraction", 2.5, "whole number"),
		Entry("not a number", "100", "want a number"),
	)

	It("accepts 2^31-1, Storm's usual unlimited, without allocating for it up front", func() {
		Expect(build(dsl.Conf{key: math.MaxInt32})).To(Succeed())
		b := dsl.New("ml-unlimited", dsl.Conf{key: math.MaxInt32})
		b.Streams(MLWord{})
		src := sheltertest.NewSource(MLLine{"the cow jumped"})
		words := new(sheltertest.Recorder[MLWord])
		split := b.Bolt("split", multilang.Bolt(withOutputs(python("bolt.py", "split"), 0)))
		b.Anchored(b.Spout("lines", src.Spout()), split, dsl.Shuffle[MLLine]())
		b.Anchored(split, b.Bolt("sink", words.Bolt()), dsl.Shuffle[MLWord]())
		topo := Build(b)
		base := heapInUse()
		r := sheltertest.Start(GinkgoTB(), topo)
		Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1))
		Expect(heapInUse()).To(BeNumerically("<", base+floodHeapLimit), "no queue of 2^31-1 slots was allocated")
		Stop(r)
	})
})
