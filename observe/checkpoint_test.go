package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// checkpointedStats is sampleStats after checkpoint 7 committed: the spout
// stored an 8-byte position, the bolt's tasks 40 and 24 bytes of state, and
// the sink took no part (a task of a topology without state, as sink is).
func checkpointedStats() supervision.Stats {
	s := sampleStats(10*time.Second, 1)
	ms := time.Millisecond
	for i, c := range []struct {
		id    int64
		d     time.Duration
		bytes int64
	}{{7, 2 * ms, 40}, {7, 5 * ms, 24}, {0, 0, 0}, {7, ms, 8}} {
		s.Tasks[i].Checkpoint, s.Tasks[i].CheckpointDuration, s.Tasks[i].CheckpointBytes = c.id, c.d, c.bytes
	}
	return withSums(s)
}

func TestStormShowsTheLastCheckpoint(t *testing.T) {
	url := serve(t, checkpointedStats())
	body := getJSON(t, url+"/api/v1/topology/t", http.StatusOK)
	if body["stateful"] != false {
		t.Errorf("stateful = %v for a topology without stateful bolts", body["stateful"])
	}
	checks := []struct {
		what string
		obj  map[string]any
		want [3]any // id, ms, bytes
	}{
		{"spout src", byKey(t, body["spouts"], "spoutId", "src"), [3]any{7.0, "1.000", 8.0}},
		// The highest id, the slowest task, the bytes of both tasks.
		{"bolt bolt", byKey(t, body["bolts"], "boltId", "bolt"), [3]any{7.0, "5.000", 64.0}},
		// Always there, 0 without a checkpoint: one shape for every client.
		{"bolt sink", byKey(t, body["bolts"], "boltId", "sink"), [3]any{0.0, "0.000", 0.0}},
	}
	component := getJSON(t, url+"/api/v1/topology/t/component/bolt", http.StatusOK)
	checks = append(checks, struct {
		what string
		obj  map[string]any
		want [3]any
	}{"executor [1-1]", byKey(t, component["executorStats"], "id", "[1-1]"), [3]any{7.0, "2.000", 40.0}})
	for _, c := range checks {
		got := [3]any{c.obj["checkpointId"], c.obj["checkpointMs"], c.obj["checkpointBytes"]}
		if got != c.want {
			t.Errorf("%s: checkpointId, checkpointMs, checkpointBytes = %v, want %v", c.what, got, c.want)
		}
	}
}

