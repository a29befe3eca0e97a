package actors

import (
	"sync"
	"sync/atomic"
	"time"
)

// TaskStats are one task's counters, updated by the task and readable at any time.
//
// Durations are wall-clock time (the monotonic clock), whatever clock the
// incarnation was given: an injected manual clock schedules timers, it does not
// measure work. Bolts read the time twice per batch of inputs, not per input;
// process and complete latencies are sampled on one input or tree in
// [SampleEvery].
type TaskStats struct {
	Emitted         atomic.Int64   // tuples emitted (spouts and bolts)
	Executed        atomic.Int64   // inputs executed (bolts)
	ExecuteNanos    atomic.Int64   // time spent executing inputs (bolts)
	ProcessSamples  atomic.Int64   // bolts: sampled inputs acked
	ProcessNanos    atomic.Int64   // bolts: sum of their times from leaving the mailbox to being acked
	CompleteSamples atomic.Int64   // spouts: sampled trees acked
	CompleteNanos   atomic.Int64   // spouts: sum of their times from emit to ack
	Acked           atomic.Int64   // spouts: trees completed; bolts: inputs acked; ackers: trees completed
	Failed          atomic.Int64   // spouts: trees nacked; bolts: inputs failed; ackers: trees failed, expired or refused
	Expired         atomic.Int64   // spouts and ackers: trees timed out (also counted in Failed)
	Pending         atomic.Int64   // spouts: open trees; ackers: trees tracked
	sent            []atomic.Int64 // by destination task id: tuples handed to its data lane

	metricsMu sync.Mutex     // metricsMu guards metrics
	metrics   map[string]any // latest value per name reported by the component (dsl.TaskInfo.Metric)
}

func (s *TaskStats) setMetric(name string, v any) {
	s.metricsMu.Lock()
	if s.metrics == nil {
		s.metrics = map[string]any{}
	}
	s.metrics[name] = v
	s.metricsMu.Unlock()
}

func newTaskStats(tasks int) *TaskStats { return &TaskStats{sent: make([]atomic.Int64, tasks)} }

// SampleEvery is how often latencies are sampled: one bolt input, and one spout
// tree, in SampleEvery (the first one always). A prime, so samples move through
// the positions of full batches.
const SampleEvery = 13

// TaskSnapshot is a copy of a task's counters.
type TaskSnapshot struct {
	Component       string
	Kind            string // "spout", "bolt" or "acker"
	Task            int
	Emitted         int64
	Transferred     int64 // tuples handed to downstream tasks (one emit to n tasks counts n)
	Executed        int64
	ExecuteNanos    int64
	ProcessSamples  int64
	ProcessNanos    int64
	CompleteSamples int64
	CompleteNanos   int64
	Acked           int64
	Failed          int64
	Expired         int64
	Pending         int64
	MailboxDepth    int           // data batches waiting
	SentTo          map[int]int64 // tuples transferred, by destination task id (non-zero entries)
	// Metrics holds the latest value of each metric the component reported
	// (multilang "metrics"); nil when none. In sums over tasks a name reported
	// by several tasks shows one task's value.
	Metrics map[string]any
}

// ExecuteLatency is the mean time a bolt spent executing an input.
func (s TaskSnapshot) ExecuteLatency() time.Duration { return mean(s.ExecuteNanos, s.Executed) }

// ProcessLatency is the mean time from a bolt taking a sampled input from its
// mailbox to acking it; it is longer than ExecuteLatency when inputs wait behind
// others of their batch or are acked later.
func (s TaskSnapshot) ProcessLatency() time.Duration { return mean(s.ProcessNanos, s.ProcessSamples) }

// CompleteLatency is the mean time from a spout emitting a sampled tuple to its
// tree being acked.
func (s TaskSnapshot) CompleteLatency() time.Duration {
	return mean(s.CompleteNanos, s.CompleteSamples)
}

func mean(nanos, n int64) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(nanos / n)
}

// Add adds o's counters to s (SentTo entries are merged), for sums over tasks.
func (s *TaskSnapshot) Add(o TaskSnapshot) {
	s.Emitted += o.Emitted
	s.Transferred += o.Transferred
	s.Executed += o.Executed
	s.ExecuteNanos += o.ExecuteNanos
	s.ProcessSamples += o.ProcessSamples
	s.ProcessNanos += o.ProcessNanos
	s.CompleteSamples += o.CompleteSamples
	s.CompleteNanos += o.CompleteNanos
	s.Acked += o.Acked
	s.Failed += o.Failed
	s.Expired += o.Expired
	s.Pending += o.Pending
	s.MailboxDepth += o.MailboxDepth
	for task, n := range o.SentTo {
		if s.SentTo == nil {
			s.SentTo = map[int]int64{}
		}
		s.SentTo[task] += n
	}
	for name, v := range o.Metrics { // opaque values: a later task's wins
		if s.Metrics == nil {
			s.Metrics = map[string]any{}
		}
		s.Metrics[name] = v
	}
}

