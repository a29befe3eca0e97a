package observe

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/supervision"
)

type reading struct{ V float64 }

// weird is a metric value JSON cannot encode as it is.
type weird struct {
	Ratio float64
	Name  string
}

// runWithMetrics runs src -> gauge, a bolt that reports metrics JSON has no
// number for, until it has executed some inputs; the test stops it.
func runWithMetrics(t *testing.T) (*dsl.Topology, *supervision.Running) {
	t.Helper()
	b := dsl.New("nan", nil)
	src := b.Spout("src", dsl.Unreliable(func() (reading, bool) { return reading{1}, true }))
	gauge := b.Bolt("gauge", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[reading] {
		return handler(func(r reading, _ dsl.Emitter) error {
			info.Metric("nan", math.NaN())
			info.Metric("inf", math.Inf(1))
			info.Metric("minusInf", float32(math.Inf(-1)))
			info.Metric("nested", map[string]any{"list": []any{1.0, math.NaN()}})
			info.Metric("struct", weird{Ratio: math.NaN(), Name: "x"})
			info.Metric("fine", 0.5)
			return errors.New("refused") // and a last error
		})
	}), dsl.Parallelism(2))
	b.Unanchored(src, gauge, dsl.Shuffle[reading]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
	testsupport.WaitUntil(t, 10*time.Second, "the bolt to execute 10 inputs", func() bool {
		return r.Stats().Components["gauge"].Executed >= 10
	})
	return topo, r
}

type handler func(reading, dsl.Emitter) error

func (h handler) Execute(r reading, out dsl.Emitter) error { return h(r, out) }

// TestANaNMetricKeepsEveryAnswerJSON is the attack of issue 15: a component
// reporting NaN made /stats answer 200 with an empty body.
func TestANaNMetricKeepsEveryAnswerJSON(t *testing.T) {
	topo, r := runWithMetrics(t)
	srv, err := listen("127.0.0.1:0", Handler(topo, r), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr
	for _, path := range []string{"/stats", "/api/v1/topology/summary", "/api/v1/topology/nan", "/api/v1/topology/nan?window=600",
		"/api/v1/topology/nan/component/gauge", "/api/v1/topology/nan/graph"} {
		body := get(t, base+path)
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("%s is not JSON: %v\n%.300s", path, err, body)
		}
	}
	var stats report
	if err := json.Unmarshal(get(t, base+"/stats"), &stats); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	for _, task := range stats.Tasks {
		if task.Component == "gauge" && task.Metrics != nil {
			m = task.Metrics
		}
	}
	want := map[string]any{"nan": "NaN", "inf": "+Inf", "minusInf": "-Inf", "fine": 0.5, "struct": "{NaN x}",
		"nested": map[string]any{"list": []any{1.0, "NaN"}}}
	for k, v := range want {
		if got, _ := json.Marshal(m[k]); string(got) != mustJSON(t, v) {
			t.Errorf("metric %s = %s, want %s", k, got, mustJSON(t, v))
		}
	}
	gauge, _ := stats.component("gauge")
	if gauge.LastError != "refused" || gauge.LastErrorTime == nil || gauge.LastErrorTask == 0 {
		t.Errorf("gauge's last error = %q at %v in task %d", gauge.LastError, gauge.LastErrorTime, gauge.LastErrorTask)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteJSONAnswersAnErrorRatherThanAnEmptyBody(t *testing.T) {
	rec := &recorder{header: http.Header{}}
	writeJSON(rec, http.StatusOK, map[string]float64{"x": math.NaN()})
	var e apiError
	if rec.status != http.StatusInternalServerError || json.Unmarshal([]byte(rec.body.String()), &e) != nil || e.ErrorMessage == "" {
		t.Errorf("writeJSON of a NaN: %d %s", rec.status, rec.body.String())
	}
}

type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }

// connCounter counts the connections a listener accepted and has not closed,
// and remembers the most at once.
type connCounter struct {
	open, most atomic.Int64
}

func (c *connCounter) wrap(ln net.Listener) net.Listener { return &countingListener{ln, c} }

type countingListener struct {
	net.Listener
	c *connCounter
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := l.c.open.Add(1)
	for m := l.c.most.Load(); n > m && !l.c.most.CompareAndSwap(m, n); m = l.c.most.Load() {
	}
	return &countedConn{Conn: conn, c: l.c}, nil
}

type countedConn struct {
	net.Conn
	c    *connCounter
	once sync.Once
}

// Close counts the connection closed before the bounded listener lets the
// next one in.
func (c *countedConn) Close() error {
	c.once.Do(func() { c.c.open.Add(-1) })
	return c.Conn.Close()
}

// TestIdleConnectionsAreBoundedAndClosed is the other attack of issue 15: 300
// idle keep-alive connections stayed open forever. Now at most maxConns are
// served at once (and one more accepted, waiting for a slot), and each is
// closed once idle for the idle timeout or to make room for a newcomer.
func TestIdleConnectionsAreBoundedAndClosed(t *testing.T) {
	var conns connCounter
	lim := limits{readHeader: time.Second, read: time.Second, write: time.Second, idle: 50 * time.Millisecond, maxConns: 16, wrap: conns.wrap}
	srv, err := listen("127.0.0.1:0", newHandler(sampleTopology(t), script(sampleStats(time.Second, 1))), lim)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	const clients = 300
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- idleClient(srv.Addr)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d keep-alive clients served and closed in %v, at most %d connections open", clients, time.Since(start), conns.most.Load())
	if most := conns.most.Load(); most > int64(lim.maxConns)+1 {
		t.Errorf("%d connections open at once, limit %d and a newcomer", most, lim.maxConns)
	}
	testsupport.Await(testsupport.Scaled(5*time.Second), func() bool { return conns.open.Load() == 0 })
	if n := conns.open.Load(); n != 0 {
		t.Errorf("%d connections still open", n)
	}
	get(t, "http://"+srv.Addr+"/stats") // and the server still answers
}

// idleClient sends one keep-alive request, reads the answer, then sends
// nothing: the server must close the connection.
func idleClient(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a hung server fails the test instead of hanging it
	if _, err := io.WriteString(c, "GET /api/v1/topology/summary HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return err
	}
	rd := bufio.NewReader(c)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		return errors.New("want a 200 that keeps the connection alive, got " + resp.Status)
	}
	if _, err := rd.ReadByte(); err != io.EOF { // the server hangs up
		return errors.New("an idle connection was not closed: " + errString(err))
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "it sent more"
	}
	return err.Error()
}

