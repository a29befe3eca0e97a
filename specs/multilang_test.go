package specs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The streams of the multilang specs. MLNumber and MLDoubled are also declared,
// under the same names, by the Go runner in testdata/multilang/gorunner.
type MLLine struct {
	Text string `storm:"line"`
}

type MLWord struct {
	Text string `storm:"word"`
}

type MLNumber struct{ N int }

type MLDoubled struct{ N int }

// scripts is the directory of the Python and Node test children.
func scripts() string {
	GinkgoHelper()
	dir, err := filepath.Abs(filepath.Join("testdata", "multilang"))
	Expect(err).NotTo(HaveOccurred())
	return dir
}

// withOutputs declares the split bolt's output stream and grace period (zero: the default).
func withOutputs(cmd multilang.Command, grace time.Duration) multilang.Command {
	cmd.Outputs = map[string]any{"default": MLWord{}}
	cmd.GracePeriod = grace
	return cmd
}

func python(args ...string) multilang.Command {
	return multilang.Command{Path: "python3", Args: append([]string{"-u"}, args...), Dir: scripts()}
}

// childPids returns the pids of the children the host started, from its logs.
func childPids(logs *observer.ObservedLogs) []int {
	var pids []int
	for _, e := range logs.FilterMessage("child started").All() {
		pids = append(pids, int(e.ContextMap()["pid"].(int64)))
	}
	return pids
}

// expectReaped checks that every child is gone: not running, and not a zombie
// either (kill(pid, 0) succeeds on a zombie).
func expectReaped(pids []int) {
	GinkgoHelper()
	Expect(pids).NotTo(BeEmpty())
	for _, pid := range pids {
		Expect(syscall.Kill(pid, 0)).To(MatchError(syscall.ESRCH), "child %d is still there", pid)
	}
}

