package supervision

import (
	"time"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/dsl"
)

// Stats is a snapshot of a running topology: the current incarnation's counters,
// per task. Counters start from zero with each incarnation, as a process's do
// when it restarts; Restarts counts the incarnations replaced so far.
type Stats struct {
	Topology    string
	Time        time.Time     // when the snapshot was taken (wall clock)
	Uptime      time.Duration // since the current incarnation became active; 0 when there is none
	Incarnation int
	Restarts    int
	InFlight    int64
	Tasks       []actors.TaskSnapshot // the current incarnation's tasks, by task id
}

// Stats returns a snapshot of the current incarnation's counters. It is cheap
// (one atomic load per counter, no message to any task) and safe to call at any
// time, also after the topology stopped (Tasks is then empty).
func (r *Running) Stats() Stats {
	now := time.Now()
	r.mu.Lock()
	s := Stats{Topology: r.plan.Topology.Name, Time: now, Incarnation: r.number, Restarts: r.restarts}
	inc, since := r.current, r.since
	r.mu.Unlock()
	if inc != nil {
		s.Tasks = inc.Stats()
		s.InFlight = inc.InFlight()
		if !since.IsZero() {
			s.Uptime = now.Sub(since)
		}
	}
	return s
}

// Topology returns the topology being run.
func (r *Running) Topology() *dsl.Topology { return r.plan.Topology }

// Component sums the counters of a component's tasks ("__acker" for the ackers);
// Task is 0 in sums.
func (s Stats) Component(id string) actors.TaskSnapshot {
	sum := actors.TaskSnapshot{Component: id}
	for _, t := range s.Tasks {
		if t.Component == id {
			sum.Kind = t.Kind
			sum.Add(t)
		}
	}
	return sum
}

// Components returns one sum per component, in the order their tasks are
// numbered (components by id, then "__acker"); Task is 0 in sums.
func (s Stats) Components() []actors.TaskSnapshot {
	var out []actors.TaskSnapshot
	index := map[string]int{}
	for _, t := range s.Tasks {
		i, ok := index[t.Component]
		if !ok {
			i = len(out)
			index[t.Component] = i
			out = append(out, actors.TaskSnapshot{Component: t.Component, Kind: t.Kind})
		}
		out[i].Add(t)
	}
	return out
}
