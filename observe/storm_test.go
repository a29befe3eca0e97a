package observe

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/goshelter/goshelter/supervision"
)

// getJSON GETs url and decodes its JSON body into a generic value, failing
// the test unless the status is want.
func getJSON(t *testing.T, url string, want int) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %s, want %d", url, resp.Status, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", url, ct)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: not JSON: %v", url, err)
	}
	return body
}

// hasFields fails the test for each of names obj lacks.
func hasFields(t *testing.T, what string, obj any, names ...string) {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, not an object", what, obj)
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			t.Errorf("%s lacks Storm's field %q", what, n)
		}
	}
}

// byKey finds the object of list whose key is value.
func byKey(t *testing.T, list any, key, value string) map[string]any {
	t.Helper()
	for _, e := range list.([]any) {
		if m := e.(map[string]any); m[key] == value {
			return m
		}
	}
	t.Fatalf("no %s %q in %v", key, value, list)
	return nil
}

// failingStats is sampleStats with a last error on bolt task 2, 2 s before
// the snapshot, and a history of events.
func failingStats() supervision.Stats {
	s := sampleStats(10*time.Second, 1)
	s.Tasks[1].LastError, s.Tasks[1].LastErrorTime, s.Tasks[1].LastErrorTask = "boom\nat line 2", t0.Add(8*time.Second), 2
	s.Events = []supervision.Event{
		{Time: t0, Kind: supervision.Started, Incarnation: 1},
		{Time: t0.Add(time.Second), Kind: supervision.Failed, Incarnation: 1, Err: errors.New("task 4 failed")},
		{Time: t0.Add(time.Second), Kind: supervision.Restarting, Incarnation: 1, Attempt: 1, Delay: 2 * time.Second},
		{Time: t0.Add(3 * time.Second), Kind: supervision.Started, Incarnation: 2},
	}
	s.Incarnation, s.Restarts = 2, 1
	return withSums(s)
}

// TestStormSummaryFieldNames pins /api/v1/topology/summary to the fields of
// Storm's STORM-UI-REST-API document: Storm's tools read them.
func TestStormSummaryFieldNames(t *testing.T) {
	body := getJSON(t, serve(t, failingStats())+"/api/v1/topology/summary", http.StatusOK)
	hasFields(t, "summary", body, "topologies", "schedulerDisplayResource")
	topos := body["topologies"].([]any)
	if len(topos) != 1 {
		t.Fatalf("%d topologies, want 1", len(topos))
	}
	topo := topos[0]
	hasFields(t, "a topology", topo, "id", "name", "status", "uptime", "uptimeSeconds", "tasksTotal", "workersTotal", "executorsTotal", "replicationCount")
	m := topo.(map[string]any)
	if m["id"] != "t" || m["name"] != "t" || m["status"] != "ACTIVE" || m["uptime"] != "10s" || m["uptimeSeconds"] != 10.0 || m["tasksTotal"] != 5.0 || m["restarts"] != 1.0 {
		t.Errorf("summary = %v", m)
	}
}