func (s *TaskStats) snapshot() TaskSnapshot {
	snap := TaskSnapshot{
		Emitted: s.Emitted.Load(), Executed: s.Executed.Load(), ExecuteNanos: s.ExecuteNanos.Load(),
		ProcessSamples: s.ProcessSamples.Load(), ProcessNanos: s.ProcessNanos.Load(),
		CompleteSamples: s.CompleteSamples.Load(), CompleteNanos: s.CompleteNanos.Load(),
		Acked: s.Acked.Load(), Failed: s.Failed.Load(), Expired: s.Expired.Load(), Pending: s.Pending.Load(),
	}
	for task := range s.sent {
		if n := s.sent[task].Load(); n != 0 {
			if snap.SentTo == nil {
				snap.SentTo = map[int]int64{}
			}
			snap.SentTo[task] = n
			snap.Transferred += n
		}
	}
	s.metricsMu.Lock()
	for k, v := range s.metrics {
		if snap.Metrics == nil {
			snap.Metrics = make(map[string]any, len(s.metrics))
		}
		snap.Metrics[k] = v
	}
	s.metricsMu.Unlock()
	return snap
}

// processSampler measures a bolt's process latency on one input in SampleEvery,
// one input at a time: from when its batch left the mailbox to when the bolt acks
// it, during Execute or later. Its zero value works; it is owned by the task.
type processSampler struct {
	timeout   time.Duration // an input held longer than this stops being waited for
	countdown int
	open      bool
	inline    bool      // the sampled input is being executed
	edge      uint64    // the sampled input's edge; 0 when untracked
	start     time.Time // when its batch left the mailbox
}

// begin is called before each input is executed; received is when its batch left
// the mailbox (already read for the execute time, so sampling reads no clock).
func (p *processSampler) begin(edge uint64, received time.Time) {
	if p.countdown--; p.countdown > 0 {
		return
	}
	p.countdown = SampleEvery
	if p.open && received.Sub(p.start) < p.timeout {
		return // a held input is still being waited for
	}
	p.open, p.inline, p.edge, p.start = true, true, edge, received
}

// end is called after each input was executed. An untracked input cannot be
// recognised later, so its sample ends with its execution.
func (p *processSampler) end() {
	if p.inline {
		p.inline = false
		p.open = p.open && p.edge != 0
	}
}

// settle is called on every ack and fail; it records the sampled input's latency
// when acked.
func (p *processSampler) settle(edge uint64, acked bool, stats *TaskStats) {
	if !p.open || edge != p.edge || (edge == 0 && !p.inline) {
		return
	}
	p.open = false
	if acked {
		stats.ProcessNanos.Add(int64(time.Since(p.start)))
		stats.ProcessSamples.Add(1)
	}
}

// completeSampler measures a spout's complete latency on one tree in SampleEvery,
// with at most len(roots) trees open at a time. Its zero value works; it is
// owned by the task.
type completeSampler struct {
	countdown int
	open      int
	roots     [8]uint64
	at        [8]time.Time
}

// emitted is called for every tree a spout starts.
func (c *completeSampler) emitted(root uint64) {
	if c.countdown--; c.countdown > 0 || c.open == len(c.roots) {
		return // when all slots are taken, the next tree after one frees is sampled
	}
	c.countdown = SampleEvery
	for i := range c.roots {
		if c.roots[i] == 0 {
			c.roots[i], c.at[i] = root, time.Now()
			c.open++
			return
		}
	}
}

// settle is called for every acked or nacked tree.
func (c *completeSampler) settle(root uint64, acked bool, stats *TaskStats) {
	if c.open == 0 {
		return
	}
	for i := range c.roots {
		if c.roots[i] == root {
			c.roots[i] = 0
			c.open--
			if acked {
				stats.CompleteNanos.Add(int64(time.Since(c.at[i])))
				stats.CompleteSamples.Add(1)
			}
			return
		}
	}
}

// reset forgets every sample (the task abandons its open trees).
func (c *completeSampler) reset() {
	c.roots, c.open = [8]uint64{}, 0
}
