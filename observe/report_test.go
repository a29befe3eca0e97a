package observe

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goshelter/goshelter/supervision"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// sampleStats is a snapshot of src (spout, task 4) -> bolt (tasks 1 and 2) ->
// sink (task 3), plus an acker (task 5), after uptime; every counter is scaled
// by k so two snapshots can differ.
func sampleStats(uptime time.Duration, k int64) supervision.Stats {
	ms := time.Millisecond
	d := time.Duration(k)
	return withSums(supervision.Stats{
		Topology: "t", Time: t0.Add(uptime), Uptime: uptime, Incarnation: 1, InFlight: 7,
		Tasks: []supervision.TaskStats{
			{Component: "bolt", Kind: "bolt", Task: 1, Executed: 100 * k, ExecuteTime: 2000 * ms * d, Acked: 100 * k,
				ProcessSamples: 2 * k, ProcessTime: 6 * ms * d, Emitted: 50 * k, Transferred: 50 * k, SentTo: map[int]int64{3: 50 * k}},
			{Component: "bolt", Kind: "bolt", Task: 2, Executed: 300 * k, ExecuteTime: 5000 * ms * d, Acked: 290 * k, Failed: 10 * k,
				ProcessSamples: 1 * k, ProcessTime: 30 * ms * d, MailboxDepth: 3},
			{Component: "sink", Kind: "bolt", Task: 3, Executed: 50 * k, ExecuteTime: 100 * ms * d, Acked: 50 * k},
			{Component: "src", Kind: "spout", Task: 4, Emitted: 400 * k, Transferred: 400 * k, SentTo: map[int]int64{1: 100 * k, 2: 300 * k},
				Acked: 380 * k, Failed: 10 * k, Expired: 5 * k, Pending: 10, CompleteSamples: 4 * k, CompleteTime: 40 * ms * d},
			{Component: "__acker", Kind: "acker", Task: 5, Acked: 380 * k, Failed: 10 * k, Expired: 5 * k, Pending: 10},
		},
	})
}

// withSums fills in what supervision derives from the tasks' counters: each
// task's means and the sums per component.
func withSums(s supervision.Stats) supervision.Stats {
	s.Components = map[string]supervision.TaskStats{}
	for i := range s.Tasks {
		means(&s.Tasks[i])
		t := s.Tasks[i]
		sum, ok := s.Components[t.Component]
		if !ok {
			sum = supervision.TaskStats{Component: t.Component, Kind: t.Kind}
		}
		sum.Emitted += t.Emitted
		sum.Transferred += t.Transferred
		sum.Executed += t.Executed
		sum.Acked += t.Acked
		sum.Failed += t.Failed
		sum.Expired += t.Expired
		sum.Pending += t.Pending
		sum.MailboxDepth += t.MailboxDepth
		sum.ExecuteTime += t.ExecuteTime
		sum.ProcessSamples += t.ProcessSamples
		sum.ProcessTime += t.ProcessTime
		sum.CompleteSamples += t.CompleteSamples
		sum.CompleteTime += t.CompleteTime
		sum.ExecuteHistogram = addBuckets(sum.ExecuteHistogram, t.ExecuteHistogram)
		sum.ProcessHistogram = addBuckets(sum.ProcessHistogram, t.ProcessHistogram)
		sum.CompleteHistogram = addBuckets(sum.CompleteHistogram, t.CompleteHistogram)
		if t.LastErrorTime.After(sum.LastErrorTime) {
			sum.LastError, sum.LastErrorTime, sum.LastErrorTask = t.LastError, t.LastErrorTime, t.LastErrorTask
		}
		sum.Checkpoint = max(sum.Checkpoint, t.Checkpoint)
		sum.CheckpointDuration = max(sum.CheckpointDuration, t.CheckpointDuration)
		sum.CheckpointBytes += t.CheckpointBytes
		means(&sum)
		s.Components[t.Component] = sum
	}
	return s
}

func addBuckets(sum, o []int64) []int64 {
	if o == nil {
		return sum
	}
	out := make([]int64, len(o))
	for i := range o {
		out[i] = o[i]
		if i < len(sum) {
			out[i] += sum[i]
		}
	}
	return out
}

func means(t *supervision.TaskStats) {
	mean := func(d time.Duration, n int64) time.Duration {
		if n == 0 {
			return 0
		}
		return d / time.Duration(n)
	}
	t.ExecuteLatency = mean(t.ExecuteTime, t.Executed)
	t.ProcessLatency = mean(t.ProcessTime, t.ProcessSamples)
	t.CompleteLatency = mean(t.CompleteTime, t.CompleteSamples)
}