func TestStormTopologyFieldNamesAndFigures(t *testing.T) {
	url := serve(t, failingStats())
	body := getJSON(t, url+"/api/v1/topology/t", http.StatusOK)
	hasFields(t, "topology", body, "id", "name", "uptime", "uptimeSeconds", "status", "tasksTotal", "workersTotal", "executorsTotal",
		"msgTimeout", "windowHint", "schedulerDisplayResource", "replicationCount", "debug", "topologyStats", "spouts", "bolts", "configuration")
	if body["window"] != ":all-time" || body["windowHint"] != "All time" || body["msgTimeout"] != 30.0 {
		t.Errorf("default window: window %v, hint %v, msgTimeout %v", body["window"], body["windowHint"], body["msgTimeout"])
	}
	stats := body["topologyStats"].([]any)
	if len(stats) != 4 {
		t.Fatalf("topologyStats has %d windows, want Storm's four: 600, 10800, 86400 and :all-time", len(stats))
	}
	for i, want := range []string{"600", "10800", "86400", ":all-time"} {
		if w := stats[i].(map[string]any)["window"]; w != want {
			t.Errorf("topologyStats[%d] is window %v, want %s (Storm's order)", i, w, want)
		}
	}
	for _, w := range stats {
		hasFields(t, "a topologyStats window", w, "windowPretty", "window", "emitted", "transferred", "completeLatency", "acked", "failed")
	}
	all := byKey(t, stats, "window", ":all-time")
	if all["emitted"] != 450.0 || all["acked"] != 380.0 || all["failed"] != 10.0 || all["completeLatency"] != "10.000" || all["windowPretty"] != "All time" {
		t.Errorf("all-time window = %v; want the spouts' acks and every component's emits", all)
	}

	spout := byKey(t, body["spouts"], "spoutId", "src")
	hasFields(t, "a spout", spout, "spoutId", "executors", "tasks", "emitted", "transferred", "completeLatency", "acked", "failed",
		"lastError", "errorHost", "errorPort", "errorTime", "errorLapsedSecs", "errorWorkerLogLink")
	if spout["emitted"] != 400.0 || spout["completeLatency"] != "10.000" || spout["lastError"] != "" || spout["errorTime"] != nil {
		t.Errorf("spout = %v", spout)
	}
	bolt := byKey(t, body["bolts"], "boltId", "bolt")
	hasFields(t, "a bolt", bolt, "boltId", "executors", "tasks", "emitted", "transferred", "capacity", "executeLatency", "executed",
		"processLatency", "acked", "failed", "lastError", "errorHost", "errorPort", "errorTime", "errorLapsedSecs", "errorWorkerLogLink")
	checks := map[string]any{
		"executors": 2.0, "tasks": 2.0, "executed": 400.0, "failed": 10.0,
		"capacity": "0.500", "executeLatency": "17.500", "processLatency": "12.000", // the busiest task's capacity; means over samples
		"lastError": "boom\nat line 2", "errorTime": float64(t0.Add(8 * time.Second).Unix()), "errorLapsedSecs": 2.0, "errorTask": 2.0,
	}
	for k, want := range checks {
		if bolt[k] != want {
			t.Errorf("bolt %s = %v, want %v", k, bolt[k], want)
		}
	}
	for _, b := range body["bolts"].([]any) {
		if b.(map[string]any)["boltId"] == "__acker" {
			t.Error("ackers show without sys=1")
		}
	}
	byKey(t, getJSON(t, url+"/api/v1/topology/t?sys=1", http.StatusOK)["bolts"], "boltId", "__acker")

	events := body["events"].([]any)
	if len(events) != 4 || events[2].(map[string]any)["kind"] != "restarting" || events[1].(map[string]any)["error"] != "task 4 failed" {
		t.Errorf("events = %v", events)
	}
}

