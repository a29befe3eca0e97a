package actors

import (
	"testing"
	"time"
)

func TestProcessSamplerSamplesOneInputInSampleEvery(t *testing.T) {
	var p processSampler
	p.timeout = time.Minute
	stats := newTaskStats(1)
	received := time.Now().Add(-time.Millisecond)
	for i := 1; i <= 3*sampleEvery; i++ {
		edge := uint64(i)
		p.begin(edge, received)
		p.settle(edge, true, stats) // acked during Execute
		p.end()
	}
	if got := stats.ProcessSamples.Load(); got != 3 {
		t.Fatalf("samples = %d, want 3 (inputs 1, 1+%d, 1+2·%d)", got, sampleEvery, sampleEvery)
	}
	if stats.ProcessNanos.Load() < int64(3*time.Millisecond) {
		t.Errorf("process time %v covers less than the time since receipt", time.Duration(stats.ProcessNanos.Load()))
	}
}

func TestProcessSamplerWaitsForAHeldInput(t *testing.T) {
	var p processSampler
	p.timeout = time.Minute
	stats := newTaskStats(1)
	start := time.Now()
	p.begin(7, start) // sampled, not acked during Execute
	p.end()
	for i := 0; i < 2*sampleEvery; i++ { // other inputs do not replace it
		p.begin(100+uint64(i), start)
		p.settle(100+uint64(i), true, stats)
		p.end()
	}
	if stats.ProcessSamples.Load() != 0 {
		t.Fatal("an input other than the held one was sampled")
	}
	p.settle(7, true, stats) // acked later
	if stats.ProcessSamples.Load() != 1 {
		t.Fatal("the held input's late ack was not sampled")
	}
}

func TestProcessSamplerGivesUpOnStaleAndFailedInputs(t *testing.T) {
	tests := []struct {
		name   string
		settle func(p *processSampler, stats *taskStats)
	}{
		{"failed", func(p *processSampler, stats *taskStats) { p.settle(7, false, stats) }},
		{"held past the timeout", func(*processSampler, *taskStats) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := processSampler{timeout: time.Second}
			stats := newTaskStats(1)
			start := time.Now().Add(-time.Hour)
			p.begin(7, start)
			p.end()
			tt.settle(&p, stats)
			for i := 0; i < sampleEvery; i++ { // the next sample, received an hour later
				p.begin(8, start.Add(time.Hour))
				p.end()
			}
			p.settle(8, true, stats)
			if stats.ProcessSamples.Load() != 1 {
				t.Fatalf("samples = %d, want 1: the next input after giving up", stats.ProcessSamples.Load())
			}
		})
	}
}

func TestProcessSamplerUntrackedInputsEndWithExecute(t *testing.T) {
	p := processSampler{timeout: time.Minute}
	stats := newTaskStats(1)
	p.begin(0, time.Now())
	p.end()
	p.settle(0, true, stats) // an untracked ack later cannot be matched
	if stats.ProcessSamples.Load() != 0 {
		t.Fatal("an untracked input was matched after its Execute")
	}
}

func TestCompleteSamplerTimesSampledTrees(t *testing.T) {
	var c completeSampler
	stats := newTaskStats(1)
	for root := uint64(1); root <= 2*sampleEvery; root++ {
		c.emitted(root)
	}
	c.settle(1, true, stats)
	c.settle(1+sampleEvery, false, stats) // nacked: not a completion
	c.settle(2, true, stats)              // not sampled
	if stats.CompleteSamples.Load() != 1 || c.open != 0 {
		t.Fatalf("samples = %d, open = %d; want 1, 0", stats.CompleteSamples.Load(), c.open)
	}
}

func TestCompleteSamplerSamplesWhenASlotFrees(t *testing.T) {
	var c completeSampler
	stats := newTaskStats(1)
	root := uint64(0)
	for c.open < len(c.roots) {
		root++
		c.emitted(root)
	}
	for i := 0; i < sampleEvery; i++ {
		root++
		c.emitted(root) // the last one is due, but no slot is free
	}
	c.settle(1, true, stats)
	root++
	c.emitted(root) // the next tree takes the freed slot
	c.settle(root, true, stats)
	if stats.CompleteSamples.Load() != 2 {
		t.Fatalf("samples = %d, want 2", stats.CompleteSamples.Load())
	}
	c.reset()
	if c.open != 0 {
		t.Fatal("reset left slots open")
	}
}

