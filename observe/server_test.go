package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/supervision"
)

type line struct{ Text string }
type word struct{ Text string }

// sampleTopology matches sampleStats: src -> bolt (anchored) -> sink (unanchored).
func sampleTopology(t *testing.T) *dsl.Topology {
	t.Helper()
	b := dsl.New("t", nil)
	b.Streams(word{})
	src := b.Spout("src", dsl.Unreliable(func() (line, bool) { return line{}, false }))
	bolt := b.Bolt("bolt", dsl.AutoAck(func(line, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
	sink := b.Bolt("sink", dsl.AutoAck(func(word, dsl.Emitter) error { return nil }))
	b.Anchored(src, bolt, dsl.Shuffle[line]())
	b.Unanchored(bolt, sink, dsl.Shuffle[word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func listen(t *testing.T, stats supervision.Stats) *observe.Server {
	t.Helper()
	srv, err := observe.Listen("127.0.0.1:0", &fakeSource{stats: []supervision.Stats{stats}, topo: sampleTopology(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %v\n%s", url, resp.Status, err, body)
	}
	return body
}

// series finds the value of metric name for the series whose labels include want.
func series(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	t.Helper()
	f, ok := families[name]
	if !ok {
		t.Fatalf("no metric %q", name)
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func TestMetricsServeTheSnapshot(t *testing.T) {
	srv := listen(t, sampleStats(10*time.Second, 1))
	families, err := new(expfmt.TextParser).TextToMetricFamilies(bytes.NewReader(get(t, srv.URL()+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	task := func(id string) map[string]string { return map[string]string{"topology": "t", "task": id} }
	tests := []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"goshelter_tuples_emitted_total", task("4"), 400},
		{"goshelter_tuples_transferred_total", task("1"), 50},
		{"goshelter_tuples_executed_total", task("2"), 300},
		{"goshelter_tuples_acked_total", task("5"), 380},
		{"goshelter_tuples_failed_total", task("2"), 10},
		{"goshelter_tuples_expired_total", task("4"), 5},
		{"goshelter_execute_time_seconds_total", task("2"), 5},
		{"goshelter_latency_execute_seconds", task("1"), 0.02},
		{"goshelter_latency_process_seconds", task("1"), 0.003},
		{"goshelter_latency_complete_seconds", task("4"), 0.01},
		{"goshelter_capacity_ratio", task("1"), 0.2},
		{"goshelter_pending", task("4"), 10},
		{"goshelter_mailbox_depth", task("2"), 3},
		{"goshelter_in_flight", map[string]string{"topology": "t"}, 7},
		{"goshelter_restarts_total", map[string]string{"topology": "t"}, 0},
		{"goshelter_incarnation", map[string]string{"topology": "t"}, 1},
	}
	for _, tt := range tests {
		got, ok := series(t, families, tt.metric, tt.labels)
		if !ok || !near(got, tt.want) {
			t.Errorf("%s%v = %v (found %v), want %v", tt.metric, tt.labels, got, ok, tt.want)
		}
	}
	if got, _ := series(t, families, "goshelter_tuples_emitted_total", map[string]string{"task": "1"}); got != 50 {
		t.Errorf("component label: bolt task 1 emitted %v", got)
	}
	if _, ok := series(t, families, "goshelter_tuples_executed_total", task("4")); ok {
		t.Error("a spout has no executed series")
	}
	if _, ok := series(t, families, "goshelter_tuples_emitted_total", map[string]string{"component": "__acker"}); ok {
		t.Error("ackers have no emitted series")
	}
}

func TestStatsServeTheReport(t *testing.T) {
	stats := sampleStats(10*time.Second, 1)
	srv := listen(t, stats)
	var got observe.Report
	if err := json.Unmarshal(get(t, srv.URL()+"/stats"), &got); err != nil {
		t.Fatal(err)
	}
	want := observe.NewReport(nil, stats)
	if !got.Time.Equal(want.Time) {
		t.Errorf("time = %v, want %v", got.Time, want.Time)
	}
	got.Time = want.Time
	if !reflect.DeepEqual(got, want) {
		t.Errorf("/stats =\n%+v\nwant\n%+v", got, want)
	}
}

func TestGraphServesTheLiveDOT(t *testing.T) {
	srv := listen(t, sampleStats(10*time.Second, 1))
	graph := string(get(t, srv.URL()+"/graph"))
	for _, want := range []string{`digraph "t"`, `capacity 0.50`, `"src" -> "bolt"`, `40/s`} {
		if !strings.Contains(graph, want) {
			t.Errorf("graph lacks %q:\n%s", want, graph)
		}
	}
	checkWithGraphviz(t, graph)
}

func TestUnknownPathsAreNotFound(t *testing.T) {
	srv := listen(t, sampleStats(time.Second, 1))
	resp, err := http.Get(srv.URL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nope: %v", resp.Status)
	}
}

func TestShutdownWaitsAndReleases(t *testing.T) {
	srv, err := observe.Listen("127.0.0.1:0", &fakeSource{stats: []supervision.Stats{sampleStats(time.Second, 1)}, topo: sampleTopology(t)})
	if err != nil {
		t.Fatal(err)
	}
	get(t, srv.URL()+"/stats")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(srv.URL() + "/stats"); err == nil {
		t.Error("the server still answers after Shutdown")
	}
}

func TestListenReportsABadAddress(t *testing.T) {
	if _, err := observe.Listen("127.0.0.1:-1", &fakeSource{topo: sampleTopology(t)}); err == nil {
		t.Fatal("Listen on a bad address succeeded")
	}
}

// checkWithGraphviz renders graph with Graphviz's dot when it is installed.
func checkWithGraphviz(t *testing.T, graph string) {
	t.Helper()
	path, err := exec.LookPath("dot")
	if err != nil {
		t.Log("Graphviz dot is not installed: the DOT output was not rendered")
		return
	}
	cmd := exec.Command(path, "-Tsvg")
	cmd.Stdin = strings.NewReader(graph)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || stderr.Len() > 0 || !bytes.Contains(out, []byte("<svg")) {
		t.Fatalf("dot rejected the graph: %v\n%s\n%s", err, stderr.String(), graph)
	}
}
