package specs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The emit contract (issue 30, item 3): a tuple the topology cannot route
// fails what it belongs to, a spout's message or a bolt's input; the error is
// reported (logged in process, an "error" command to Storm when served); and
// the task goes on with the next one. One table, run against both hosts of
// goshelter's components: the runtime (supervision.Run) and multilang.Serve
// driven through its pipe, as Storm drives it.

// Unrouted is a type no topology of this table declares as a stream.
type Unrouted struct{ N int }

// emitMisuse is one way to emit a tuple the topology cannot route. Message 1
// (a spout's) or input 1 (a bolt's) is misused; message or input 2 is emitted
// right, to show that the task goes on.
type emitMisuse struct {
	// grouping is the edge out of the misusing component, to "sink".
	grouping dsl.Grouping
	// bolt, for a bolt's misuse, emits for input n; sink names the sink's
	// first task.
	bolt func(out dsl.Emitter, n, sink int)
	// spout, for a spout's misuse, is its source's DirectTask for message n.
	spout  func(n, sink int) int
	reason string
}

// emitOutcome is what a host did with messages (or inputs) 1 and 2, and the
// errors it reported.
type emitOutcome struct {
	failed, done []int
	reports      []string
}

// emitHost runs the misusing component of topo ("misuser", a spout or a bolt)
// on one host and returns the outcome of its two messages or inputs.
type emitHost func(topo *dsl.Topology, spoutSide bool, rec *emitRecord) emitOutcome

// emitRecord keeps the outcomes a spout's source hears.
type emitRecord struct {
	mu           sync.Mutex // mu guards acked and nacked
	acked, nackd []int
}

func (r *emitRecord) add(id int, acked bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if acked {
		r.acked = append(r.acked, id)
	} else {
		r.nackd = append(r.nackd, id)
	}
}

func (r *emitRecord) outcome() emitOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return emitOutcome{failed: slices.Sorted(slices.Values(r.nackd)), done: slices.Sorted(slices.Values(r.acked))}
}

// emitSource hands out messages 1 and 2 and names each one's task with task.
type emitSource struct {
	rec  *emitRecord
	task func(n int) int
	next int
}

func (s *emitSource) Next() (int, Num, bool) {
	if s.next == 2 {
		return 0, Num{}, false
	}
	s.next++
	return s.next, Num{N: s.next}, true
}

func (s *emitSource) DirectTask(n Num) int { return s.task(n.N) }
func (s *emitSource) Ack(id int)           { s.rec.add(id, true) }
func (s *emitSource) Nack(id int)          { s.rec.add(id, false) }

// misuseHandler is the misusing bolt's handler.
type misuseHandler struct {
	emit func(out dsl.Emitter, n, sink int)
	sink int // the sink's first task
}

func (h misuseHandler) Execute(in Num, out dsl.Emitter) error {
	h.emit(out, in.N, h.sink)
	return nil
}