// helperPids returns the pids of the helpers the "spawn" children started.
func helperPids(logs *observer.ObservedLogs) []int {
	var pids []int
	for _, m := range messages(logs, zapcore.InfoLevel) {
		var pid int
		if _, err := fmt.Sscanf(m, "helper %d", &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// expectDead checks that none of pids runs any more. They are not our children
// (their parent died first), so they may linger as zombies until init reaps
// them; a zombie is dead.
func expectDead(pids []int) {
	GinkgoHelper()
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		Expect(fields[0]).To(Equal("Z"), "helper %d is still running (state %s)", pid, fields[0])
	}
}

// openFds counts this process's open file descriptors.
func openFds() int {
	GinkgoHelper()
	fds, err := os.ReadDir("/proc/self/fd")
	Expect(err).NotTo(HaveOccurred())
	return len(fds)
}

// messages returns the logged messages at level.
func messages(logs *observer.ObservedLogs, level zapcore.Level) []string {
	var out []string
	for _, e := range logs.All() {
		if e.Level == level {
			out = append(out, e.Message)
		}
	}
	return out
}

// splitTopology is lines (a reliable Go spout) -> split (a shell bolt) -> sink.
func splitTopology(name string, src *sheltertest.Source[MLLine], cmd multilang.Command, words *sheltertest.Recorder[MLWord], opts ...dsl.Option) *dsl.Topology {
	b := dsl.New(name, dsl.Conf{dsl.AckerTasks: 2})
	b.Streams(MLWord{})
	lines := b.Spout("lines", src.Spout())
	split := b.Bolt("split", multilang.Bolt(withOutputs(cmd, 300*time.Millisecond)), opts...)
	sink := b.Bolt("sink", words.Bolt())
	b.Anchored(lines, split, dsl.Shuffle[MLLine]())
	b.Anchored(split, sink, dsl.Shuffle[MLWord]())
	return Build(b)
}

func texts(d *sheltertest.Recorder[MLWord]) []string {
	var out []string
	for _, w := range d.All() {
		out = append(out, w.Text)
	}
	return out
}

// quickTimeout keeps heartbeat timeouts short: topology.subprocess.timeout.secs.
var quickTimeout = dsl.WithConf(dsl.Conf{dsl.SubprocessTimeout: 600 * time.Millisecond})

var _ = Describe("Multilang: shell components hosted by goshelter", Label("multilang"), func() {
	var (
		logsOpt supervision.Option
		logs    *observer.ObservedLogs
	)
	BeforeEach(func() {
		logsOpt, logs = ObserveLogs()
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() { // the host's logs explain most failures
				for _, e := range logs.All() {
					fmt.Fprintf(GinkgoWriter, "%v %s %v\n", e.Level, e.Message, e.ContextMap())
				}
			}
		})
	})

	Context("a Python bolt that behaves like Storm's official client", func() {
		It("splits sentences, blocking for task ids after each emit, and every tree is acked; the child is reaped on stop", func() {
			src := sheltertest.NewSource(MLLine{"the cow jumped"}, MLLine{"over the moon"})
			words := new(sheltertest.Recorder[MLWord])
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-python-split", src, python("bolt.py", "split"), words, dsl.Parallelism(2)), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1, 2))
			Expect(texts(words)).To(ConsistOf("the", "cow", "jumped", "over", "the", "moon"))
			Expect(src.Nacked()).To(BeEmpty())
			Stop(r)
			Expect(childPids(logs)).To(HaveLen(2))
			expectReaped(childPids(logs))
		})

		It("emits directly to a task id it found in the handshake's context", func() {
			src := sheltertest.NewSource(MLLine{"straight to you"})
			words := new(sheltertest.Recorder[MLWord])
			b := dsl.New("ml-python-direct", nil)
			b.Streams(MLWord{})
			lines := b.Spout("lines", src.Spout())
			split := b.Bolt("split", multilang.Bolt(withOutputs(python("bolt.py", "direct"), 0)))
			sink := b.Bolt("sink", words.Bolt(), dsl.Parallelism(3))
			b.Anchored(lines, split, dsl.Shuffle[MLLine]())
			b.Anchored(split, sink, dsl.Direct[MLWord]())
			topo := Build(b)
			r := sheltertest.Start(GinkgoTB(), topo, logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1))
			tasks := topo.Component("sink").Tasks
			byTask := words.ByTask()
			Expect(byTask).To(HaveKeyWithValue(tasks[2], ConsistOf(MLWord{"straight"}, MLWord{"to"}, MLWord{"you"})))
			Expect(byTask[tasks[0]]).To(BeEmpty(), "only the third task got words")
			Expect(byTask[tasks[1]]).To(BeEmpty(), "only the third task got words")
			Stop(r)
		})

		It("logs at the child's levels, reports its errors and records its metrics in the task's stats", func() {
			src := sheltertest.NewSource(MLLine{"a b c"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-python-report", src, python("bolt.py", "report"), new(sheltertest.Recorder[MLWord])), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1))
			Expect(messages(logs, zapcore.DebugLevel)).To(ContainElements("level 0 from python", "level 1 from python"))
			Expect(messages(logs, zapcore.InfoLevel)).To(ContainElements("level 2 from python", "no level from python"))
			Expect(messages(logs, zapcore.WarnLevel)).To(ContainElement("level 3 from python"))
			Expect(messages(logs, zapcore.ErrorLevel)).To(ContainElements("level 4 from python", "shell component reported an error"))
			Eventually(func() any { return r.Stats().Components["split"].Metrics["words-seen"] }).Should(Equal(map[string]any{"count": float64(3)}))
			Stop(r)
		})

		It("accepts an emit while the child initializes, before any input", func() {
			src := sheltertest.NewSource(MLLine{"x"})
			words := new(sheltertest.Recorder[MLWord])
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-python-init", src, python("bolt.py", "init-emit"), words), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1))
			Eventually(func() []string { return texts(words) }).Should(ConsistOf("hello-from-init", "x"))
			Stop(r)
		})

		It("treats acks and fails of unknown ids as bad input: logged, not fatal", func() {
			src := sheltertest.NewSource(MLLine{"still working"})
			words := new(sheltertest.Recorder[MLWord])
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-python-unknown", src, python("bolt.py", "unknown-ack"), words), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1))
			Expect(texts(words)).To(ConsistOf("still", "working"))
			unknown := logs.FilterMessage("child settled an unknown input id (bad input, ignored)").All()
			Expect(unknown).To(HaveLen(2))
			Expect(unknown[0].ContextMap()).To(HaveKeyWithValue("id", `"no-such-id"`))
			Stop(r)
		})

		It("reads a flood on stderr on its own goroutine, so the child never blocks, and rate-limits its logging", func() {
			src := sheltertest.NewSource(MLLine{"one"}, MLLine{"two"}, MLLine{"three"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-python-flood", src, python("bolt.py", "flood"), new(sheltertest.Recorder[MLWord])), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1, 2, 3))
			Stop(r)
			Expect(logs.FilterMessage("child stderr").Len()).To(BeNumerically("<", 6000))
			Expect(logs.FilterMessage("child stderr lines not logged (rate limit)").Len()).To(BeNumerically(">", 0))
		})
	})

	Context("a Node bolt that behaves like Storm's official client", func() {
		It("splits frames on the end line, anchors with a single string and acks asynchronously", func() {
			src := sheltertest.NewSource(MLLine{"snow white"}, MLLine{"and the seven dwarfs"})
			words := new(sheltertest.Recorder[MLWord])
			cmd := multilang.Command{Path: "node", Args: []string{"bolt.js"}, Dir: scripts()}
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-node-split", src, cmd, words), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1, 2))
			Expect(texts(words)).To(ConsistOf("SNOW", "WHITE", "AND", "THE", "SEVEN", "DWARFS"))
			Stop(r)
			expectReaped(childPids(logs))
		})
	})

	Context("a Python spout", func() {
		spoutTopology := func(name, mode string, n int, got *sheltertest.Recorder[MLLine]) *dsl.Topology {
			b := dsl.New(name, dsl.Conf{dsl.MaxSpoutPending: 4, dsl.AckerTasks: 1})
			numbers := b.Spout("numbers", multilang.Spout[MLLine](python("spout.py", mode, fmt.Sprint(n))))
			sink := b.Bolt("sink", got.Bolt())
			b.Anchored(numbers, sink, dsl.Shuffle[MLLine]())
			return Build(b)
		}

		It("answers next, ack and activate with sync, and every numeric message id is acked back to it", func() {
			got := new(sheltertest.Recorder[MLLine])
			r := sheltertest.Start(GinkgoTB(), spoutTopology("ml-python-spout", "count", 20, got), logsOpt)
			Eventually(func() []string { return messages(logs, zapcore.InfoLevel) }).WithTimeout(Scaled(10 * time.Second)).Should(ContainElement("done"))
			Expect(got.Len()).To(Equal(20))
			Expect(logs.FilterMessage("acked 20").Len()).To(Equal(1))
			Stop(r)
			expectReaped(childPids(logs))
		})

		// Issue 11, item 4: one next of a shell spout may emit many tuples.
		It("is asked for more only below max spout pending, however many tuples one next emits, and every emit counts", Label("edges"), func() {
			b := dsl.New("ml-burst", dsl.Conf{dsl.MaxSpoutPending: 5, dsl.AckerTasks: 1})
			numbers := b.Spout("numbers", multilang.Spout[MLLine](python("spout.py", "burst", "150")))
			got := new(sheltertest.Recorder[MLLine])
			b.Anchored(numbers, b.Bolt("sink", got.Bolt()), dsl.Shuffle[MLLine]())
			r := sheltertest.Start(GinkgoTB(), Build(b), logsOpt)
			Eventually(func() []string { return messages(logs, zapcore.InfoLevel) }).WithTimeout(Scaled(10 * time.Second)).Should(ContainElement("done"))
			var inFlight []int
			for _, m := range messages(logs, zapcore.InfoLevel) {
				var k int
				if _, err := fmt.Sscanf(m, "next with %d in flight", &k); err == nil {
					inFlight = append(inFlight, k)
				}
			}
			Expect(len(inFlight)).To(BeNumerically(">=", 3), "three nexts emit the 150 tuples")
			Expect(inFlight).To(HaveEach(BeNumerically("<", 5)), "next is asked only below max spout pending")
			Expect(got.Len()).To(Equal(150))
			stats := r.Stats().Components["numbers"]
			Expect(stats.Emitted).To(Equal(int64(150)))
			Expect(stats.Acked).To(Equal(int64(150)))
			Stop(r)
		})

		It("emits directly to a task id it found in the handshake's context, tracked or not", func() {
			got := new(sheltertest.Recorder[MLLine])
			b := dsl.New("ml-python-spout-direct", dsl.Conf{dsl.MaxSpoutPending: 4, dsl.AckerTasks: 1})
			numbers := b.Spout("numbers", multilang.Spout[MLLine](python("spout.py", "direct", "6")))
			sink := b.Bolt("sink", got.Bolt(), dsl.Parallelism(3))
			b.Anchored(numbers, sink, dsl.Direct[MLLine]())
			topo := Build(b)
			r := sheltertest.Start(GinkgoTB(), topo, logsOpt)
			Eventually(func() []string { return messages(logs, zapcore.InfoLevel) }).WithTimeout(Scaled(10 * time.Second)).Should(ContainElement("done"))
			Expect(logs.FilterMessage("acked 1").Len() + logs.FilterMessage("acked 3").Len() + logs.FilterMessage("acked 5").Len()).To(Equal(3))
			Eventually(got.Len).Should(Equal(6))
			Expect(got.ByTask()).To(HaveKeyWithValue(topo.Component("sink").Tasks[2], HaveLen(6)))
			Stop(r)
		})

		It("may emit while initializing and use string message ids", func() {
			got := new(sheltertest.Recorder[MLLine])
			r := sheltertest.Start(GinkgoTB(), spoutTopology("ml-python-spout-strings", "strings", 5, got), logsOpt)
			Eventually(func() []string { return messages(logs, zapcore.InfoLevel) }).WithTimeout(Scaled(10 * time.Second)).Should(ContainElement("done"))
			Expect(logs.FilterMessage("acked m-0").Len()).To(Equal(1))
			Expect(got.Len()).To(Equal(6))
			Stop(r)
		})
	})

	// Each of these paths could be changed with every other test green
	// (mutation runs, issue 13): a child's fail taken for an ack, ack sent to
	// a spout instead of fail, no deactivate, no heartbeats.
	Context("the paths between the host and a shell child, each pinned", func() {
		It("fails the tree of an input a bolt's child fails, and acks only what it acks", func() {
			src := sheltertest.NewSource(MLLine{"good words"}, MLLine{"bad words"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-child-fails", src, python("bolt.py", "fail"), new(sheltertest.Recorder[MLWord])), logsOpt)
			Eventually(func() int { return len(src.Outcomes()) }).WithTimeout(Scaled(10 * time.Second)).Should(Equal(2))
			Expect(src.Acked()).To(ConsistOf(1))
			Expect(src.Nacked()).To(ConsistOf(2))
			Stop(r)
			Expect(src.Verify()).To(Succeed())
		})

		It("sends fail, not ack, to a spout's child for a failed tree, and deactivate when it stops", func() {
			b := dsl.New("ml-spout-fail", dsl.Conf{dsl.MaxSpoutPending: 4, dsl.AckerTasks: 1})
			numbers := b.Spout("numbers", multilang.Spout[MLLine](python("spout.py", "count", "3")))
			failedOnce := false
			sink := b.Bolt("sink", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[MLLine] {
				return sheltertest.ManualFunc[MLLine](func(in MLLine, input dsl.Tuple, c dsl.Collector) error {
					if in.Text == "2" && !failedOnce { // the child replays it
						failedOnce = true
						c.Fail(input)
						return nil
					}
					c.Ack(input)
					return nil
				})
			}))
			b.Anchored(numbers, sink, dsl.Shuffle[MLLine]())
			r := sheltertest.Start(GinkgoTB(), Build(b), logsOpt)
			Eventually(func() []string { return messages(logs, zapcore.InfoLevel) }).WithTimeout(Scaled(10 * time.Second)).Should(ContainElement("done"))
			Expect(logs.FilterMessage("failed 2").Len()).To(Equal(1))
			Expect(logs.FilterMessage("acked 2").Len()).To(Equal(1)) // the replay
			Expect(logs.FilterMessage("deactivated").Len()).To(BeZero())
			Stop(r)
			Expect(logs.FilterMessage("deactivated").Len()).To(Equal(1))
		})

		It("sends a bolt's child heartbeats, which it answers with sync", func() {
			src := sheltertest.NewSource(MLLine{"beat"})
			cmd := python("bolt.py", "heartbeats")
			cmd.Heartbeat = 10 * time.Millisecond
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-heartbeats", src, cmd, new(sheltertest.Recorder[MLWord])), logsOpt)
			Eventually(func() int { return logs.FilterMessage("heartbeat 3").Len() }).WithTimeout(Scaled(10 * time.Second)).Should(Equal(1))
			Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1))
			Stop(r)
		})
	})

	Context("process hygiene", func() {
		It("kills the helpers a child started when it dies on its own, on every restart", func() {
			src := sheltertest.NewSource(MLLine{"doomed"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-helpers", src, python("bolt.py", "spawn"), new(sheltertest.Recorder[MLWord])), logsOpt,
				Restarts(time.Millisecond, time.Millisecond, 3))
			for i := 2; i <= 4; i++ { // each incarnation's child dies on its first input
				Eventually(func() int { return r.Stats().Incarnation }).WithTimeout(Scaled(10 * time.Second)).Should(Equal(i))
				src.Push(MLLine{"doomed too"})
			}
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
			Expect(r.Wait()).To(MatchError(supervision.ErrGaveUp))
			helpers := helperPids(logs)
			Expect(helpers).To(HaveLen(4))
			expectDead(helpers)
			expectReaped(childPids(logs))
		})

		It("closes the pipes of a dead child at once, without waiting for the garbage collector", func() {
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			before := openFds()
			src := sheltertest.NewSource(MLLine{"doomed"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-fds", src, python("bolt.py", "die"), new(sheltertest.Recorder[MLWord])), logsOpt,
				Restarts(time.Millisecond, time.Millisecond, 5))
			for i := 2; i <= 6; i++ {
				Eventually(func() int { return r.Stats().Incarnation }).WithTimeout(Scaled(10 * time.Second)).Should(Equal(i))
				src.Push(MLLine{"doomed too"})
			}
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
			Expect(childPids(logs)).To(HaveLen(6))
			Expect(openFds()).To(BeNumerically("<=", before), "six children died; their pipes must be closed")
		})
	})

	Context("misbehaving children fail their task; their inputs are nacked and the child is reaped", func() {
		// failing runs the split topology without restarts and returns why it ended.
		failing := func(name, mode string, opts ...dsl.Option) (*sheltertest.Source[MLLine], error) {
			src := sheltertest.NewSource(MLLine{"doomed input"})
			r := sheltertest.Start(GinkgoTB(), splitTopology(name, src, python("bolt.py", mode), new(sheltertest.Recorder[MLWord]), opts...), logsOpt, supervision.WithoutRestarts())
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
			return src, r.Wait()
		}

		It("a child that never answers is failed by the heartbeat timeout", func() {
			src, err := failing("ml-silent", "silent", quickTimeout)
			var te *supervision.TaskError
			Expect(errors.As(err, &te)).To(BeTrue(), "got %v", err)
			Expect(te.Component).To(Equal("split"))
			Expect(err).To(MatchError(multilang.ErrChildFailed))
			Expect(err).To(MatchError(multilang.ErrTimeout))
			Expect(src.Nacked()).To(ConsistOf(1))
			expectReaped(childPids(logs))
		})

		It("a child that dies mid-tuple fails the task with its exit status and stderr", func() {
			src, err := failing("ml-die", "die")
			Expect(err).To(MatchError(multilang.ErrChildFailed))
			Expect(err.Error()).To(ContainSubstring("exit status 3"))
			Expect(err.Error()).To(ContainSubstring("dying on purpose"))
			Expect(src.Nacked()).To(ConsistOf(1))
			expectReaped(childPids(logs))
		})

		It("a child that writes garbage fails the task with an error naming the component and the data", func() {
			src, err := failing("ml-garbage", "garbage")
			var te *supervision.TaskError
			Expect(errors.As(err, &te)).To(BeTrue(), "got %v", err)
			Expect(te.Component).To(Equal("split"))
			Expect(err).To(MatchError(multilang.ErrChildFailed))
			Expect(err.Error()).To(ContainSubstring(`"this is not json"`))
			Expect(src.Nacked()).To(ConsistOf(1))
			expectReaped(childPids(logs))
		})

		It("a spout child that hangs in next is failed once it has not synced within the timeout", func() {
			b := dsl.New("ml-hang", dsl.Conf{dsl.SubprocessTimeout: 600 * time.Millisecond})
			numbers := b.Spout("numbers", multilang.Spout[MLLine](python("spout.py", "hang")))
			b.Anchored(numbers, b.Bolt("sink", new(sheltertest.Recorder[MLLine]).Bolt()), dsl.Shuffle[MLLine]())
			r := sheltertest.Start(GinkgoTB(), Build(b), logsOpt, supervision.WithoutRestarts())
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
			Expect(r.Wait()).To(MatchError(multilang.ErrTimeout))
			Expect(r.Wait().Error()).To(ContainSubstring(`after "next"`))
			expectReaped(childPids(logs))
		})

		It("a child that ignores the termination signal is killed after the grace period", func() {
			src := sheltertest.NewSource(MLLine{"stubborn"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-ignore-term", src, python("bolt.py", "ignore-term"), new(sheltertest.Recorder[MLWord])), logsOpt)
			Eventually(func() []int { return src.Acked() }).WithTimeout(Scaled(10 * time.Second)).Should(ConsistOf(1))
			Stop(r)
			Expect(logs.FilterMessage("child ignored the termination signal; killing it").Len()).To(Equal(1))
			expectReaped(childPids(logs))
		})

		It("a failed child's topology is restarted under supervision with a fresh child", func() {
			src := sheltertest.NewSource(MLLine{"doomed"})
			r := sheltertest.Start(GinkgoTB(), splitTopology("ml-restart", src, python("bolt.py", "die"), new(sheltertest.Recorder[MLWord])), logsOpt,
				Restarts(time.Millisecond, time.Millisecond, 1))
			Eventually(func() int { return r.Stats().Incarnation }).WithTimeout(Scaled(10 * time.Second)).Should(Equal(2))
			src.Push(MLLine{"doomed too"})
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
			Expect(r.Wait()).To(MatchError(supervision.ErrGaveUp))
			Expect(childPids(logs)).To(HaveLen(2))
			expectReaped(childPids(logs))
		})
	})
})

var _ = Describe("Multilang: goshelter's runner serving Go components to goshelter's host", Label("multilang"), Ordered, func() {
	var runner string
	BeforeAll(func() {
		dir := GinkgoT().TempDir()
		runner = filepath.Join(dir, "gorunner")
		build := exec.Command("go", "build", "-o", runner, "./testdata/multilang/gorunner")
		build.Stderr = GinkgoWriter
		Expect(build.Run()).To(Succeed())
	})

	It("runs a Go spout and a Go bolt as subprocesses, with a full round trip of acks", func() {
		logsOpt, logs := ObserveLogs()
		got := new(sheltertest.Recorder[MLDoubled])
		b := dsl.New("ml-go-runner", dsl.Conf{"ml.count": 20, dsl.AckerTasks: 2})
		b.Streams(MLDoubled{})
		numbers := b.Spout("numbers", multilang.Spout[MLNumber](multilang.Command{Path: runner, Args: []string{"serve"}}))
		double := b.Bolt("double", multilang.Bolt(multilang.Command{Path: runner, Args: []string{"serve"}}), dsl.Parallelism(2))
		sink := b.Bolt("sink", got.Bolt())
		b.Anchored(numbers, double, dsl.Shuffle[MLNumber]())
		b.Anchored(double, sink, dsl.Shuffle[MLDoubled]())
		r := sheltertest.Start(GinkgoTB(), Build(b), logsOpt)
		Eventually(func() []string {
			var out []string
			for _, m := range messages(logs, zapcore.InfoLevel) {
				out = append(out, strings.SplitN(m, "\t", 2)[0])
			}
			return out
		}).WithTimeout(Scaled(15 * time.Second)).Should(ContainElement("done"))
		var doubled []int
		for _, d := range got.All() {
			doubled = append(doubled, d.N)
		}
		Expect(doubled).To(HaveLen(20))
		Expect(doubled).To(ContainElements(2, 40))
		Expect(r.Stats().Components["double"].Metrics).To(HaveKey("seen"))
		Stop(r)
		Expect(childPids(logs)).To(HaveLen(3))
		expectReaped(childPids(logs))
	})

	It("exits with an error when the handshake names a component the binary does not have", func() {
		cmd := exec.Command(runner, "serve")
		cmd.Stdin = strings.NewReader(`{"conf":{},"pidDir":"` + os.TempDir() + `","context":{"componentid":"nope","taskid":1,"task->component":{"1":"nope"}}}` + "\nend\n")
		var out strings.Builder
		cmd.Stdout = &out
		err := cmd.Run()
		Expect(err).To(HaveOccurred())
		Expect(out.String()).To(ContainSubstring(`"command":"error"`))
		Expect(out.String()).To(ContainSubstring(`no component \"nope\"`))
	})
})
