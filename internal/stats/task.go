package stats

import "time"

// Task is a task's figures, or a component's sums over its tasks.
//
// Durations are wall-clock time. Latencies are means over samples: process and
// complete latencies are sampled on one input or tree in 31, execute time is
// measured per batch of inputs.
type Task struct {
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

// Means sets t's latencies from its totals.
func Means(t *Task) {
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

// Sum sums tasks per component.
func Sum(tasks []Task) map[string]Task {
	out := make(map[string]Task)
	for _, t := range tasks {
		sum, ok := out[t.Component]
		if !ok {
			sum = Task{Component: t.Component, Kind: t.Kind}
		}
		Add(&sum, t)
		out[t.Component] = sum
	}
	return out
}

// Add adds o's figures to t, for sums over tasks: counters, times and
// gauges add up, the checkpoint is the highest id and the longest duration,
// the last error is the latest, SentTo and the histograms add up into maps
// and slices of t's own (o's are never changed).
func Add(t *Task, o Task) {
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
	Means(t)
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

// Window returns cur's figures over a window that began at base, the same
// task's figures then (of the same incarnation: counters start from zero
// with each): the counters and times accumulated since, and their means.
// The rest (gauges, SentTo, histograms, metrics, the last error and
// checkpoint) is cur's, as a window has no meaning for them.
func Window(cur, base Task) Task {
	w := cur
	w.Emitted -= base.Emitted
	w.Transferred -= base.Transferred
	w.Executed -= base.Executed
	w.Acked -= base.Acked
	w.Failed -= base.Failed
	w.Expired -= base.Expired
	w.ExecuteTime -= base.ExecuteTime
	w.ProcessSamples -= base.ProcessSamples
	w.ProcessTime -= base.ProcessTime
	w.CompleteSamples -= base.CompleteSamples
	w.CompleteTime -= base.CompleteTime
	Means(&w)
	return w
}
