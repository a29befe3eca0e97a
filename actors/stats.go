package actors

import "sync/atomic"

// TaskStats are one task's counters, updated by the task and readable at any time.
type TaskStats struct {
	Emitted      atomic.Int64 // tuples emitted (spouts and bolts)
	Executed     atomic.Int64 // inputs executed (bolts)
	ExecuteNanos atomic.Int64 // time spent executing inputs (bolts)
	Acked        atomic.Int64 // spouts: trees completed; bolts: inputs acked; ackers: trees completed
	Failed       atomic.Int64 // spouts: trees nacked; bolts: inputs failed; ackers: trees failed, expired or refused
	Expired      atomic.Int64 // ackers: trees timed out
	Pending      atomic.Int64 // spouts: open trees; ackers: trees tracked
}

// TaskSnapshot is a copy of a task's counters.
type TaskSnapshot struct {
	Component    string
	Task         int
	Emitted      int64
	Executed     int64
	ExecuteNanos int64
	Acked        int64
	Failed       int64
	Expired      int64
	Pending      int64
	MailboxDepth int // data batches waiting
}

func (s *TaskStats) snapshot() TaskSnapshot {
	return TaskSnapshot{
		Emitted: s.Emitted.Load(), Executed: s.Executed.Load(), ExecuteNanos: s.ExecuteNanos.Load(),
		Acked: s.Acked.Load(), Failed: s.Failed.Load(), Expired: s.Expired.Load(), Pending: s.Pending.Load(),
	}
}
