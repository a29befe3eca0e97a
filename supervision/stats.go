package supervision

import (
	"time"

	"github.com/goshelter/goshelter/actors"
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

// TaskStats are a task's counters, or a component's sums over its tasks.
//
// Durations are wall-clock time. Latencies are means over samples: process and
// complete latencies are sampled on one input or tree in 31, execute time is
// measured per batch of inputs.
type TaskStats struct {
	Component   string
	Kind        string // "spout", "bolt" or "acker"
	Task        int
	Emitted     int64
	Transferred int64 // tuples handed to downstream tasks (one emit to n tasks counts n)
	Executed    int64 // bolts: inputs executed
	Acked       int64 // spouts: trees completed; bolts: inputs acked; ackers: trees completed
	Failed      int64 // spouts: trees nacked; bolts: inputs failed; ackers: trees failed, expired or refused
	Expired     int64 // spouts and ackers: trees timed out (also counted in Failed)
	Pending     int64 // spouts: open trees; ackers: trees tracked
	// MailboxDepth is the number of data batches waiting.
	MailboxDepth int
	// SentTo counts tuples transferred, by destination task id.
	SentTo map[int]int64
	// Metrics holds the latest value of each metric the component reported
	// (TaskInfo.Metric); in sums, a name reported by several tasks shows one value.
	Metrics map[string]any

	ExecuteTime     time.Duration // bolts: total time executing inputs
	ProcessSamples  int64
	ProcessTime     time.Duration // bolts: sum over samples, from leaving the mailbox to the ack
	CompleteSamples int64
	CompleteTime    time.Duration // spouts: sum over samples, from emit to the tree's ack

	ExecuteLatency  time.Duration // ExecuteTime / Executed
	ProcessLatency  time.Duration // ProcessTime / ProcessSamples
	CompleteLatency time.Duration // CompleteTime / CompleteSamples

	// Latency histograms, nil when empty: counts by bucket, bucket 0 up to
	// 1µs, bucket i in (2^(i-1), 2^i] µs, the last (index 26) anything longer.
	// ExecuteHistogram counts every input at its batch's mean execute time;
	// the others count the process and complete samples.
	ExecuteHistogram, ProcessHistogram, CompleteHistogram []int64

	// LastError is the most recent failure: an input failed with an error or
	// a panic, or a task failure (a panic, TaskInfo.Fail, a shell child's death
	// with its stderr tail), at LastErrorTime in task LastErrorTask. It
	// survives restarts, so the failure that caused one stays visible; in sums,
	// the latest of the tasks'.
	LastError     string
	LastErrorTime time.Time
	LastErrorTask int

	// The task's part of the last checkpoint committed in this incarnation
	// (topologies with state, see dsl.Stateful): Checkpoint is its id, 0
	// before the first commit; CheckpointDuration the time from the
	// checkpoint's start until the task passed its barrier; CheckpointBytes
	// what the task stored in it (its changed state, or its source's
	// position). In sums, the highest id and the longest duration, as the
	// slowest task is the one that holds a checkpoint back, and the bytes of
	// all the tasks' last checkpoints together.
	Checkpoint         int64
	CheckpointDuration time.Duration
	CheckpointBytes    int64
}

func taskStats(s actors.Snapshot) TaskStats {
	t := TaskStats{
		Component: s.Component, Kind: s.Kind, Task: s.Task, Emitted: s.Emitted, Transferred: s.Transferred,
		Executed: s.Executed, Acked: s.Acked, Failed: s.Failed, Expired: s.Expired, Pending: s.Pending,
		MailboxDepth: s.MailboxDepth, SentTo: s.SentTo, Metrics: s.Metrics,
		ExecuteTime: time.Duration(s.ExecuteNanos), ProcessSamples: s.ProcessSamples, ProcessTime: time.Duration(s.ProcessNanos),
		CompleteSamples: s.CompleteSamples, CompleteTime: time.Duration(s.CompleteNanos),
		ExecuteHistogram: s.ExecuteHistogram, ProcessHistogram: s.ProcessHistogram, CompleteHistogram: s.CompleteHistogram,
		Checkpoint: s.Checkpoint, CheckpointDuration: time.Duration(s.CheckpointNanos), CheckpointBytes: s.CheckpointBytes,
	}
	if s.LastError != "" {
		t.LastError, t.LastErrorTime, t.LastErrorTask = s.LastError, s.LastErrorTime, s.Task
	}
	t.means()
	return t
}

func (t *TaskStats) means() {
	t.ExecuteLatency = mean(t.ExecuteTime, t.Executed)
	t.ProcessLatency = mean(t.ProcessTime, t.ProcessSamples)
	t.CompleteLatency = mean(t.CompleteTime, t.CompleteSamples)
}

func mean(d time.Duration, n int64) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

// add adds o's counters to t, for sums over tasks.
func (t *TaskStats) add(o TaskStats) {
	t.Emitted += o.Emitted
	t.Transferred += o.Transferred
	t.Executed += o.Executed
	t.Acked += o.Acked
	t.Failed += o.Failed
	t.Expired += o.Expired
	t.Pending += o.Pending
	t.MailboxDepth += o.MailboxDepth
	t.ExecuteTime += o.ExecuteTime
	t.ProcessSamples += o.ProcessSamples
	t.ProcessTime += o.ProcessTime
	t.CompleteSamples += o.CompleteSamples
	t.CompleteTime += o.CompleteTime
	t.Checkpoint = max(t.Checkpoint, o.Checkpoint)
	t.CheckpointDuration = max(t.CheckpointDuration, o.CheckpointDuration)
	t.CheckpointBytes += o.CheckpointBytes
	for task, n := range o.SentTo {
		if t.SentTo == nil {
			t.SentTo = map[int]int64{}
		}
		t.SentTo[task] += n
	}
	t.ExecuteHistogram = addBuckets(t.ExecuteHistogram, o.ExecuteHistogram)
	t.ProcessHistogram = addBuckets(t.ProcessHistogram, o.ProcessHistogram)
	t.CompleteHistogram = addBuckets(t.CompleteHistogram, o.CompleteHistogram)
	if o.LastErrorTime.After(t.LastErrorTime) {
		t.LastError, t.LastErrorTime, t.LastErrorTask = o.LastError, o.LastErrorTime, o.LastErrorTask
	}
	for name, v := range o.Metrics { // opaque values: a later task's wins
		if t.Metrics == nil {
			t.Metrics = map[string]any{}
		}
		t.Metrics[name] = v
	}
	t.means()
}

// addBuckets returns the histogram sum + o, reusing sum when it can (sums are
// fresh copies; a task's own histogram is never added to).
func addBuckets(sum, o []int64) []int64 {
	if o == nil {
		return sum
	}
	if sum == nil {
		sum = make([]int64, len(o))
	}
	for i, n := range o {
		sum[i] += n
	}
	return sum
}

// sumComponents sums tasks per component.
func sumComponents(tasks []TaskStats) map[string]TaskStats {
	out := make(map[string]TaskStats)
	for _, t := range tasks {
		sum, ok := out[t.Component]
		if !ok {
			sum = TaskStats{Component: t.Component, Kind: t.Kind}
		}
		sum.add(t)
		out[t.Component] = sum
	}
	return out
}

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
		snaps, inFlight := inc.Stats()
		for _, snap := range snaps {
			t := taskStats(snap)
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
	s.Components = sumComponents(s.Tasks)
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
