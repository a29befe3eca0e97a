package observe

import (
	"sync"
	"time"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// Source is a running topology as observe reads it. *supervision.Running
// implements it. Both methods are called from any goroutine, must be safe for
// concurrent use and must not block.
type Source interface {
	Stats() supervision.Stats
	Topology() *dsl.Topology
}

// Report is what Storm's UI shows for a topology, computed from a snapshot and,
// for rates and capacity, the snapshot before it. It is what /stats serves.
type Report struct {
	Topology    string    `json:"topology"`
	Time        time.Time `json:"time"`
	UptimeSecs  float64   `json:"uptime_secs"`
	WindowSecs  float64   `json:"window_secs"` // the time rates and capacity cover
	Incarnation int       `json:"incarnation"`
	Restarts    int       `json:"restarts"`
	InFlight    int64     `json:"in_flight"`
	Components  []Figures `json:"components"` // by task numbering: components by id, then "__acker"
	Tasks       []Figures `json:"tasks"`      // by task id
	Flows       []Flow    `json:"flows"`      // tuples between components, for graphs
}

// Figures are one component's or one task's numbers. Counters and latencies
// cover the incarnation's life; rates and capacity cover the report's window.
type Figures struct {
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
	// component shows its busiest task, as Storm does. Near 1 means the bolt
	// is the bottleneck (time parked on a full downstream mailbox counts too).
	Capacity    float64 `json:"capacity"`
	EmitRate    float64 `json:"emit_rate"`    // tuples/s
	ExecuteRate float64 `json:"execute_rate"` // tuples/s
	AckRate     float64 `json:"ack_rate"`     // tuples/s
	FailRate    float64 `json:"fail_rate"`    // tuples/s

	// Metrics are the latest values a task's component reported itself
	// (multilang "metrics"); tasks only.
	Metrics map[string]any `json:"metrics,omitempty"`
}

// Flow is the traffic from one component to another, all streams together.
type Flow struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Transferred int64   `json:"transferred"`
	Rate        float64 `json:"rate"` // tuples/s over the window
}

// NewReport computes the report of cur. Rates and capacity cover the time since
// prev; when prev is nil or from another incarnation they cover cur's uptime.
func NewReport(prev *supervision.Stats, cur supervision.Stats) Report {
	r := Report{
		Topology: cur.Topology, Time: cur.Time, UptimeSecs: cur.Uptime.Seconds(),
		Incarnation: cur.Incarnation, Restarts: cur.Restarts, InFlight: cur.InFlight,
	}
	base := map[int]actors.TaskSnapshot{}
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
		f := figures(t, base[t.Task], window)
		r.Tasks = append(r.Tasks, f)
		i, ok := byComponent[t.Component]
		if !ok {
			i = len(r.Components)
			byComponent[t.Component] = i
			r.Components = append(r.Components, Figures{Component: t.Component, Kind: t.Kind})
		}
		r.Components[i].add(f)
		r.addFlows(flows, t, base[t.Task], taskComponent, window)
	}
	for i := range r.Components {
		r.Components[i].latencies(componentSum(cur.Tasks, r.Components[i].Component))
	}
	return r
}

func componentSum(tasks []actors.TaskSnapshot, id string) actors.TaskSnapshot {
	var sum actors.TaskSnapshot
	for _, t := range tasks {
		if t.Component == id {
			sum.Add(t)
		}
	}
	return sum
}

func (r *Report) addFlows(index map[[2]string]int, t, base actors.TaskSnapshot, comp map[int]string, window time.Duration) {
	for to, n := range t.SentTo {
		key := [2]string{t.Component, comp[to]}
		i, ok := index[key]
		if !ok {
			i = len(r.Flows)
			index[key] = i
			r.Flows = append(r.Flows, Flow{From: key[0], To: key[1]})
		}
		r.Flows[i].Transferred += n
		r.Flows[i].Rate += rate(n-base.SentTo[to], window)
	}
}

func figures(t, base actors.TaskSnapshot, window time.Duration) Figures {
	f := Figures{
		Component: t.Component, Kind: t.Kind, Task: t.Task, Tasks: 1,
		Emitted: t.Emitted, Transferred: t.Transferred, Executed: t.Executed,
		Acked: t.Acked, Failed: t.Failed, Expired: t.Expired, Pending: t.Pending, MailboxDepth: t.MailboxDepth,
		EmitRate: rate(t.Emitted-base.Emitted, window), ExecuteRate: rate(t.Executed-base.Executed, window),
		AckRate: rate(t.Acked-base.Acked, window), FailRate: rate(t.Failed-base.Failed, window),
		Metrics: t.Metrics,
	}
	if window > 0 {
		f.Capacity = float64(t.ExecuteNanos-base.ExecuteNanos) / float64(window)
	}
	f.latencies(t)
	return f
}

func (f *Figures) latencies(t actors.TaskSnapshot) {
	f.ExecuteSecs = time.Duration(t.ExecuteNanos).Seconds()
	f.ExecuteLatencyMs = ms(t.ExecuteLatency())
	f.ProcessLatencyMs = ms(t.ProcessLatency())
	f.CompleteLatencyMs = ms(t.CompleteLatency())
}

// add sums a task's figures into its component's.
func (f *Figures) add(t Figures) {
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

// Component returns the figures of component id, or false.
func (r Report) Component(id string) (Figures, bool) {
	for _, f := range r.Components {
		if f.Component == id {
			return f, true
		}
	}
	return Figures{}, false
}

// Window reports on a source with rates over a sliding window: each report
// covers the time since a baseline snapshot at least min old (or, until there is
// one, the incarnation's uptime), so windows last between min and about twice
// min when reports come regularly. With min zero, each report covers the time
// since the previous one. A Window is safe for concurrent use.
type Window struct {
	src       Source
	min       time.Duration
	mu        sync.Mutex // mu guards base and candidate
	base      *supervision.Stats
	candidate *supervision.Stats // the next baseline, once it is min old
}

// NewWindow returns a window on src; its first report covers the uptime.
func NewWindow(src Source, min time.Duration) *Window { return &Window{src: src, min: min} }

// Report takes a snapshot and reports on it.
func (w *Window) Report() Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.src.Stats()
	if c := w.candidate; c != nil && (c.Incarnation != cur.Incarnation || cur.Time.Sub(c.Time) >= w.min) {
		w.base, w.candidate = c, nil
	}
	r := NewReport(w.base, cur)
	if w.candidate == nil {
		w.candidate = &cur
	}
	return r
}
