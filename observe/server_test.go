package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/goshelter/goshelter/supervision"
)

// serve serves stats, as if a running sampleTopology returned them, at a
// free port until the test ends.
func serve(t *testing.T, stats supervision.Stats) string {
	t.Helper()
	srv, err := listen("127.0.0.1:0", newHandler(sampleTopology(t), script(stats)), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return "http://" + srv.Addr
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
	url := serve(t, sampleStats(10*time.Second, 1))
	families, err := new(expfmt.TextParser).TextToMetricFamilies(bytes.NewReader(get(t, url+"/metrics")))
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
	if got, _ := series(t, families, "goshelter_tuples_emitted_total", map[string]string{"component": "bolt", "task": "1"}); got != 50 {
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
	url := serve(t, stats)
	var got report
	if err := json.Unmarshal(get(t, url+"/stats"), &got); err != nil {
		t.Fatal(err)
	}
	want := newReport(nil, stats)
	if !got.Time.Equal(want.Time) {
		t.Errorf("time = %v, want %v", got.Time, want.Time)
	}
	got.Time = want.Time
	if !reflect.DeepEqual(got, want) {
		t.Errorf("/stats =\n%+v\nwant\n%+v", got, want)
	}
}

// TestStatsFieldNames pins the JSON names docs/OBSERVABILITY.md documents:
// other programs read them.
func TestStatsFieldNames(t *testing.T) {
	url := serve(t, sampleStats(10*time.Second, 1))
	var got map[string]any
	if err := json.Unmarshal(get(t, url+"/stats"), &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"topology", "time", "uptime_secs", "window_secs", "incarnation", "restarts", "in_flight", "components", "tasks", "flows"} {
		if _, ok := got[key]; !ok {
			t.Errorf("/stats lacks %q", key)
		}
	}
	task := got["tasks"].([]any)[0].(map[string]any)
	for _, key := range []string{"component", "kind", "task", "tasks", "emitted", "transferred", "executed", "acked", "failed",
		"expired", "pending", "mailbox_depth", "execute_secs", "execute_latency_ms", "process_latency_ms",
		"complete_latency_ms", "capacity", "emit_rate", "execute_rate", "ack_rate", "fail_rate"} {
		if _, ok := task[key]; !ok {
			t.Errorf("a task in /stats lacks %q", key)
		}
	}
	f := got["flows"].([]any)[0].(map[string]any)
	for _, key := range []string{"from", "to", "transferred", "rate"} {
		if _, ok := f[key]; !ok {
			t.Errorf("a flow in /stats lacks %q", key)
		}
	}
}

func TestGraphServesTheLiveDOT(t *testing.T) {
	url := serve(t, sampleStats(10*time.Second, 1))
	graph := string(get(t, url+"/graph"))
	for _, want := range []string{`digraph "t"`, `capacity 0.50`, `"src" -> "bolt"`, `40/s`} {
		if !strings.Contains(graph, want) {
			t.Errorf("graph lacks %q:\n%s", want, graph)
		}
	}
	checkWithGraphviz(t, graph)
}

func TestUnknownPathsAreNotFound(t *testing.T) {
	url := serve(t, sampleStats(time.Second, 1))
	resp, err := http.Get(url + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nope: %v", resp.Status)
	}
}

func TestShutdownStopsTheServer(t *testing.T) {
	srv, err := listen("127.0.0.1:0", newHandler(sampleTopology(t), script(sampleStats(time.Second, 1))), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr
	get(t, url+"/stats")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url + "/stats"); err == nil {
		t.Error("the server still answers after Shutdown")
	}
}

func TestListenReportsABadAddress(t *testing.T) {
	if _, err := listen("127.0.0.1:-1", http.NotFoundHandler(), defaultLimits); err == nil {
		t.Fatal("listen on a bad address succeeded")
	}
}

func TestTheHandlerMountsUnderAPrefix(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/observe/", http.StripPrefix("/observe", newHandler(sampleTopology(t), script(sampleStats(time.Second, 1)))))
	srv, err := listen("127.0.0.1:0", mux, defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if body := get(t, "http://"+srv.Addr+"/observe/stats"); !bytes.Contains(body, []byte(`"topology": "t"`)) {
		t.Errorf("/observe/stats = %s", body)
	}
}

func TestMetricsServeLatencyHistogramsPerComponent(t *testing.T) {
	stats := sampleStats(10*time.Second, 1)
	buckets := func(pairs ...int64) []int64 { // index, count, index, count...
		h := make([]int64, 27)
		for i := 0; i < len(pairs); i += 2 {
			h[pairs[i]] = pairs[i+1]
		}
		return h
	}
	// bolt task 1: 90 inputs at up to 2^10 µs (about 1 ms), 10 at up to 2^15
	// µs; task 2: 300 at up to 4 µs. The spout: 4 trees at up to 2^14 µs, one
	// beyond every bound.
	stats.Tasks[0].ExecuteHistogram = buckets(10, 90, 15, 10)
	stats.Tasks[1].ExecuteHistogram = buckets(2, 300)
	stats.Tasks[3].CompleteHistogram = buckets(14, 4, 26, 1)
	stats = withSums(stats)
	families, err := new(expfmt.TextParser).TextToMetricFamilies(bytes.NewReader(get(t, serve(t, stats)+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	hist := func(name, component string) *dto.Histogram {
		t.Helper()
		for _, m := range families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "component" && l.GetValue() == component {
					return m.GetHistogram()
				}
			}
		}
		t.Fatalf("no %s for %s", name, component)
		return nil
	}
	cumulative := func(h *dto.Histogram) map[float64]uint64 {
		out := map[float64]uint64{}
		for _, b := range h.GetBucket() {
			out[b.GetUpperBound()] = b.GetCumulativeCount()
		}
		return out
	}
	execute := hist("goshelter_latency_execute_seconds", "bolt")
	if execute.GetSampleCount() != 400 || !near(execute.GetSampleSum(), 7) {
		t.Errorf("bolt execute histogram: count %d, sum %v; want 400, 7 (the execute time)", execute.GetSampleCount(), execute.GetSampleSum())
	}
	want := map[float64]uint64{1e-6: 0, 4e-6: 300, 0.000256: 300, 0.001024: 390, 0.016384: 390, 0.065536: 400, 16.777216: 400}
	got := cumulative(execute)
	for bound, n := range want {
		if !near(float64(got[bound]), float64(n)) {
			t.Errorf("bolt execute histogram: %v at or below %v s, want %v (buckets %v)", got[bound], bound, n, got)
		}
	}
	if len(got) != 14 || got[math.Inf(1)] != 400 {
		t.Errorf("%d bounds, want 14 (1 µs to 16.8 s by 4, and +Inf with every input)", len(got))
	}
	complete := hist("goshelter_latency_complete_seconds", "src")
	if complete.GetSampleCount() != 5 || cumulative(complete)[16.777216] != 4 {
		t.Errorf("spout complete histogram: count %d, buckets %v; want 5 with one beyond 16.8 s", complete.GetSampleCount(), cumulative(complete))
	}
	if h := hist("goshelter_latency_process_seconds", "sink"); h.GetSampleCount() != 0 {
		t.Errorf("an empty histogram counts %d", h.GetSampleCount())
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total"} {
		if _, ok := families[name]; !ok && (name != "process_cpu_seconds_total" || runtime.GOOS == "linux") {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

func TestThePageAndItsAssetsServeUnderAPrefix(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/observe/", http.StripPrefix("/observe", newHandler(sampleTopology(t), script(sampleStats(time.Second, 1)))))
	srv, err := listen("127.0.0.1:0", mux, defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr + "/observe/"
	for path, want := range map[string]string{
		"":                        "text/html; charset=utf-8",
		"ui/app.js":               "text/javascript; charset=utf-8",
		"ui/style.css":            "text/css; charset=utf-8",
		"api/v1/topology/summary": "application/json",
		"api/v1/topology/t/graph": "application/json",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != want {
			t.Errorf("GET %s: %s, %q; want 200, %q", path, resp.Status, resp.Header.Get("Content-Type"), want)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
	page := string(get(t, base))
	for _, want := range []string{`src="ui/app.js"`, `href="ui/style.css"`, `id="spouts"`, `id="bolts"`, `id="graph"`, `id="events"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("the page's policy is %q", csp)
	}
	for _, path := range []string{"ui/", "ui/nope.js", "index.html"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
}

// endWatcher is a listener that signals its first Accept (serving has begun)
// and records when an Accept has failed: the serving goroutine's last wait.
type endWatcher struct {
	net.Listener
	accepting chan struct{} // closed by the first Accept
	once      sync.Once
	ended     atomic.Bool
}

func (l *endWatcher) Accept() (net.Conn, error) {
	l.once.Do(func() { close(l.accepting) })
	c, err := l.Listener.Accept()
	if err != nil {
		l.ended.Store(true)
	}
	return c, err
}

// Close and Shutdown return once the goroutine that serves has ended, as
// errgroup's Wait does: nothing Listen started outlives them.
func TestCloseAndShutdownJoinTheServingGoroutine(t *testing.T) {
	for _, stop := range []struct {
		name string
		fn   func(*Server) error
	}{
		{"Close", (*Server).Close},
		{"Shutdown", func(s *Server) error { return s.Shutdown(context.Background()) }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			w := &endWatcher{accepting: make(chan struct{})}
			lim := defaultLimits
			lim.wrap = func(ln net.Listener) net.Listener { w.Listener = ln; return w }
			srv, err := listen("127.0.0.1:0", http.NotFoundHandler(), lim)
			if err != nil {
				t.Fatal(err)
			}
			<-w.accepting
			if err := stop.fn(srv); err != nil {
				t.Fatalf("%s: %v", stop.name, err)
			}
			if !w.ended.Load() {
				t.Fatalf("%s returned while the serving goroutine was still accepting", stop.name)
			}
		})
	}
}

// errListenerBroken is the permanent failure of brokenListener.
var errListenerBroken = errors.New("listener broken for good")

// brokenListener fails every Accept with a permanent error, as a listener
// whose socket went away does; failed is closed by the first.
type brokenListener struct {
	net.Listener
	failed chan struct{}
	once   sync.Once
}

func (l *brokenListener) Accept() (net.Conn, error) {
	l.once.Do(func() { close(l.failed) })
	return nil, errListenerBroken
}

// A listener that fails for good ends serving; Close reports why instead of
// dropping the error.
func TestCloseReportsWhyServingEnded(t *testing.T) {
	broken := &brokenListener{failed: make(chan struct{})}
	lim := defaultLimits
	lim.wrap = func(ln net.Listener) net.Listener { broken.Listener = ln; return broken }
	srv, err := listen("127.0.0.1:0", http.NotFoundHandler(), lim)
	if err != nil {
		t.Fatal(err)
	}
	<-broken.failed
	if err := srv.Close(); !errors.Is(err, errListenerBroken) {
		t.Fatalf("Close = %v, want an error wrapping %v", err, errListenerBroken)
	}
}