func TestASlowClientIsCutOff(t *testing.T) {
	lim := defaultLimits
	lim.readHeader, lim.read = 50*time.Millisecond, 50*time.Millisecond
	srv, err := listen("127.0.0.1:0", newHandler(sampleTopology(t), script(sampleStats(time.Second, 1))), lim)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /stats HTTP/1.1\r\nHost: x\r\n"); err != nil { // and never the end of the headers
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("reading: %v", err)
	}
	if waited := time.Since(start); waited > testsupport.Scaled(5*time.Second) {
		t.Errorf("a slow client held its connection for %v", waited)
	}
}

func TestListenDefaultsToLoopback(t *testing.T) {
	srv, err := listen(":0", http.NotFoundHandler(), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if host, _, _ := net.SplitHostPort(srv.Addr); host != "127.0.0.1" {
		t.Errorf("listening on %s, want the loopback interface", srv.Addr)
	}
}

// TestMetricsPassPromlint checks /metrics of a running topology with
// Prometheus's own linter: names, units, help texts, counter suffixes.
func TestMetricsPassPromlint(t *testing.T) {
	topo, r := runWithMetrics(t)
	srv, err := listen("127.0.0.1:0", Handler(topo, r), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := get(t, "http://"+srv.Addr+"/metrics")
	problems, err := promlint.New(strings.NewReader(string(body))).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, name := range []string{"goshelter_latency_execute_seconds_bucket", "go_goroutines", "goshelter_tuples_failed_total"} {
		if !strings.Contains(string(body), name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	t.Logf("promlint: %d problems in %d lines of /metrics", len(problems), strings.Count(string(body), "\n"))
}

// TestTheFailureThatCausedARestartStaysVisible runs a spout that panics once:
// the task failure reaches the runtime's last error, survives the restart it
// causes, and the event history shows the restart.
func TestTheFailureThatCausedARestartStaysVisible(t *testing.T) {
	var calls atomic.Int64
	b := dsl.New("crash", nil)
	src := b.Spout("src", dsl.Unreliable(func() (reading, bool) {
		if calls.Add(1) == 50 {
			panic("spout broke at 50")
		}
		return reading{1}, true
	}))
	sink := b.Bolt("sink", dsl.Terminator(func(reading) {}))
	b.Unanchored(src, sink, dsl.Shuffle[reading]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()),
		supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond, Cap: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(context.Background())
	testsupport.WaitUntil(t, 10*time.Second, "a restart", func() bool {
		s := r.Stats()
		return s.Restarts != 0 && len(s.Tasks) != 0
	})
	srv, err := listen("127.0.0.1:0", Handler(topo, r), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := getJSON(t, "http://"+srv.Addr+"/api/v1/topology/crash", http.StatusOK)
	spout := byKey(t, body["spouts"], "spoutId", "src")
	if !strings.Contains(spout["lastError"].(string), "panic: spout broke at 50") || spout["errorTime"] == nil || spout["errorTask"] == nil {
		t.Errorf("after the restart, the spout's last error = %v (task %v, at %v)", spout["lastError"], spout["errorTask"], spout["errorTime"])
	}
	var kinds []string
	for _, e := range body["events"].([]any) {
		kinds = append(kinds, e.(map[string]any)["kind"].(string))
	}
	if got := strings.Join(kinds, ","); got != "started,failed,restarting,started" {
		t.Errorf("events %s", got)
	}
	if body["restarts"] != 1.0 || body["incarnation"] != 2.0 || body["status"] != "ACTIVE" {
		t.Errorf("restarts %v, incarnation %v, status %v", body["restarts"], body["incarnation"], body["status"])
	}
}
