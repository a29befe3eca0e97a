package actors

import (
	"sync"

	"github.com/goshelter/goshelter/dsl"
)

// tupleBatch carries one task's tuples to one bolt task on its data lane, as
// columns: the emitter (component and task) is the same for every tuple of a
// batch and travels once, and ids travel only once a tuple of the batch is
// tracked. An untracked tuple is 24 bytes here instead of a dsl.Tuple's 88,
// which is most of what a tuple costs to hand from one core to another; the
// bolt rebuilds each tuple in a header of its own as it executes it.
type tupleBatch struct {
	source  string
	task    int
	values  []any
	streams []*dsl.Stream
	ids     []dsl.TupleID // empty until a tuple is tracked, then one per tuple
}

func (*tupleBatch) dataLane() {}

func (b *tupleBatch) len() int { return len(b.values) }

// add appends a copy of t.
func (b *tupleBatch) add(t *dsl.Tuple) {
	if len(b.values) == 0 {
		b.source, b.task = t.Source, t.Task
	}
	b.values = append(b.values, t.Value)
	b.streams = append(b.streams, t.Stream)
	if len(b.ids) != 0 || t.ID.Edge != 0 { // a zero Edge: untracked, no id to keep
		b.addID(&t.ID)
	}
}

// addValue appends an untracked tuple of stream carrying v, from task of
// component source.
func (b *tupleBatch) addValue(v any, stream *dsl.Stream, source string, task int) {
	if len(b.values) == 0 {
		b.source, b.task = source, task
	}
	b.values = append(b.values, v)
	b.streams = append(b.streams, stream)
	if len(b.ids) != 0 { // tracked tuples before it: keep the ids in step
		b.ids = append(b.ids, dsl.TupleID{})
	}
}

func (b *tupleBatch) addID(id *dsl.TupleID) {
	if len(b.ids) == 0 { // the first tracked tuple: the earlier ones had none
		b.ids = append(b.ids, make([]dsl.TupleID, len(b.values)-1)...)
	}
	b.ids = append(b.ids, *id)
}

// load fills t with tuple i, header included.
func (b *tupleBatch) load(i int, t *dsl.Tuple) {
	t.Value, t.Stream, t.Source, t.Task = b.values[i], b.streams[i], b.source, b.task
	if len(b.ids) != 0 {
		t.ID = b.ids[i]
	} else {
		t.ID = dsl.TupleID{}
	}
}

var batchPool = sync.Pool{New: func() any { return &tupleBatch{} }}

func getBatch(size int) *tupleBatch {
	b := batchPool.Get().(*tupleBatch)
	if cap(b.values) < size {
		b.values = make([]any, 0, size)
		b.streams = make([]*dsl.Stream, 0, size)
	}
	return b
}

func putBatch(b *tupleBatch) {
	clear(b.values) // drop references to values so they can be collected
	b.values, b.streams = b.values[:0], b.streams[:0]
	clear(b.ids) // and to other trees' root lists
	b.ids = b.ids[:0]
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