func TestStatsAndMetricsShowTheLastCheckpoint(t *testing.T) {
	url := serve(t, checkpointedStats())
	var r report
	if err := json.Unmarshal(get(t, url+"/stats"), &r); err != nil {
		t.Fatal(err)
	}
	if b := component(t, r, "bolt"); b.CheckpointID != 7 || b.CheckpointMs != 5 || b.CheckpointBytes != 64 {
		t.Errorf("/stats bolt checkpoint %d, %v ms, %d bytes; want 7, 5 ms (the slowest task), 64 bytes (both tasks)",
			b.CheckpointID, b.CheckpointMs, b.CheckpointBytes)
	}
	if f := r.Tasks[3]; f.Task != 4 || f.CheckpointID != 7 || f.CheckpointMs != 1 || f.CheckpointBytes != 8 {
		t.Errorf("/stats task %d checkpoint %d, %v ms, %d bytes; want task 4: 7, 1 ms, 8 bytes", f.Task, f.CheckpointID, f.CheckpointMs, f.CheckpointBytes)
	}

	families, err := new(expfmt.TextParser).TextToMetricFamilies(bytes.NewReader(get(t, url+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	task := func(id string) map[string]string { return map[string]string{"topology": "t", "task": id} }
	for _, tt := range []struct {
		metric, task string
		want         float64
	}{
		{"goshelter_checkpoint_id", "4", 7},
		{"goshelter_checkpoint_duration_seconds", "2", 0.005},
		{"goshelter_checkpoint_size_bytes", "1", 40},
	} {
		if got, ok := series(t, families, tt.metric, task(tt.task)); !ok || !near(got, tt.want) {
			t.Errorf("%s of task %s = %v (found %v), want %v", tt.metric, tt.task, got, ok, tt.want)
		}
	}
	if _, ok := series(t, families, "goshelter_checkpoint_id", task("3")); ok {
		t.Error("a task without a committed checkpoint has a checkpoint series")
	}
}

func TestMetricsOfATopologyWithoutStateHaveNoCheckpointSeries(t *testing.T) {
	body := string(get(t, serve(t, sampleStats(10*time.Second, 1))+"/metrics"))
	if strings.Contains(body, "goshelter_checkpoint") {
		t.Errorf("/metrics of a topology without state has checkpoint metrics:\n%s", body)
	}
}

// commits is a store that says when a checkpoint's commit begins.
type commits struct {
	state.Store
	mu     sync.Mutex // mu guards at
	at     uint64
	second chan struct{} // closed when the second commit begins
}

func (c *commits) Commit(ctx context.Context, cp state.Checkpoint) error {
	c.mu.Lock()
	if c.at = cp.ID; c.at == 2 {
		close(c.second)
	}
	c.mu.Unlock()
	return c.Store.Commit(ctx, cp)
}

type tally struct{ N int }

// TestARunningStatefulTopologyShowsItsCheckpoints reads the checkpoint figures
// of a real run off the REST API: every spout and bolt task takes part.
func TestARunningStatefulTopologyShowsItsCheckpoints(t *testing.T) {
	next := 0 // touched by the spout's task only
	b := dsl.New("stateful", dsl.Conf{dsl.CheckpointInterval: 5 * time.Millisecond})
	src := b.Spout("src", dsl.ReliableFrom(func(dsl.TaskInfo) *counter { return &counter{next: &next} }))
	sum := b.Bolt("sum", dsl.Stateful(func(in tally, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get("sum")
		st.Put("sum", n+in.N)
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(src, sum, dsl.Shuffle[tally]())
	topo := build(t, b)
	store := &commits{Store: state.NewMemory(), second: make(chan struct{})}
	running, err := supervision.Run(context.Background(), topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := running.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-store.second: // the first checkpoint's figures are published before the second begins
	case <-time.After(30 * time.Second):
		t.Fatal("no second checkpoint in 30 s")
	}
	srv, err := listen("127.0.0.1:0", Handler(topo, running), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := getJSON(t, "http://"+srv.Addr+"/api/v1/topology/stateful", http.StatusOK)
	if body["stateful"] != true {
		t.Errorf("stateful = %v", body["stateful"])
	}
	spout := byKey(t, body["spouts"], "spoutId", "src")
	if id, _ := spout["checkpointId"].(float64); id < 1 || spout["checkpointBytes"] == 0.0 {
		t.Errorf("spout checkpoint %v, %v bytes; want an id and the position's bytes", spout["checkpointId"], spout["checkpointBytes"])
	}
	executors := getJSON(t, "http://"+srv.Addr+"/api/v1/topology/stateful/component/sum", http.StatusOK)["executorStats"].([]any)
	for _, e := range executors {
		if id, _ := e.(map[string]any)["checkpointId"].(float64); id < 1 {
			t.Errorf("executor %v has no checkpoint", e.(map[string]any)["id"])
		}
	}
}

// counter is a positioned source of tallies 1, 2, 3, ... up to 1000; its
// position is the next tally.
type counter struct{ next *int }

func (c *counter) Next() (int, tally, bool) {
	if *c.next == 1000 {
		return 0, tally{}, false
	}
	*c.next++
	return *c.next, tally{*c.next}, true
}
func (c *counter) Ack(int)  {}
func (c *counter) Nack(int) {}
func (c *counter) Position() []byte {
	return []byte{byte(*c.next >> 8), byte(*c.next)}
}
func (c *counter) Rewind(p []byte) error {
	*c.next = int(p[0])<<8 | int(p[1])
	return nil
}
