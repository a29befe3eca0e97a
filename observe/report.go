package observe

import (
	"fmt"
	"sync"
	"time"

	"github.com/goshelter/goshelter/supervision"
)

// report is what Storm's UI shows for a topology, computed from a snapshot and,
// for rates and capacity, the snapshot before it. /stats serves it as JSON, so
// its field names and tags are a format other programs read
// (docs/OBSERVABILITY.md describes it): change them only on purpose.
type report struct {
	Topology    string    `json:"topology"`
	Time        time.Time `json:"time"`
	UptimeSecs  float64   `json:"uptime_secs"`
	WindowSecs  float64   `json:"window_secs"` // the time rates and capacity cover
	Incarnation int       `json:"incarnation"`
	Restarts    int       `json:"restarts"`
	InFlight    int64     `json:"in_flight"`
	Components  []figures `json:"components"` // by task numbering: components by id, then "__acker"
	Tasks       []figures `json:"tasks"`      // by task id
	Flows       []flow    `json:"flows"`      // tuples between components, for graphs
}

// figures are one component's or one task's numbers. Counters and latencies
// cover the incarnation's life; rates and capacity cover the report's window.
type figures struct {
	Component    string `json:"component"`
	Kind         string `json:"kind"`           // "spout", "bolt" or "acker"
	Task         int    `json:"task,omitempty"` // 0 for a component
	Tasks        int    `json:"tasks"`          // 1 for a task
	Emitted      int64  `json:"emitted"`
	Transferred  int64  `json:"transferred"`
	Executed     int64  `json:"executed"`
	Acked        int64  `json:"acked"`
	Failed       int64  `json:"failed"`
	Expired      int64  `json:"expired"`
	Pending      int64  `json:"pending"`
	MailboxDepth int    `json:"mailbox_depth"` // data batches waiting

	ExecuteSecs       float64 `json:"execute_secs"`        // bolts: time spent executing
	ExecuteLatencyMs  float64 `json:"execute_latency_ms"`  // bolts
	ProcessLatencyMs  float64 `json:"process_latency_ms"`  // bolts, sampled
	CompleteLatencyMs float64 `json:"complete_latency_ms"` // spouts, sampled
	// Capacity is the fraction of the window a bolt task spent executing; a
	// component shows its busiest task, as Storm does, because the busiest task
	// is the one that holds the others back. Time parked on a full downstream
	// mailbox counts as busy.
	Capacity    float64 `json:"capacity"`
	EmitRate    float64 `json:"emit_rate"`    // tuples/s
	ExecuteRate float64 `json:"execute_rate"` // tuples/s
	AckRate     float64 `json:"ack_rate"`     // tuples/s
	FailRate    float64 `json:"fail_rate"`    // tuples/s

	// Metrics are the latest values a task's component reported itself
	// (TaskInfo.Metric); tasks only. Values JSON has no number for (NaN, ±Inf)
	// are strings.
	Metrics map[string]any `json:"metrics,omitempty"`

	// LastError is the most recent failure, with its time and task (see
	// supervision.TaskStats); empty when there was none.
	LastError     string     `json:"last_error,omitempty"`
	LastErrorTime *time.Time `json:"last_error_time,omitempty"`
	LastErrorTask int        `json:"last_error_task,omitempty"`

	// The last committed checkpoint (topologies with state; 0 without, or
	// before the first commit): its id, the time until the task passed its
	// barrier, and the bytes of state or position the task stored. A
	// component shows the highest id, the longest time and the sum of the
	// bytes (see supervision.TaskStats).
	CheckpointID    int64   `json:"checkpoint_id"`
	CheckpointMs    float64 `json:"checkpoint_ms"`
	CheckpointBytes int64   `json:"checkpoint_bytes"`
}

// flow is the traffic from one component to another, all streams together: the
// runtime counts tuples by destination task, not by stream.
type flow struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Transferred int64   `json:"transferred"`
	Rate        float64 `json:"rate"` // tuples/s over the window
}

// newReport computes the report of cur. Rates and capacity cover the time since
// prev; when prev is nil or from another incarnation (whose counters started
// from zero again) they cover cur's uptime.
func newReport(prev *supervision.Stats, cur supervision.Stats) report {
	r := report{
		Topology: cur.Topology, Time: cur.Time, UptimeSecs: cur.Uptime.Seconds(),
		Incarnation: cur.Incarnation, Restarts: cur.Restarts, InFlight: cur.InFlight,
	}
	base := map[int]supervision.TaskStats{}
	window := cur.Uptime
	if prev != nil && prev.Incarnation == cur.Incarnation && cur.Time.After(prev.Time) {
		window = cur.Time.Sub(prev.Time)
		for _, t := range prev.Tasks {
			base[t.Task] = t
		}
	}
	r.WindowSecs = window.Seconds()
	byComponent := map[string]int{}
	taskComponent := map[int]string{}
	for _, t := range cur.Tasks {
		taskComponent[t.Task] = t.Component
	}
	flows := map[[2]string]int{}
	for _, t := range cur.Tasks {
		f := taskFigures(t, base[t.Task], window)
		r.Tasks = append(r.Tasks, f)
		i, ok := byComponent[t.Component]
		if !ok {
			i = len(r.Components)
			byComponent[t.Component] = i
			r.Components = append(r.Components, figures{Component: t.Component, Kind: t.Kind})
		}
		r.Components[i].add(f)
		r.addFlows(flows, t, base[t.Task], taskComponent, window)
	}
	for i := range r.Components {
		// Means over the summed samples, not means of the tasks' means: a task
		// that saw few inputs must not weigh as much as a busy one.
		sum := cur.Components[r.Components[i].Component]
		r.Components[i].latencies(sum)
		r.Components[i].lastError(sum)
		r.Components[i].checkpoint(sum)
	}
	return r
}

