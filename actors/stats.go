package actors

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshelter/goshelter/internal/stats"
)

// taskStats are one task's counters, updated by the task and readable at any time.
//
// Durations are wall-clock time (the monotonic clock), whatever clock the
// incarnation was given: an injected manual clock schedules timers, it does not
// measure work. Bolts read the time twice per batch of inputs, not per input;
// process and complete latencies are sampled on one input or tree in
// [sampleEvery].
type taskStats struct {
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
	// The task's part of the last committed checkpoint (topologies with
	// state): its id, the time from the checkpoint's start to the task's
	// barrier, and the bytes of state or position it stored.
	Checkpoint, CheckpointNanos, CheckpointBytes atomic.Int64

	// Latency distributions, for histograms: execute by batch (each input of a
	// batch counts its batch's mean), process and complete by sample.
	executeHist, processHist, completeHist histogram

	metricsMu sync.Mutex     // metricsMu guards metrics
	metrics   map[string]any // latest value per name reported by the component (dsl.TaskInfo.Metric)

	errMu       sync.Mutex // errMu guards lastError and lastErrorAt
	lastError   string     // the task's most recent failure, for Storm UI's "last error"
	lastErrorAt time.Time
}

// maxErrorText bounds a recorded error: a panic value or a shell child's
// stderr tail could be large, and it is kept for as long as the task lives.
const maxErrorText = 4 << 10

// recordError remembers msg as the task's most recent failure: a failed input
// or the task's own failure. It runs on failures only, never per tuple.
func (s *taskStats) recordError(msg string) {
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText] + "..."
	}
	now := time.Now()
	s.errMu.Lock()
	s.lastError, s.lastErrorAt = msg, now
	s.errMu.Unlock()
}

// histogramBuckets is the number of latency buckets: bucket 0 counts latencies
// up to 1µs, bucket i (0 < i < histogramBuckets-1) those in (2^(i-1), 2^i] µs,
// the last one everything longer than 2^(histogramBuckets-2) µs (about 34 s).
const histogramBuckets = 27

// histogram counts latencies by power-of-two bucket; observing is two atomic
// adds at most, with no clock read of its own.
type histogram [histogramBuckets]atomic.Int64

// observe counts n latencies of d.
func (h *histogram) observe(d time.Duration, n int64) {
	i := 0
	if us := (d + time.Microsecond - 1) / time.Microsecond; us > 1 {
		i = min(bits.Len64(uint64(us-1)), histogramBuckets-1)
	}
	h[i].Add(n)
}

// load copies the counts, nil when there are none.
func (h *histogram) load() []int64 {
	var out []int64
	for i := range h {
		if n := h[i].Load(); n != 0 {
			if out == nil {
				out = make([]int64, histogramBuckets)
			}
			out[i] = n
		}
	}
	return out
}

func (s *taskStats) setMetric(name string, v any) {
	s.metricsMu.Lock()
	if s.metrics == nil {
		s.metrics = map[string]any{}
	}
	s.metrics[name] = v
	s.metricsMu.Unlock()
}

func newTaskStats(tasks int) *taskStats { return &taskStats{sent: make([]atomic.Int64, tasks)} }

// sampleEvery is how often latencies are sampled: one bolt input, and one spout
// tree, in sampleEvery (the first one always). A prime, so samples move through
// the positions of full batches. Each sample reads the clock, which costs
// 30-50 ns on a virtual machine; 1 in 31 keeps that under 2 ns per tuple
// (Storm samples 1 in 20 by default, topology.stats.sample.rate 0.05).
const sampleEvery = 31

// snapshot reads the task's counters into the figures the host and the
// status page read as they are (stats.Task, supervision.TaskStats), with the
// means worked out. Component, Kind, Task, MailboxDepth and LastErrorTask are
// the caller's to fill: the counters do not know their task.
func (s *taskStats) snapshot() stats.Task {
	snap := stats.Task{
		Emitted: s.Emitted.Load(), Executed: s.Executed.Load(), ExecuteTime: time.Duration(s.ExecuteNanos.Load()),
		ProcessSamples: s.ProcessSamples.Load(), ProcessTime: time.Duration(s.ProcessNanos.Load()),
		CompleteSamples: s.CompleteSamples.Load(), CompleteTime: time.Duration(s.CompleteNanos.Load()),
		Acked: s.Acked.Load(), Failed: s.Failed.Load(), Expired: s.Expired.Load(), Pending: s.Pending.Load(),
		Checkpoint: s.Checkpoint.Load(), CheckpointDuration: time.Duration(s.CheckpointNanos.Load()), CheckpointBytes: s.CheckpointBytes.Load(),
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
	snap.ExecuteHistogram, snap.ProcessHistogram, snap.CompleteHistogram = s.executeHist.load(), s.processHist.load(), s.completeHist.load()
	s.errMu.Lock()
	snap.LastError, snap.LastErrorTime = s.lastError, s.lastErrorAt
	s.errMu.Unlock()
	stats.Means(&snap)
	return snap
}

// processSampler measures a bolt's process latency on one input in sampleEvery,
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
		return // inlined: the per-tuple cost is this countdown
	}
	p.sample(edge, received)
}

// pass counts an input down as begin does and reports true when begin would
// not sample it; for the input begin would sample it reports false and counts
// nothing, leaving that to begin. Only an input that begin would not sample
// may skip begin, settle and end.
func (p *processSampler) pass() bool {
	if p.countdown > 1 {
		p.countdown--
		return true
	}
	return false
}

func (p *processSampler) sample(edge uint64, received time.Time) {
	p.countdown = sampleEvery
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
func (p *processSampler) settle(edge uint64, acked bool, stats *taskStats) {
	if p.open && edge == p.edge { // inlined: most inputs are not the sampled one
		p.record(edge, acked, stats)
	}
}

func (p *processSampler) record(edge uint64, acked bool, stats *taskStats) {
	if edge == 0 && !p.inline {
		return
	}
	p.open = false
	if acked {
		d := time.Since(p.start)
		stats.ProcessNanos.Add(int64(d))
		stats.ProcessSamples.Add(1)
		stats.processHist.observe(d, 1)
	}
}

// completeSampler measures a spout's complete latency on one tree in sampleEvery,
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
	c.countdown = sampleEvery
	for i := range c.roots {
		if c.roots[i] == 0 {
			c.roots[i], c.at[i] = root, time.Now()
			c.open++
			return
		}
	}
}

// settle is called for every acked or nacked tree.
func (c *completeSampler) settle(root uint64, acked bool, stats *taskStats) {
	if c.open == 0 {
		return
	}
	for i := range c.roots {
		if c.roots[i] == root {
			c.roots[i] = 0
			c.open--
			if acked {
				d := time.Since(c.at[i])
				stats.CompleteNanos.Add(int64(d))
				stats.CompleteSamples.Add(1)
				stats.completeHist.observe(d, 1)
			}
			return
		}
	}
}

// reset forgets every sample (the task abandons its open trees).
func (c *completeSampler) reset() {
	c.roots, c.open = [8]uint64{}, 0
}