func TestStormComponentFieldNames(t *testing.T) {
	url := serve(t, failingStats())
	bolt := getJSON(t, url+"/api/v1/topology/t/component/bolt?window=600", http.StatusOK)
	hasFields(t, "a bolt's page", bolt, "id", "encodedId", "name", "executors", "tasks", "topologyId", "encodedTopologyId", "topologyStatus",
		"window", "componentType", "windowHint", "debug", "componentErrors", "boltStats", "executorStats")
	if bolt["componentType"] != "bolt" || bolt["window"] != "600" || bolt["windowHint"] != "10m 0s" || bolt["tasks"] != 2.0 {
		t.Errorf("bolt page = %v", bolt)
	}
	for _, w := range bolt["boltStats"].([]any) {
		hasFields(t, "a boltStats window", w, "windowPretty", "window", "transferred", "processLatency", "acked", "failed", "executeLatency", "executed", "capacity")
	}
	errs := bolt["componentErrors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("componentErrors = %v", errs)
	}
	hasFields(t, "a component error", errs[0], "errorTime", "errorHost", "errorPort", "error", "errorLapsedSecs", "errorWorkerLogLink")
	if e := errs[0].(map[string]any); e["error"] != "boom\nat line 2" || e["errorTime"] != float64(t0.Add(8*time.Second).UnixMilli()) || e["errorTask"] != 2.0 {
		t.Errorf("component error = %v", e)
	}
	executors := bolt["executorStats"].([]any)
	if len(executors) != 2 {
		t.Fatalf("executorStats has %d tasks, want 2", len(executors))
	}
	for _, e := range executors {
		hasFields(t, "an executor", e, "id", "host", "port", "uptime", "uptimeSeconds", "emitted", "transferred", "acked", "failed",
			"executed", "executeLatency", "processLatency", "capacity")
	}
	if e := byKey(t, executors, "id", "[2-2]"); e["capacity"] != "0.500" || e["lastError"] != "boom\nat line 2" {
		t.Errorf("task 2 = %v", e)
	}

	spout := getJSON(t, url+"/api/v1/topology/t/component/src", http.StatusOK)
	if spout["componentType"] != "spout" {
		t.Errorf("src is a %v", spout["componentType"])
	}
	for _, w := range spout["spoutSummary"].([]any) {
		hasFields(t, "a spoutSummary window", w, "windowPretty", "window", "emitted", "transferred", "completeLatency", "acked", "failed")
	}
	if _, ok := spout["boltStats"]; ok {
		t.Error("a spout's page has boltStats")
	}
}

func TestStormErrorsAreJSON(t *testing.T) {
	base := serve(t, failingStats())
	for path, status := range map[string]int{
		"/api/v1/topology/nope":                      http.StatusNotFound,
		"/api/v1/topology/t/component/nope":          http.StatusNotFound,
		"/api/v1/topology/t?window=3600":             http.StatusBadRequest,
		"/api/v1/topology/t/component/bolt?window=x": http.StatusBadRequest,
		"/api/v1/topology/t/graph?window=x":          http.StatusBadRequest,
	} {
		body := getJSON(t, base+path, status)
		hasFields(t, path, body, "error", "errorMessage")
	}
}

func TestStormStatusFollowsTheEvents(t *testing.T) {
	for kind, want := range map[supervision.EventKind]string{
		supervision.Started: "ACTIVE", supervision.Failed: "RESTARTING", supervision.Restarting: "RESTARTING",
		supervision.GaveUp: "FAILED", supervision.Stopped: "STOPPED",
	} {
		s := sampleStats(time.Second, 1)
		s.Events = []supervision.Event{{Kind: supervision.Started}, {Kind: kind}}
		if got := status(s); got != want {
			t.Errorf("after %v: status %s, want %s", kind, got, want)
		}
	}
}

