package specs_test

// Observability: what a running topology shows about itself. Counters are exact
// on known flows, latencies follow the work done, the HTTP endpoints serve the
// snapshot, graphs parse with Graphviz, debug mode traces every message with the
// task's identity in the log fields.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// ObsDoubled is what the chain's first bolt emits.
type ObsDoubled struct{ N int }

// obsChain is numbers (reliable, over source) -> double (2 tasks, anchored,
// shuffle) -> sink (2 tasks, anchored, shuffle), plus double -> audit
// (unanchored, all) when audit is set.
func obsChain(name string, source *sheltertest.Source[Num], audit bool, conf dsl.Conf) *dsl.Topology {
	b := dsl.New(name, conf)
	b.Streams(ObsDoubled{})
	numbers := b.Spout("numbers", source.Spout())
	double := b.Bolt("double", dsl.AutoAck(func(n Num, out dsl.Emitter) error {
		out.Emit(ObsDoubled{N: 2 * n.N})
		return nil
	}), dsl.Parallelism(2))
	sink := b.Bolt("sink", dsl.AutoAck(func(ObsDoubled, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
	b.Anchored(numbers, double, dsl.Shuffle[Num]())
	b.Anchored(double, sink, dsl.Shuffle[ObsDoubled]())
	if audit {
		// Not a Terminator: double's input edge is anchored, so its emits are
		// tracked on this unanchored edge too (issue 25), where Build rejects one.
		b.Unanchored(double, b.Bolt("audit", dsl.AutoAck(func(ObsDoubled, dsl.Emitter) error { return nil })), dsl.All[ObsDoubled]())
	}
	return Build(b)
}

func obsNums(n int) []Num {
	out := make([]Num, n)
	for i := range out {
		out[i] = Num{N: i + 1}
	}
	return out
}

// obsCounts are the counters a spec can predict exactly.
type obsCounts struct {
	Emitted, Transferred, Executed, Acked, Failed, Expired, Pending int64
}

func obsCountsOf(s supervision.TaskStats) obsCounts {
	return obsCounts{s.Emitted, s.Transferred, s.Executed, s.Acked, s.Failed, s.Expired, s.Pending}
}

// obsComponentCounts returns a func for Eventually: the obsCounts of one component.
func obsComponentCounts(r *supervision.Running, id string) func() obsCounts {
	return func() obsCounts { return obsCountsOf(r.Stats().Components[id]) }
}

// obsRunChain runs 1,000 numbers through the chain and waits until every counter
// has settled on its exact value.
func obsRunChain(name string) (*supervision.Running, *dsl.Topology) {
	GinkgoHelper()
	source := sheltertest.NewSource(obsNums(1000)...)
	topo := obsChain(name, source, false, nil)
	r := sheltertest.Start(GinkgoTB(), topo, NewManualClock().Option())
	Eventually(func() int { return len(source.Acked()) }).Should(Equal(1000))
	Eventually(obsComponentCounts(r, "numbers")).Should(Equal(obsCounts{Emitted: 1000, Transferred: 1000, Acked: 1000}))
	Eventually(obsComponentCounts(r, "double")).Should(Equal(obsCounts{Emitted: 1000, Transferred: 1000, Executed: 1000, Acked: 1000}))
	Eventually(obsComponentCounts(r, "sink")).Should(Equal(obsCounts{Executed: 1000, Acked: 1000}))
	Eventually(obsComponentCounts(r, "__acker")).Should(Equal(obsCounts{Acked: 1000}))
	Eventually(func() int64 { return r.Stats().InFlight }).Should(BeZero())
	return r, topo
}

func obsTaskIDs(s supervision.Stats, component string) []int {
	var ids []int
	for _, t := range s.Tasks {
		if t.Component == component {
			ids = append(ids, t.Task)
		}
	}
	return ids
}

func obsGet(url string) []byte {
	GinkgoHelper()
	resp, err := http.Get(url)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET %s:\n%s", url, body)
	return body
}

// obsExpectGraphviz renders graph with Graphviz's dot, or skips the spec
// when dot is not installed.
func obsExpectGraphviz(graph string) {
	GinkgoHelper()
	path, err := exec.LookPath("dot")
	if err != nil {
		Skip("Graphviz dot is not installed (apt-get install graphviz): DOT output not rendered")
	}
	cmd := exec.Command(path, "-Tsvg")
	cmd.Stdin = strings.NewReader(graph)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "dot failed:\n%s\n%s", stderr.String(), graph)
	Expect(stderr.String()).To(BeEmpty(), "dot warned about:\n%s", graph)
	Expect(string(out)).To(ContainSubstring("<svg"))
}

var _ = Describe("Observability", Label("observability"), func() {
	Describe("counters", func() {
		It("count exactly the 1,000 tuples that flow through a two-bolt chain", func() {
			r, _ := obsRunChain("obs-counters")
			stats := r.Stats()

			By("summing to the component's obsCounts over its tasks")
			for _, id := range []string{"numbers", "double", "sink", "__acker"} {
				var sum obsCounts
				for _, t := range stats.Tasks {
					if t.Component == id {
						c := obsCountsOf(t)
						sum = obsCounts{sum.Emitted + c.Emitted, sum.Transferred + c.Transferred, sum.Executed + c.Executed,
							sum.Acked + c.Acked, sum.Failed + c.Failed, sum.Expired + c.Expired, sum.Pending + c.Pending}
					}
				}
				Expect(sum).To(Equal(obsCountsOf(stats.Components[id])), id)
			}
			Expect(stats.Components).To(HaveLen(4))

			By("spreading the work over both tasks of each bolt")
			for _, id := range []int{obsTaskIDs(stats, "double")[0], obsTaskIDs(stats, "double")[1], obsTaskIDs(stats, "sink")[0], obsTaskIDs(stats, "sink")[1]} {
				Expect(stats.Tasks[id-1].Executed).To(BeNumerically(">", 0), "task %d", id)
			}

			By("recording where transferred tuples went, task by task")
			toTasks := func(from string, to []int) int64 {
				sent := stats.Components[from].SentTo
				return sent[to[0]] + sent[to[1]]
			}
			Expect(toTasks("numbers", obsTaskIDs(stats, "double"))).To(Equal(int64(1000)))
			Expect(toTasks("double", obsTaskIDs(stats, "sink"))).To(Equal(int64(1000)))
			Expect(stats.Components["numbers"].SentTo).To(HaveLen(2))

			By("naming the snapshot's topology and incarnation")
			Expect(stats.Topology).To(Equal("obs-counters"))
			Expect(stats.Incarnation).To(Equal(1))
			Expect(stats.Restarts).To(BeZero())
			Expect(stats.Uptime).To(BeNumerically(">", 0))
			Stop(r)
		})

		It("count a timed-out tree as failed and expired, at the spout and at its acker", func() {
			clk := NewManualClock()
			source := sheltertest.NewSource(Num{N: 1})
			b := dsl.New("obs-expired", dsl.Conf{dsl.MessageTimeout: 3 * time.Second})
			numbers := b.Spout("numbers", source.Spout())
			hold := b.Bolt("hold", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
				return sheltertest.ManualFunc[Num](func(Num, dsl.Tuple, dsl.Collector) error { return nil }) // never acks
			}))
			b.Anchored(numbers, hold, dsl.Shuffle[Num]())
			r := sheltertest.Start(GinkgoTB(), Build(b), clk.Option())
			Eventually(obsComponentCounts(r, "hold")).Should(Equal(obsCounts{Executed: 1}))
			Eventually(obsComponentCounts(r, "numbers")).Should(Equal(obsCounts{Emitted: 1, Transferred: 1, Pending: 1}))
			Eventually(func() []int {
				clk.Advance(time.Second)
				return source.Nacked()
			}).Should(Equal([]int{1}))
			Eventually(obsComponentCounts(r, "numbers")).Should(Equal(obsCounts{Emitted: 1, Transferred: 1, Failed: 1, Expired: 1}))
			Eventually(obsComponentCounts(r, "__acker")).Should(Equal(obsCounts{Failed: 1, Expired: 1}))
			Stop(r)
		})
	})

	Describe("latencies", func() {
		It("are non-zero and ordered as the work they measure", func() {
			const slowWork, holdFor = 20 * time.Millisecond, 10 * time.Millisecond
			source := sheltertest.NewSource(Num{N: 1})
			acked := make(chan struct{})
			b := dsl.New("obs-latency", nil)
			b.Streams(ObsDoubled{})
			numbers := b.Spout("numbers", source.Spout())
			slow := b.Bolt("slow", dsl.AutoAck(func(n Num, out dsl.Emitter) error {
				time.Sleep(slowWork) // the work being measured
				out.Emit(ObsDoubled{N: 2 * n.N})
				return nil
			}))
			// hold acks each input holdFor after Execute returned, from its own task.
			hold := b.Bolt("hold", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[ObsDoubled] {
				return sheltertest.ManualFunc[ObsDoubled](func(_ ObsDoubled, in dsl.Tuple, _ dsl.Collector) error {
					time.AfterFunc(holdFor, func() {
						info.Post(func(c dsl.Collector) { c.Ack(in); close(acked) })
					})
					return nil
				})
			}))
			b.Anchored(numbers, slow, dsl.Shuffle[Num]())
			b.Anchored(slow, hold, dsl.Shuffle[ObsDoubled]())
			r := sheltertest.Start(GinkgoTB(), Build(b), NewManualClock().Option())
			Eventually(acked).Should(BeClosed())
			Eventually(func() []int { return source.Acked() }).Should(Equal([]int{1}))
			Eventually(func() int64 { return r.Stats().Components["numbers"].CompleteSamples }).Should(Equal(int64(1)))
			stats := r.Stats()
			spout, slowStats, holdStats := stats.Components["numbers"], stats.Components["slow"], stats.Components["hold"]

			By("timing the slow bolt's Execute at its work or more")
			Expect(slowStats.ExecuteLatency).To(BeNumerically(">=", slowWork))
			Expect(slowStats.ProcessLatency).To(BeNumerically(">", 0))
			Expect(slowStats.ProcessLatency).To(BeNumerically("<=", slowStats.ExecuteLatency), "acked inside Execute")

			By("timing the holding bolt's process latency from receipt to its late ack")
			Expect(holdStats.ExecuteLatency).To(BeNumerically(">", 0))
			Expect(holdStats.ExecuteLatency).To(BeNumerically("<", slowStats.ExecuteLatency))
			Expect(holdStats.ProcessLatency).To(BeNumerically(">=", holdFor))
			Expect(holdStats.ProcessLatency).To(BeNumerically(">", holdStats.ExecuteLatency))

			By("timing the spout's complete latency over both bolts")
			Expect(spout.CompleteLatency).To(BeNumerically(">=", slowStats.ExecuteLatency+holdStats.ProcessLatency))
			Expect(spout.ExecuteLatency).To(BeZero(), "spouts execute nothing")
			Stop(r)
		})
	})

	Describe("the HTTP endpoint", func() {
		var (
			r   *supervision.Running
			url string
		)
		BeforeEach(func() {
			var topo *dsl.Topology
			r, topo = obsRunChain("obs-http")
			srv, err := observe.Listen("127.0.0.1:0", topo, r)
			Expect(err).NotTo(HaveOccurred())
			url = "http://" + srv.Addr
			DeferCleanup(func() { Expect(srv.Close()).To(Succeed()) })
		})

		It("serves the snapshot's counters and latencies as JSON at /stats", func() {
			type figures struct {
				Component         string  `json:"component"`
				Task              int     `json:"task"`
				Emitted           int64   `json:"emitted"`
				Transferred       int64   `json:"transferred"`
				Executed          int64   `json:"executed"`
				Acked             int64   `json:"acked"`
				Failed            int64   `json:"failed"`
				Pending           int64   `json:"pending"`
				CompleteLatencyMs float64 `json:"complete_latency_ms"`
			}
			type flow struct {
				From        string `json:"from"`
				To          string `json:"to"`
				Transferred int64  `json:"transferred"`
			}
			var served struct {
				Topology    string    `json:"topology"`
				Incarnation int       `json:"incarnation"`
				Components  []figures `json:"components"`
				Tasks       []figures `json:"tasks"`
				Flows       []flow    `json:"flows"`
			}
			Expect(json.Unmarshal(obsGet(url+"/stats"), &served)).To(Succeed())
			want := r.Stats()
			Expect(served.Topology).To(Equal("obs-http"))
			Expect(served.Incarnation).To(Equal(want.Incarnation))
			Expect(served.Tasks).To(HaveLen(len(want.Tasks)))
			Expect(served.Components).To(HaveLen(len(want.Components)))
			for i, t := range want.Tasks {
				Expect(served.Tasks[i]).To(Equal(figures{Component: t.Component, Task: t.Task, Emitted: t.Emitted, Transferred: t.Transferred,
					Executed: t.Executed, Acked: t.Acked, Failed: t.Failed, Pending: t.Pending, CompleteLatencyMs: served.Tasks[i].CompleteLatencyMs}))
			}
			for _, c := range served.Components {
				w := want.Components[c.Component]
				Expect([]int64{c.Emitted, c.Transferred, c.Executed, c.Acked, c.Failed}).To(Equal([]int64{w.Emitted, w.Transferred, w.Executed, w.Acked, w.Failed}), c.Component)
				if c.Component == "numbers" {
					Expect(c.Emitted).To(Equal(int64(1000)))
					Expect(c.CompleteLatencyMs).To(BeNumerically(">", 0))
				}
			}
			Expect(served.Flows).To(ConsistOf(
				flow{From: "numbers", To: "double", Transferred: 1000},
				flow{From: "double", To: "sink", Transferred: 1000},
			))
		})

		It("serves the same figures as Prometheus text at /metrics", func() {
			families, err := new(expfmt.TextParser).TextToMetricFamilies(bytes.NewReader(obsGet(url + "/metrics")))
			Expect(err).NotTo(HaveOccurred())
			value := func(name string, t supervision.TaskStats) float64 {
				GinkgoHelper()
				Expect(families).To(HaveKey(name))
				for _, m := range families[name].GetMetric() {
					if obsLabels(m)["task"] == strconv.Itoa(t.Task) {
						Expect(obsLabels(m)).To(Equal(map[string]string{"topology": "obs-http", "component": t.Component, "task": strconv.Itoa(t.Task)}))
						if m.Counter != nil {
							return m.Counter.GetValue()
						}
						return m.Gauge.GetValue()
					}
				}
				Fail("no series of " + name + " for task " + strconv.Itoa(t.Task))
				return 0
			}
			stats := r.Stats()
			for _, t := range stats.Tasks {
				Expect(value("goshelter_tuples_acked_total", t)).To(BeEquivalentTo(t.Acked), "task %d", t.Task)
				Expect(value("goshelter_tuples_failed_total", t)).To(BeEquivalentTo(t.Failed), "task %d", t.Task)
				switch t.Kind {
				case "spout":
					Expect(value("goshelter_tuples_emitted_total", t)).To(BeEquivalentTo(t.Emitted))
					Expect(value("goshelter_tuples_transferred_total", t)).To(BeEquivalentTo(t.Transferred))
					Expect(value("goshelter_pending", t)).To(BeEquivalentTo(t.Pending))
				case "bolt":
					Expect(value("goshelter_tuples_emitted_total", t)).To(BeEquivalentTo(t.Emitted))
					Expect(value("goshelter_tuples_executed_total", t)).To(BeEquivalentTo(t.Executed))
					Expect(value("goshelter_execute_time_seconds_total", t)).To(BeNumerically("~", t.ExecuteTime.Seconds(), 1e-9))
				}
			}
			// Latencies are histograms per component: every execution and every
			// sampled tree counted once.
			histogram := func(name, component string) *dto.Histogram {
				GinkgoHelper()
				Expect(families).To(HaveKey(name))
				for _, m := range families[name].GetMetric() {
					if obsLabels(m)["component"] == component {
						return m.GetHistogram()
					}
				}
				Fail("no histogram " + name + " for " + component)
				return nil
			}
			for id, c := range stats.Components {
				switch c.Kind {
				case "spout":
					Expect(histogram("goshelter_latency_complete_seconds", id).GetSampleCount()).To(BeEquivalentTo(c.CompleteSamples))
				case "bolt":
					h := histogram("goshelter_latency_execute_seconds", id)
					Expect(h.GetSampleCount()).To(BeEquivalentTo(c.Executed), id)
					Expect(h.GetSampleSum()).To(BeNumerically("~", c.ExecuteTime.Seconds(), 1e-3), id)
					Expect(histogram("goshelter_latency_process_seconds", id).GetSampleCount()).To(BeEquivalentTo(c.ProcessSamples), id)
				}
			}
			Expect(families).To(HaveKey("goshelter_restarts_total"))
			Expect(families["goshelter_restarts_total"].GetMetric()[0].Counter.GetValue()).To(BeZero())
		})

		It("serves the live graph as DOT at /graph", func() {
			graph := string(obsGet(url + "/graph"))
			Expect(graph).To(ContainSubstring(`"numbers" -> "double"`))
			Expect(graph).To(ContainSubstring("capacity "))
			obsExpectGraphviz(graph)
		})
	})

	Describe("graphs", func() {
		It("draw the topology as DOT that Graphviz renders", func() {
			topo := obsChain("obs-graph", sheltertest.NewSource[Num](), true, nil)
			graph := observe.DOT(topo, nil)
			By("showing each component with its parallelism")
			Expect(graph).To(ContainSubstring(`label="numbers\nspout, parallelism 1"`))
			Expect(graph).To(ContainSubstring(`label="double\nbolt, parallelism 2"`))
			By("labelling edges with stream and grouping, unanchored ones dashed")
			Expect(graph).To(ContainSubstring(`"numbers" -> "double" [label="Num\nshuffle", style=solid]`))
			Expect(graph).To(ContainSubstring(`"double" -> "audit" [label="ObsDoubled\nall", style=dashed]`))
			obsExpectGraphviz(graph)
		})

		It("draw a running topology with tuples/s on edges and bolts coloured by capacity", func() {
			r, topo := obsRunChain("obs-live")
			stats := r.Stats()
			graph := observe.DOT(topo, &stats)
			Expect(graph).To(MatchRegexp(`"numbers" -> "double" \[label="Num\\nshuffle\\n[0-9.]+k?/s"`))
			Expect(graph).To(MatchRegexp(`"double" \[[^\]]*fillcolor="#[0-9a-f]{6}"[^\]]*capacity [0-9.]+`))
			Stop(r)
			obsExpectGraphviz(graph)
		})
	})

	Describe("logging", func() {
		It("traces every message in debug mode, with topology, component and task fields", func() {
			logs, observed := ObserveLogs()
			source := sheltertest.NewSource(obsNums(10)...)
			r := sheltertest.Start(GinkgoTB(), obsChain("obs-debug", source, false, dsl.Conf{dsl.Debug: true}), logs, NewManualClock().Option())
			Eventually(func() int { return len(source.Acked()) }).Should(Equal(10))
			Stop(r)
			traced := observed.FilterMessage("message").FilterField(zap.String("component", "double"))
			Expect(traced.Len()).To(BeNumerically(">=", 30), "10 inputs, 10 emits, 10 acks at least")
			for _, e := range traced.All() {
				fields := e.ContextMap()
				Expect(fields).To(HaveKeyWithValue("topology", "obs-debug"))
				Expect(fields).To(HaveKey("task"))
			}
			inbound := 0
			for _, e := range traced.All() {
				if e.ContextMap()["out"] == false && e.ContextMap()["kind"] == "Tuple" {
					inbound++
				}
			}
			Expect(inbound).To(Equal(10))
		})

		It("gives each task a logger naming its topology, component and task", func() {
			logs, observed := ObserveLogs()
			b := dsl.New("obs-logger", nil)
			numbers := b.Spout("numbers", CountTo(1))
			b.Bolt("greet", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
				return sheltertest.HandlerFunc[Num](func(Num, dsl.Emitter) error {
					info.Logger.Info("hello")
					return nil
				})
			}))
			b.Anchored(numbers, "greet", dsl.Shuffle[Num]())
			r := sheltertest.Start(GinkgoTB(), Build(b), logs, NewManualClock().Option())
			Eventually(func() int { return observed.FilterMessage("hello").Len() }).Should(Equal(1))
			Stop(r)
			fields := observed.FilterMessage("hello").All()[0].ContextMap()
			Expect(fields).To(HaveKeyWithValue("topology", "obs-logger"))
			Expect(fields).To(HaveKeyWithValue("component", "greet"))
			Expect(fields).To(HaveKeyWithValue("task", int64(1)))
		})
	})

	Describe("progress", func() {
		It("prints a line per interval with emitted, acked, failed and pending", func() {
			source := sheltertest.NewSource(obsNums(100)...)
			r := sheltertest.Start(GinkgoTB(), obsChain("obs-progress", source, false, nil), NewManualClock().Option())
			out := gbytes.NewBuffer()
			stop := observe.Progress(out, r, 5*time.Millisecond)
			Eventually(out).Should(gbytes.Say(`progress: \d+s emitted=100 \([0-9.]+k?/s\) acked=100 \([0-9.]+k?/s\) failed=0 pending=0\n`))
			stop()
			Stop(r)
		})
	})
})

func obsLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