// emitTopology is numbers -> misuser -> sink for a bolt's misuse, or
// misuser -> sink for a spout's, the edge into sink grouped by m.grouping.
func emitTopology(m emitMisuse, rec *emitRecord) *dsl.Topology {
	b := dsl.New("emit-contract", nil)
	b.Streams(Num{})
	sinkTask := func(info dsl.TaskInfo) int { return info.Model.Component("sink").Tasks[0] }
	var misuser string
	if m.spout != nil {
		misuser = b.Spout("misuser", dsl.ReliableFrom(func(info dsl.TaskInfo) *emitSource {
			return &emitSource{rec: rec, task: func(n int) int { return m.spout(n, sinkTask(info)) }}
		}))
	} else {
		numbers := b.Spout("numbers", dsl.ReliableFrom(func(dsl.TaskInfo) *emitSource {
			return &emitSource{rec: rec, task: func(int) int { return 0 }}
		}))
		misuser = b.Bolt("misuser", dsl.AutoAckFrom(func(info dsl.TaskInfo) misuseHandler {
			return misuseHandler{emit: m.bolt, sink: sinkTask(info)}
		}))
		b.Anchored(numbers, misuser, dsl.Shuffle[Num]())
	}
	b.Anchored(misuser, b.Bolt("sink", dsl.AutoAck(func(Num, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), m.grouping)
	return Build(b)
}

// inProcess runs topo with supervision.Run until both messages have their
// outcome; the reports are the errors of the misuser's logged failures.
func inProcess(topo *dsl.Topology, spoutSide bool, rec *emitRecord) emitOutcome {
	GinkgoHelper()
	logs, observed := ObserveLogs()
	r := sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option(), supervision.WithoutRestarts(), logs)
	Eventually(func() int { o := rec.outcome(); return len(o.failed) + len(o.done) }).Should(Equal(2))
	Expect(r.Done()).NotTo(BeClosed(), "the task goes on: nothing failed it")
	out := rec.outcome()
	message := "bolt failed its input"
	if spoutSide {
		message = "spout could not emit; the message fails"
	}
	for _, e := range observed.FilterMessage(message).FilterField(zap.String("component", "misuser")).All() {
		out.reports = append(out.reports, fmt.Sprint(e.ContextMap()["error"]))
	}
	return out
}

// served runs the misuser with multilang.Serve, playing Storm on its pipe: a
// spout is asked for two messages and acks the one that was emitted; a bolt
// gets inputs -1 and -2. Serve must end cleanly when the host closes the pipe:
// a failed emit does not end it.
func served(topo *dsl.Topology, spoutSide bool, rec *emitRecord) emitOutcome {
	GinkgoHelper()
	task := topo.Component("misuser").Tasks[0]
	script := fmt.Sprintf(`{"conf":{},"pidDir":"","context":{"componentid":"misuser","taskid":%d}}`+"\nend\n", task)
	if spoutSide {
		// Message 1 fails without reaching Storm, so message 2's id is root 2.
		script += "{\"id\":\"\",\"command\":\"next\"}\nend\n{\"id\":\"\",\"command\":\"next\"}\nend\n{\"id\":\"2\",\"command\":\"ack\"}\nend\n"
	} else {
		numbers := topo.Component("numbers").Tasks[0]
		for n := 1; n <= 2; n++ {
			script += fmt.Sprintf(`{"id":"-%d","comp":"numbers","stream":"Num","task":%d,"tuple":[%d]}`+"\nend\n", n, numbers, n)
		}
	}
	var pipe strings.Builder
	Expect(multilang.Serve(context.Background(), topo, strings.NewReader(script), &pipe)).To(Succeed(), "Serve goes on after a failed emit and ends when the host closes its input")
	out := rec.outcome() // a spout's outcomes; a bolt's come from the pipe
	emits := 0
	for _, frame := range strings.Split(pipe.String(), "\nend\n") {
		var m struct {
			Command string          `json:"command"`
			ID      json.RawMessage `json:"id"`
			Msg     string          `json:"msg"`
		}
		if frame = strings.TrimSpace(frame); frame == "" {
			continue
		}
		Expect(json.Unmarshal([]byte(frame), &m)).To(Succeed(), frame)
		var id string
		_ = json.Unmarshal(m.ID, &id)
		switch m.Command {
		case "error":
			out.reports = append(out.reports, m.Msg)
		case "emit":
			emits++
		case "fail":
			out.failed = append(out.failed, -atoi(id))
		case "ack":
			out.done = append(out.done, -atoi(id))
		}
	}
	Expect(emits).To(Equal(1), "only message or input 2 reaches Storm")
	return out
}

func atoi(s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	Expect(err).NotTo(HaveOccurred(), "id %q", s)
	return n
}

var _ = Describe("A failed emit", Label("edges"), func() {
	misuses := map[string]emitMisuse{
		"a bolt's Emit of a type that is no stream": {
			grouping: dsl.Shuffle[Num](),
			bolt: func(out dsl.Emitter, n, _ int) {
				if n == 1 {
					out.Emit(Unrouted{N: n})
				}
				out.Emit(Num{N: n})
			},
			reason: "cannot emit specs_test.Unrouted: its type is not a stream of the topology",
		},
		"a bolt's EmitDirect on a stream subscribed with shuffle": {
			grouping: dsl.Shuffle[Num](),
			bolt: func(out dsl.Emitter, n, sink int) {
				if n == 1 {
					out.EmitDirect(sink, Num{N: n})
				}
				out.Emit(Num{N: n})
			},
			reason: "EmitDirect on a stream whose subscribers do not use direct grouping",
		},
		"a bolt's Emit without a task on a direct stream": {
			grouping: dsl.Direct[Num](),
			bolt: func(out dsl.Emitter, n, sink int) {
				if n == 1 {
					out.Emit(Num{N: n})
				}
				out.EmitDirect(sink, Num{N: n})
			},
			reason: "the stream is direct: use EmitDirect with a task id",
		},
		"a bolt's EmitDirect to a task that does not subscribe": {
			grouping: dsl.Direct[Num](),
			bolt: func(out dsl.Emitter, n, sink int) {
				if n == 1 {
					out.EmitDirect(999, Num{N: n})
				}
				out.EmitDirect(sink, Num{N: n})
			},
			reason: "task 999 does not subscribe to the stream",
		},
		"a spout's message with no task on a direct stream": {
			grouping: dsl.Direct[Num](),
			spout: func(n, sink int) int {
				if n == 1 {
					return 0
				}
				return sink
			},
			reason: "the stream is direct: use EmitDirect with a task id",
		},
		"a spout's message to a task that does not subscribe": {
			grouping: dsl.Direct[Num](),
			spout: func(n, sink int) int {
				if n == 1 {
					return 999
				}
				return sink
			},
			reason: "task 999 does not subscribe to the stream",
		},
		"a spout's message to a task, on a stream subscribed with shuffle": {
			grouping: dsl.Shuffle[Num](),
			spout: func(n, sink int) int {
				if n == 1 {
					return sink
				}
				return 0
			},
			reason: "EmitDirect on a stream whose subscribers do not use direct grouping",
		},
	}
	hosts := map[string]emitHost{"in process": inProcess, "served to Storm": served}
	var entries []TableEntry
	for _, name := range slices.Sorted(maps.Keys(misuses)) {
		for _, host := range []string{"in process", "served to Storm"} {
			entries = append(entries, Entry(name+", "+host, misuses[name], hosts[host]))
		}
	}

	DescribeTable("fails its message or input, reports why, and the task goes on",
		func(m emitMisuse, host emitHost) {
			rec := &emitRecord{}
			got := host(emitTopology(m, rec), m.spout != nil, rec)
			Expect(got.failed).To(Equal([]int{1}), "the misused message or input fails")
			Expect(got.done).To(Equal([]int{2}), "the next one goes through")
			Expect(got.reports).To(HaveLen(1))
			Expect(got.reports[0]).To(ContainSubstring(`component "misuser"`))
			Expect(got.reports[0]).To(ContainSubstring(m.reason))
		},
		entries,
	)

	// A shell bolt's child is user code too: its emit that the topology cannot
	// route fails the inputs it anchored the emit to, and the child goes on
	// (it used to be killed, failing the task).
	It("fails the inputs a shell bolt's child anchored it to, and the child goes on", Label("multilang"), func() {
		src := sheltertest.NewSource(MLLine{Text: "a b"}, MLLine{Text: "c"})
		words := new(sheltertest.Recorder[MLWord])
		logs, observed := ObserveLogs()
		// bolt.py direct emits each word to a sink task, on a stream the sink
		// subscribes to with shuffle grouping.
		topo := splitTopology("shell-misroute", src, python("bolt.py", "direct"), words)
		r := sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option(), supervision.WithoutRestarts(), logs)
		Eventually(src.Nacked).Should(ConsistOf(1, 2), "both lines' inputs fail")
		Expect(src.Acked()).To(BeEmpty())
		Expect(words.Len()).To(BeZero())
		refused := observed.FilterMessage("child emitted a tuple the topology cannot route; the inputs it anchored to fail")
		Expect(refused.Len()).To(Equal(3), "one report per word")
		Expect(fmt.Sprint(refused.All()[0].ContextMap()["error"])).To(ContainSubstring("EmitDirect on a stream whose subscribers do not use direct grouping"))
		Expect(observed.FilterMessage("child settled an unknown input id (bad input, ignored)").Len()).To(BeZero(), "the child's own ack of a refused input is expected")
		Expect(r.Stop(context.Background())).To(Succeed(), "the task never failed")
	})
})