func TestStormIDsAreEscaped(t *testing.T) {
	topo := dotTopology(t) // named `dot "test"`
	stats := supervision.Stats{Topology: topo.Name, Time: t0.Add(time.Second), Uptime: time.Second, Incarnation: 1,
		Tasks: []supervision.TaskStats{{Component: `audit\log`, Kind: "bolt", Task: 6}}}
	srv, err := listen("127.0.0.1:0", newHandler(topo, script(withSums(stats))), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr + "/api/v1/topology/" + url.PathEscape(topo.Name)
	if body := getJSON(t, base, http.StatusOK); body["encodedId"] != url.PathEscape(topo.Name) {
		t.Errorf("encodedId = %v", body["encodedId"])
	}
	if body := getJSON(t, base+"/component/"+url.PathEscape(`audit\log`), http.StatusOK); body["id"] != `audit\log` {
		t.Errorf("component id = %v", body["id"])
	}
}

func TestGraphViewFollowsTheTopology(t *testing.T) {
	body := getJSON(t, serve(t, failingStats())+"/api/v1/topology/t/graph", http.StatusOK)
	nodes, edges := body["components"].([]any), body["edges"].([]any)
	if len(nodes) != 3 || len(edges) != 2 {
		t.Fatalf("graph = %v", body)
	}
	if n := byKey(t, nodes, "id", "bolt"); n["capacity"] != 0.5 || n["failing"] != true || n["parallelism"] != 2.0 {
		t.Errorf("bolt node = %v", n)
	}
	if e := byKey(t, edges, "from", "src"); e["to"] != "bolt" || e["rate"] != 40.0 || e["anchored"] != true || e["stream"] != "line" {
		t.Errorf("src -> bolt = %v", e)
	}
}

// history tests: one task emitting perSec tuples a second since the
// incarnation started.
func at(uptime time.Duration, incarnation int, perSec int64) supervision.Stats {
	return supervision.Stats{
		Topology: "t", Time: t0.Add(uptime), Uptime: uptime, Incarnation: incarnation,
		Tasks: []supervision.TaskStats{{Component: "src", Kind: "spout", Task: 1, Emitted: perSec * int64(uptime/time.Second)}},
	}
}

func TestTenMinuteWindowWhileWatched(t *testing.T) {
	var h history
	var w windowed
	for s := time.Duration(0); s <= 15*time.Minute; s += 2 * time.Second { // a page refreshing every 2 s
		w = h.window(at(s, 1, 10), windowTenMinutes)
		if s == 5*time.Minute && (w.span != 5*time.Minute || w.tasks[1].Emitted != 3000) {
			t.Errorf("at 5 min: span %v, emitted %d; want the incarnation's life", w.span, w.tasks[1].Emitted)
		}
	}
	if gap := spans[0].gap; w.span < tenMinutes || w.span > tenMinutes+gap || w.tasks[1].Emitted != 10*int64(w.span/time.Second) {
		t.Errorf("at 15 min: span %v, emitted %d; want ten minutes or a sample gap more", w.span, w.tasks[1].Emitted)
	}
	if len(h.samples[0]) > int(tenMinutes/spans[0].gap)+2 {
		t.Errorf("%d samples kept", len(h.samples[0]))
	}
	if all := h.window(at(15*time.Minute, 1, 10), windowAllTime); all.span != 15*time.Minute || all.tasks[1].Emitted != 9000 {
		t.Errorf("all time: span %v, emitted %d", all.span, all.tasks[1].Emitted)
	}
}

func TestTenMinuteWindowAfterNobodyAsked(t *testing.T) {
	var h history
	h.window(at(time.Minute, 1, 10), windowTenMinutes)
	// Nobody asked for 19 minutes: the closest span is the 19 minutes since.
	if w := h.window(at(20*time.Minute, 1, 10), windowTenMinutes); w.span != 19*time.Minute || windowPretty(w) != "19m 0s" {
		t.Errorf("span %v (%s), want 19 min", w.span, windowPretty(w))
	}
	// Asked once at 10 min of 14: the 4 minutes since are closer to ten than
	// the 14 of the incarnation's life? No: 6 off against 4 off.
	var g history
	g.window(at(10*time.Minute, 1, 10), windowTenMinutes)
	if w := g.window(at(14*time.Minute, 1, 10), windowTenMinutes); w.span != 14*time.Minute {
		t.Errorf("span %v, want the incarnation's 14 min", w.span)
	}
}

func TestTenMinuteWindowRestartsWithTheIncarnation(t *testing.T) {
	var h history
	for s := time.Duration(0); s <= 12*time.Minute; s += 10 * time.Second {
		h.window(at(s, 1, 10), windowTenMinutes)
	}
	if w := h.window(at(30*time.Second, 2, 10), windowTenMinutes); w.span != 30*time.Second || w.tasks[1].Emitted != 300 || len(h.samples[0]) != 1 {
		t.Errorf("after a restart: span %v, emitted %d, %d samples", w.span, w.tasks[1].Emitted, len(h.samples[0]))
	}
}

// TestEveryStormWindowWhileWatched: a page refreshing every 30 s for two
// days sees each of Storm's windows cover its length (or a sample gap more),
// from a bounded number of kept snapshots, and each window's figures are the
// tuples of its span.
func TestEveryStormWindowWhileWatched(t *testing.T) {
	var h history
	end := 48 * time.Hour
	for s := time.Duration(0); s <= end; s += 30 * time.Second {
		h.window(at(s, 1, 10), windowAllTime)
	}
	for i, sp := range spans {
		w := h.window(at(end, 1, 10), sp.window)
		if w.span < sp.length || w.span > sp.length+sp.gap || w.tasks[1].Emitted != 10*int64(w.span/time.Second) {
			t.Errorf("window %s: span %v, emitted %d; want %v to %v and 10 a second", sp.window, w.span, w.tasks[1].Emitted, sp.length, sp.length+sp.gap)
		}
		if n := len(h.samples[i]); n > int(sp.length/sp.gap)+2 {
			t.Errorf("window %s keeps %d snapshots", sp.window, n)
		}
		if hint := windowHint(sp.window); hint != prettyDuration(sp.length) {
			t.Errorf("window %s is called %q", sp.window, hint)
		}
	}
	if all := h.window(at(end, 1, 10), windowAllTime); all.span != end {
		t.Errorf("all time covers %v, want the incarnation's %v", all.span, end)
	}
	for window, want := range map[string]string{"600": "10m 0s", "10800": "3h 0m 0s", "86400": "1d 0h 0m 0s", ":all-time": "All time"} {
		if got := windowHint(window); got != want {
			t.Errorf("windowHint(%s) = %q, want Storm's %q", window, got, want)
		}
	}
}

func TestPrettyDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 59 * time.Second: "59s", 10 * time.Minute: "10m 0s", 29*time.Minute + 19*time.Second: "29m 19s",
		3 * time.Hour: "3h 0m 0s", 24 * time.Hour: "1d 0h 0m 0s",
	} {
		if got := prettyDuration(d); got != want {
			t.Errorf("prettyDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestStormWindowChoosesTheFigures: ?window=600 gives the per-component and
// per-executor figures of the last ten minutes, the default those of all time
// (the topology and component pages list both windows either way).
func TestStormWindowChoosesTheFigures(t *testing.T) {
	for _, tc := range []struct {
		query   string
		emitted float64 // the spout's, 400 per k: k=1 at 1 min, k=3 at 30 min
	}{
		{"", 1200},
		{"?window=600", 800},
		// Three hours and a day: the incarnation's 30 minutes, all of it.
		{"?window=10800", 1200},
		{"?window=86400", 1200},
	} {
		srv, err := listen("127.0.0.1:0", newHandler(sampleTopology(t), script(sampleStats(time.Minute, 1), sampleStats(30*time.Minute, 3))), defaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + srv.Addr
		getJSON(t, url+"/api/v1/topology/t", http.StatusOK) // the 1-minute snapshot enters the history
		spout := byKey(t, getJSON(t, url+"/api/v1/topology/t"+tc.query, http.StatusOK)["spouts"], "spoutId", "src")
		if spout["emitted"] != tc.emitted {
			t.Errorf("topology%s: spout emitted %v, want %v", tc.query, spout["emitted"], tc.emitted)
		}
		page := getJSON(t, url+"/api/v1/topology/t/component/src"+tc.query, http.StatusOK)
		execs := page["executorStats"].([]any)
		if len(execs) != 1 || execs[0].(map[string]any)["emitted"] != tc.emitted {
			t.Errorf("component%s: executorStats %v, want the spout's task with %v emitted", tc.query, execs, tc.emitted)
		}
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}
}