func TestSnapshotSumsTransfersByDestination(t *testing.T) {
	s := newTaskStats(4)
	s.sent[2].Add(5)
	s.sent[3].Add(7)
	snap := s.snapshot()
	if snap.Transferred != 12 || len(snap.SentTo) != 2 || snap.SentTo[2] != 5 || snap.SentTo[3] != 7 {
		t.Fatalf("snapshot = %+v", snap)
	}
	s.sent[2].Add(-5) // back to zero: no entry
	if snap := s.snapshot(); snap.Transferred != 7 || len(snap.SentTo) != 1 {
		t.Fatalf("snapshot = %+v, want only task 3's 7", snap)
	}
	// Sums over tasks are internal/stats' (TestSum there).
}

func TestSnapshotCopiesCountersAndMetrics(t *testing.T) {
	s := newTaskStats(1)
	if snap := s.snapshot(); snap.Metrics != nil || snap.SentTo != nil {
		t.Fatalf("a fresh snapshot has metrics %v, sent %v; want nil maps", snap.Metrics, snap.SentTo)
	}
	s.Emitted.Add(1)
	s.Acked.Add(2)
	s.Failed.Add(3)
	s.Expired.Add(1)
	s.Pending.Store(4)
	s.setMetric("queue", 9)
	s.setMetric("queue", 10) // the latest value wins
	snap := s.snapshot()
	if snap.Emitted != 1 || snap.Acked != 2 || snap.Failed != 3 || snap.Expired != 1 || snap.Pending != 4 {
		t.Errorf("snapshot counters = %+v", snap)
	}
	if snap.Metrics["queue"] != 10 {
		t.Errorf("metrics = %v, want queue=10", snap.Metrics)
	}
	snap.Metrics["queue"] = 0 // a copy: the task's own value stays
	if s.snapshot().Metrics["queue"] != 10 {
		t.Error("a snapshot's metrics share the task's map")
	}
}

// The snapshot is the figures users read (supervision.TaskStats): durations,
// the means worked out, and the last error.
func TestSnapshotCarriesTheMeansAndTheLastError(t *testing.T) {
	s := newTaskStats(1)
	if snap := s.snapshot(); snap.LastError != "" || !snap.LastErrorTime.IsZero() {
		t.Errorf("a fresh snapshot has last error %q at %v; want none", snap.LastError, snap.LastErrorTime)
	}
	s.Executed.Add(2)
	s.ExecuteNanos.Add(int64(4 * time.Millisecond))
	s.CompleteSamples.Add(3)
	s.CompleteNanos.Add(int64(9 * time.Millisecond))
	s.recordError("disk full")
	snap := s.snapshot()
	if snap.ExecuteTime != 4*time.Millisecond || snap.ExecuteLatency != 2*time.Millisecond || snap.CompleteLatency != 3*time.Millisecond {
		t.Errorf("execute %v (mean %v), complete mean %v; want 4ms, 2ms, 3ms", snap.ExecuteTime, snap.ExecuteLatency, snap.CompleteLatency)
	}
	if snap.LastError != "disk full" || snap.LastErrorTime.IsZero() {
		t.Errorf("last error %q at %v, want disk full, timed", snap.LastError, snap.LastErrorTime)
	}
}

// TestProcessSamplerPassesOnlyWhatBeginWouldNotSample: a caller that asks
// pass first and calls begin only when it reports false samples the same
// inputs as one that calls begin for each.
func TestProcessSamplerPassesOnlyWhatBeginWouldNotSample(t *testing.T) {
	var always, passing processSampler
	received := time.Now()
	sampled := 0
	for i := 1; i <= 3*sampleEvery+1; i++ {
		always.begin(uint64(i), received)
		want := always.inline
		always.end()
		got := false
		if !passing.pass() {
			passing.begin(uint64(i), received)
			got = passing.inline
			passing.end()
		}
		if got != want {
			t.Fatalf("input %d: sampled %v after pass, %v by begin alone", i, got, want)
		}
		if want {
			sampled++
		}
	}
	if sampled != 4 {
		t.Errorf("%d inputs sampled, want 4 (1, 1+%d, 1+2·%d, 1+3·%d)", sampled, sampleEvery, sampleEvery, sampleEvery)
	}
}