// script replays snapshots, the last one forever, as a running topology's
// Stats would return them.
func script(stats ...supervision.Stats) func() supervision.Stats {
	var mu sync.Mutex
	return func() supervision.Stats {
		mu.Lock()
		defer mu.Unlock()
		s := stats[0]
		if len(stats) > 1 {
			stats = stats[1:]
		}
		return s
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func component(t *testing.T, r report, id string) figures {
	t.Helper()
	f, ok := r.component(id)
	if !ok {
		t.Fatalf("report has no component %q", id)
	}
	return f
}

func TestReportOverUptime(t *testing.T) {
	r := newReport(nil, sampleStats(10*time.Second, 1))
	if r.WindowSecs != 10 || r.UptimeSecs != 10 || r.InFlight != 7 || len(r.Tasks) != 5 || len(r.Components) != 4 {
		t.Fatalf("report header = %+v", r)
	}
	bolt := component(t, r, "bolt")
	checks := []struct {
		name      string
		got, want float64
	}{
		{"bolt tasks", float64(bolt.Tasks), 2},
		{"bolt executed", float64(bolt.Executed), 400},
		{"bolt failed", float64(bolt.Failed), 10},
		{"bolt mailbox depth", float64(bolt.MailboxDepth), 3},
		{"bolt execute latency", bolt.ExecuteLatencyMs, 7000.0 / 400},
		{"bolt process latency", bolt.ProcessLatencyMs, 36.0 / 3},
		{"bolt capacity is its busiest task's", bolt.Capacity, 0.5},
		{"bolt execute rate", bolt.ExecuteRate, 40},
		{"bolt fail rate", bolt.FailRate, 1},
		{"bolt execute secs", bolt.ExecuteSecs, 7},
		{"task 1 capacity", r.Tasks[0].Capacity, 0.2},
		{"task 1 execute latency", r.Tasks[0].ExecuteLatencyMs, 20},
		{"spout complete latency", component(t, r, "src").CompleteLatencyMs, 10},
		{"spout emit rate", component(t, r, "src").EmitRate, 40},
		{"spout expired", float64(component(t, r, "src").Expired), 5},
		{"acker pending", float64(component(t, r, "__acker").Pending), 10},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	var order []string
	for _, c := range r.Components {
		order = append(order, c.Component)
	}
	if want := []string{"bolt", "sink", "src", "__acker"}; !slices.Equal(order, want) {
		t.Errorf("components in order %v, want task numbering %v", order, want)
	}
	wantFlows := []flow{{From: "bolt", To: "sink", Transferred: 50, Rate: 5}, {From: "src", To: "bolt", Transferred: 400, Rate: 40}}
	if len(r.Flows) != len(wantFlows) {
		t.Fatalf("flows = %+v, want %+v", r.Flows, wantFlows)
	}
	for i, f := range r.Flows {
		if f.From != wantFlows[i].From || f.To != wantFlows[i].To || f.Transferred != wantFlows[i].Transferred || !near(f.Rate, wantFlows[i].Rate) {
			t.Errorf("flow %d = %+v, want %+v", i, f, wantFlows[i])
		}
	}
	if f := r.flow("sink", "src"); f.Rate != 0 || f.Transferred != 0 {
		t.Errorf("a pair with no traffic has flow %+v", f)
	}
}

func TestReportOverWindow(t *testing.T) {
	otherIncarnation := sampleStats(5*time.Second, 1)
	otherIncarnation.Incarnation = 2
	tests := []struct {
		name   string
		prev   supervision.Stats
		window float64
	}{
		// 400 more executed over 5 s; task 2 executed for all 5 s.
		{"same incarnation: since prev", sampleStats(5*time.Second, 1), 5},
		// 800 executed over 10 s; task 2 executed for all 10 s.
		{"another incarnation: over the uptime", otherIncarnation, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReport(&tt.prev, sampleStats(10*time.Second, 2))
			bolt := component(t, r, "bolt")
			if r.WindowSecs != tt.window || !near(bolt.ExecuteRate, 80) || !near(bolt.Capacity, 1) {
				t.Errorf("window %v, bolt rate %v, capacity %v; want %v, 80, 1", r.WindowSecs, bolt.ExecuteRate, bolt.Capacity, tt.window)
			}
			if !near(r.Flows[1].Rate, 80) {
				t.Errorf("src -> bolt rate = %v, want 80", r.Flows[1].Rate)
			}
			if bolt.Executed != 800 || !near(bolt.ExecuteLatencyMs, 7000.0/400) {
				t.Errorf("counters and latencies cover the incarnation: executed %d, latency %v", bolt.Executed, bolt.ExecuteLatencyMs)
			}
		})
	}
}

func TestReportOfAStoppedTopology(t *testing.T) {
	r := newReport(nil, supervision.Stats{Topology: "t", Time: t0, Incarnation: 1})
	if len(r.Components) != 0 || len(r.Tasks) != 0 || r.WindowSecs != 0 {
		t.Errorf("report without tasks = %+v", r)
	}
}

func TestWindowKeepsABaselineAtLeastMinOld(t *testing.T) {
	var snapshots []supervision.Stats
	for _, sec := range []int{1, 2, 3, 4, 5, 6} {
		snapshots = append(snapshots, sampleStats(time.Duration(sec)*time.Second, int64(sec)))
	}
	w := newWindow(script(snapshots...), 2*time.Second)
	var windows []float64
	for range snapshots {
		windows = append(windows, w.read().WindowSecs)
	}
	// 1 s: the uptime; 2 s: still the uptime (the snapshot at 1 s is only 1 s
	// old); 3 s and 4 s: since 1 s; 5 s and 6 s: since 3 s.
	want := []float64{1, 2, 2, 3, 2, 3}
	for i := range want {
		if windows[i] != want[i] {
			t.Fatalf("windows = %v, want %v", windows, want)
		}
	}
}

func TestWindowWithoutMinCoversTheTimeSinceTheLastReport(t *testing.T) {
	w := newWindow(script(sampleStats(1*time.Second, 1), sampleStats(3*time.Second, 2), sampleStats(4*time.Second, 3)), 0)
	var windows []float64
	for range 3 {
		windows = append(windows, w.read().WindowSecs)
	}
	if windows[0] != 1 || windows[1] != 2 || windows[2] != 1 {
		t.Fatalf("windows = %v, want [1 2 1]", windows)
	}
}