func (r *report) addFlows(index map[[2]string]int, t, base supervision.TaskStats, comp map[int]string, window time.Duration) {
	for to, n := range t.SentTo {
		key := [2]string{t.Component, comp[to]}
		i, ok := index[key]
		if !ok {
			i = len(r.Flows)
			index[key] = i
			r.Flows = append(r.Flows, flow{From: key[0], To: key[1]})
		}
		r.Flows[i].Transferred += n
		r.Flows[i].Rate += rate(n-base.SentTo[to], window)
	}
}

func taskFigures(t, base supervision.TaskStats, window time.Duration) figures {
	f := figures{
		Component: t.Component, Kind: t.Kind, Task: t.Task, Tasks: 1,
		Emitted: t.Emitted, Transferred: t.Transferred, Executed: t.Executed,
		Acked: t.Acked, Failed: t.Failed, Expired: t.Expired, Pending: t.Pending, MailboxDepth: t.MailboxDepth,
		EmitRate: rate(t.Emitted-base.Emitted, window), ExecuteRate: rate(t.Executed-base.Executed, window),
		AckRate: rate(t.Acked-base.Acked, window), FailRate: rate(t.Failed-base.Failed, window),
		Metrics: jsonSafe(t.Metrics),
	}
	f.lastError(t)
	f.checkpoint(t)
	if window > 0 {
		f.Capacity = float64(t.ExecuteTime-base.ExecuteTime) / float64(window)
	}
	f.latencies(t)
	return f
}

func (f *figures) latencies(t supervision.TaskStats) {
	f.ExecuteSecs = t.ExecuteTime.Seconds()
	f.ExecuteLatencyMs = ms(t.ExecuteLatency)
	f.ProcessLatencyMs = ms(t.ProcessLatency)
	f.CompleteLatencyMs = ms(t.CompleteLatency)
}

func (f *figures) lastError(t supervision.TaskStats) {
	if t.LastError != "" {
		at := t.LastErrorTime
		f.LastError, f.LastErrorTime, f.LastErrorTask = t.LastError, &at, t.LastErrorTask
	}
}

func (f *figures) checkpoint(t supervision.TaskStats) {
	f.CheckpointID, f.CheckpointMs, f.CheckpointBytes = t.Checkpoint, ms(t.CheckpointDuration), t.CheckpointBytes
}

// add sums a task's figures into its component's.
func (f *figures) add(t figures) {
	f.Tasks++
	f.Emitted += t.Emitted
	f.Transferred += t.Transferred
	f.Executed += t.Executed
	f.Acked += t.Acked
	f.Failed += t.Failed
	f.Expired += t.Expired
	f.Pending += t.Pending
	f.MailboxDepth += t.MailboxDepth
	f.Capacity = max(f.Capacity, t.Capacity)
	f.EmitRate += t.EmitRate
	f.ExecuteRate += t.ExecuteRate
	f.AckRate += t.AckRate
	f.FailRate += t.FailRate
}

func rate(n int64, window time.Duration) float64 {
	if window <= 0 || n <= 0 {
		return 0
	}
	return float64(n) / window.Seconds()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// component returns the figures of component id, or false.
func (r report) component(id string) (figures, bool) {
	for _, f := range r.Components {
		if f.Component == id {
			return f, true
		}
	}
	return figures{}, false
}

// flow returns the traffic from one component to another, zero when there was
// none, so that an idle edge still shows 0/s.
func (r report) flow(from, to string) flow {
	for _, f := range r.Flows {
		if f.From == from && f.To == to {
			return f
		}
	}
	return flow{From: from, To: to}
}

// window reports on a running topology with rates over a sliding window: each
// report covers the time since a baseline snapshot at least min old (or, until
// there is one, the incarnation's uptime), so windows last between min and
// about twice min when reports come regularly. Reports over a fixed minimum
// rather than since the last request keep two clients polling /stats from
// seeing rates over a few milliseconds. With min zero, each report covers the
// time since the previous one. A window is safe for concurrent use.
type window struct {
	stats     func() supervision.Stats
	min       time.Duration
	mu        sync.Mutex // mu guards base and candidate
	base      *supervision.Stats
	candidate *supervision.Stats // the next baseline, once it is min old
}

// newWindow returns a window on stats; its first report covers the uptime.
func newWindow(stats func() supervision.Stats, min time.Duration) *window {
	return &window{stats: stats, min: min}
}

// read takes a snapshot and reports on it.
func (w *window) read() report {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.stats()
	if c := w.candidate; c != nil && (c.Incarnation != cur.Incarnation || cur.Time.Sub(c.Time) >= w.min) {
		w.base, w.candidate = c, nil
	}
	r := newReport(w.base, cur)
	if w.candidate == nil {
		w.candidate = &cur
	}
	return r
}

// rateText formats tuples per second compactly: "0/s", "950/s", "12.3k/s", "4.1M/s".
func rateText(perSec float64) string {
	switch {
	case perSec >= 1e6:
		return fmt.Sprintf("%.1fM/s", perSec/1e6)
	case perSec >= 1e4:
		return fmt.Sprintf("%.1fk/s", perSec/1e3)
	default:
		return fmt.Sprintf("%.0f/s", perSec)
	}
}

// msText formats a latency in milliseconds with the unit that keeps it short.
func msText(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	case ms >= 0.01:
		return fmt.Sprintf("%.0f µs", ms*1e3)
	case ms >= 0.001:
		return fmt.Sprintf("%.1f µs", ms*1e3)
	default:
		return fmt.Sprintf("%.0f ns", ms*1e6)
	}
}
