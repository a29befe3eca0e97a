package supervision

import (
	"time"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/internal/stats"
)

// Stats is a snapshot of a running topology: the current incarnation's
// counters. Counters start from zero with each incarnation, as a process's do
// when it restarts; Restarts counts the incarnations replaced so far.
type Stats struct {
	Topology    string
	Time        time.Time     // when the snapshot was taken (wall clock)
	Uptime      time.Duration // since the current incarnation became active; 0 when there is none
	Incarnation int
	Restarts    int
	InFlight    int64
	// Tasks are the current incarnation's tasks, by task id.
	Tasks []TaskStats
	// Components sums Tasks per component id ("__acker" for the ackers); Task
	// is 0 in sums. A missing id is not a component of the topology.
	Components map[string]TaskStats
	// Events are the latest lifecycle events (at most 64), oldest first: the
	// restart history, for a status page.
	Events []Event
}

// TaskStats are a task's counters, or a component's sums over its tasks, as
// the runtime produces them (an alias: the host and the status page read the
// one struct, with no copy between layers).
//
// Durations are wall-clock time. Latencies are means over samples: process and
// complete latencies are sampled on one input or tree in 31, execute time is
// measured per batch of inputs.
//
// Its fields: Component, Kind ("spout", "bolt" or "acker") and Task (0 in
// sums); Emitted; Transferred (tuples handed to downstream tasks: one emit to n
// tasks counts n); Executed (bolts: inputs executed); Acked (spouts: trees
// completed; bolts: inputs acked; ackers: trees completed); Failed (spouts:
// trees nacked; bolts: inputs failed; ackers: trees failed, expired or
// refused); Expired (spouts and ackers: trees timed out, also counted in
// Failed); Pending (spouts: open trees; ackers: trees tracked); MailboxDepth
// (data batches waiting); SentTo (tuples transferred, by destination task
// id); Metrics (the latest value of each metric the component reported with
// TaskInfo.Metric; in sums, a name reported by several tasks shows one value).
//
// ExecuteTime (bolts: total time executing inputs), ProcessTime (bolts: sum
// over ProcessSamples, from leaving the mailbox to the ack) and CompleteTime
// (spouts: sum over CompleteSamples, from emit to the tree's ack), and their
// means ExecuteLatency (ExecuteTime / Executed), ProcessLatency and
// CompleteLatency. ExecuteHistogram, ProcessHistogram and CompleteHistogram,
// nil when empty: counts by bucket, bucket 0 up to 1µs, bucket i in
// (2^(i-1), 2^i] µs, the last (index 26) anything longer; ExecuteHistogram
// counts every input at its batch's mean execute time, the others the
// samples.
//
// LastError is the most recent failure: an input failed with an error or a
// panic, or a task failure (a panic, TaskInfo.Fail, a shell child's death
// with its stderr tail), at LastErrorTime in task LastErrorTask. It survives
// restarts, so the failure that caused one stays visible; in sums, the latest
// of the tasks'.
//
// The task's part of the last checkpoint committed in this incarnation
// (topologies with state, see dsl.Stateful): Checkpoint is its id, 0 before
// the first commit; CheckpointDuration the time from the checkpoint's start
// until the task passed its barrier; CheckpointBytes what the task stored in
// it (its changed state, or its source's position). In sums, the highest id
// and the longest duration, as the slowest task is the one that holds a
// checkpoint back, and the bytes of all the tasks' last checkpoints together.
type TaskStats = stats.Task

// Stats returns a snapshot of the current incarnation's counters. It is cheap
// (one atomic load per counter, no message to any task) and safe to call at any
// time, also after the topology stopped (Tasks is then empty).
func (r *Running) Stats() Stats {
	now := time.Now()
	r.mu.Lock()
	s := Stats{Topology: r.plan.Topology.Name, Time: now, Incarnation: r.number, Restarts: r.restarts}
	inc, since := r.current, r.since
	s.Events = append([]Event(nil), r.history...)
	kept := r.lastErrors // written only by copy, so it can be read unlocked
	r.mu.Unlock()
	if inc != nil {
		tasks, inFlight := inc.Stats()
		for _, t := range tasks {
			if e, ok := kept[t.Task]; ok && e.LastErrorTime.After(t.LastErrorTime) {
				t.LastError, t.LastErrorTime, t.LastErrorTask = e.LastError, e.LastErrorTime, e.LastErrorTask
			}
			s.Tasks = append(s.Tasks, t)
		}
		s.InFlight = inFlight
		if !since.IsZero() {
			s.Uptime = now.Sub(since)
		}
	}
	s.Components = stats.Sum(s.Tasks)
	return s
}

// keepErrors remembers the last errors of inc, a failed incarnation, for the
// snapshots of the incarnations that follow: the failure that caused a restart
// is the one a status page must show. Task ids are the same in every
// incarnation of a plan.
func (r *Running) keepErrors(inc *actors.Topology) {
	snaps, _ := inc.Stats()
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := make(map[int]TaskStats, len(r.lastErrors)+len(snaps))
	for id, e := range r.lastErrors {
		kept[id] = e
	}
	for _, s := range snaps {
		if s.LastError != "" && s.LastErrorTime.After(kept[s.Task].LastErrorTime) {
			kept[s.Task] = TaskStats{LastError: s.LastError, LastErrorTime: s.LastErrorTime, LastErrorTask: s.Task}
		}
	}
	r.lastErrors = kept
}
