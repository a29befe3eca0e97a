package actors

import (
	"sync"

	"github.com/goshelter/goshelter/dsl"
)

// tupleBatch carries tuples to one bolt task on its data lane.
type tupleBatch struct{ tuples []dsl.Tuple }

func (*tupleBatch) dataLane() {}

var batchPool = sync.Pool{New: func() any { return &tupleBatch{} }}

func getBatch(size int) *tupleBatch {
	b := batchPool.Get().(*tupleBatch)
	if cap(b.tuples) < size {
		b.tuples = make([]dsl.Tuple, 0, size)
	}
	return b
}

func putBatch(b *tupleBatch) {
	clear(b.tuples) // drop references to values so they can be collected
	b.tuples = b.tuples[:0]
	batchPool.Put(b)
}

// ackerBatch carries acker operations from one task to one acker, in order.
type ackerBatch struct{ ops []ackerOp }

var ackerPool = sync.Pool{New: func() any { return &ackerBatch{} }}

// feedback carries tree outcomes from one acker to one spout task.
type feedback struct {
	acked, nacked []uint64
	expired       int64 // how many of nacked timed out
}

var feedbackPool = sync.Pool{New: func() any { return &feedback{} }}

func putFeedback(f *feedback) {
	f.acked, f.nacked, f.expired = f.acked[:0], f.nacked[:0], 0
	feedbackPool.Put(f)
}

// lifecycle messages; done is closed when the task has handled it.
type activate struct{ done chan struct{} }
type deactivate struct{ done chan struct{} }

// next asks a spout task to run a burst of Next calls.
type next struct{}

// tick is a timer beat from the system task; n beats were coalesced into it
// while the task was busy (see mailbox.postTick).
type tick struct{ n int32 }

// invoke runs a component's callback on its task (dsl.TaskInfo.Post).
type invoke struct{ fn func(dsl.Collector) }

// failTask fails the task that receives it (dsl.TaskInfo.Fail): the task panics
// with a taskFailure, which the mailbox reports as err itself.
type failTask struct{ err error }

type taskFailure struct{ err error }
