package actors

import (
	"sync/atomic"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/hops"
)

// gauge counts what is still in flight: tuples sent and not yet executed, plus
// open tuple trees. Drain waits for it to reach zero.
type gauge struct {
	n    atomic.Int64
	zero chan struct{} // gets a token whenever n drops to zero
}

func newGauge() *gauge { return &gauge{zero: make(chan struct{}, 1)} }

func (g *gauge) add(d int64) {
	if d != 0 && g.n.Add(d) == 0 {
		select {
		case g.zero <- struct{}{}:
		default:
		}
	}
}

// outbox is one task's side of the data path: it implements routing.Sink with a
// batch per destination task and per acker, and flushes acker batches before data.
type outbox struct {
	inc       *incarnation
	from      int // the sending task's id
	batchSize int
	lanes     []*edge       // by destination task id: this task's data lane to it, once used
	data      []*tupleBatch // by destination task id
	dirty     []int         // task ids with a non-empty data batch
	acks      []*ackerBatch // by acker task id
	ackDirty  []int
	sent      []atomic.Int64 // tuples flushed, by destination task (the task's stats)
	recording bool           // Deliver appends destination task ids to recorded (component.TaskEmitter)
	recorded  []int
	holding   bool // Deliver leaves full batches for release to flush
	filled    bool // a batch filled while holding: release has work
	// trees counts the spout's trees opened since the last flush. They join
	// the drain gauge before anything of theirs leaves the task (countTrees):
	// one atomic add per flush, not one per tree on a line every task writes.
	trees int64
	// source is the task's component id, the Source of its tuples: read
	// once per batch deliverValue starts, so it sits after the hot fields.
	source string
}

func newOutbox(inc *incarnation, from, batchSize int, stats *taskStats) *outbox {
	n := len(inc.plan.Tasks) + 1
	o := &outbox{inc: inc, from: from, batchSize: batchSize, lanes: make([]*edge, n),
		data: make([]*tupleBatch, n), acks: make([]*ackerBatch, n), sent: stats.sent}
	if from >= 1 && from <= len(inc.plan.Tasks) {
		if c := inc.plan.Tasks[from-1].Component; c != nil {
			o.source = c.ID
		}
	}
	return o
}

// send puts msg on the data lane to task, parking while it is full; it
// reports false if the task's mailbox closed first.
func (o *outbox) send(task int, msg any) bool {
	e := o.lanes[task]
	if e == nil {
		e = o.inc.boxes[task].lane(o.from)
		o.lanes[task] = e
	}
	return o.inc.boxes[task].send(e, msg)
}

// Deliver buffers a copy of t for task.
func (o *outbox) Deliver(task int, t *dsl.Tuple) {
	b := o.data[task]
	if b == nil || o.recording {
		b = o.batchTo(task)
	}
	b.add(t)
	if b.len() >= o.batchSize {
		o.full(task)
	}
}

// deliverValue buffers an untracked tuple of stream carrying v for task, from
// this task: Deliver for what routing.Router.Unicast picked, with no header to
// read. (Deliver's twin line for line: each inlines its batch's append.)
func (o *outbox) deliverValue(task int, v any, stream *dsl.Stream) {
	b := o.data[task]
	if b == nil || o.recording {
		b = o.batchTo(task)
	}
	b.addValue(v, stream, o.source, o.from)
	if b.len() >= o.batchSize {
		o.full(task)
	}
}

// batchTo returns the batch being filled for task, making it if there is none,
// and records task if the outbox is recording.
func (o *outbox) batchTo(task int) *tupleBatch {
	if o.recording {
		o.recorded = append(o.recorded, task)
	}
	b := o.data[task]
	if b == nil {
		b = getBatch(o.batchSize)
		o.data[task] = b
		o.dirty = append(o.dirty, task)
	}
	return b
}

// full flushes task's batch, which is full, unless an emit holds it.
func (o *outbox) full(task int) {
	if o.holding {
		o.filled = true
		return
	}
	o.flushAcks()
	o.flushTo(task)
}

// hold defers data flushes until release. A spout emit runs between the two: a
// spout tree is held open only by its anchors, so a delivery flushed mid-emit could
// be executed and acked before the next edge is anchored, and the acker would see
// the tree complete although other edges may still fail or time out.
func (o *outbox) hold() { o.holding = true }

// release ends a hold: acker operations first, then every batch that filled
// meanwhile. (If the emit panicked instead, the task has failed and its outbox is
// never used again.)
//
// When no batch filled, nothing is sent: the emit's acker operations wait in
// their batches like its tuples, and whatever flushes the tuples later flushes
// the acker batches first. Sending them here would cost one acker message per
// tracked emit.
func (o *outbox) release() {
	o.holding = false
	if o.filled { // inlined: most emits fill no batch
		o.releaseFilled()
	}
}

func (o *outbox) releaseFilled() {
	o.filled = false
	o.flushAcks()
	for _, task := range o.dirty {
		if b := o.data[task]; b != nil && b.len() >= o.batchSize {
			o.flushTo(task)
		}
	}
}

// record runs emit and returns tasks with the ids of the tasks it delivered to appended.
func (o *outbox) record(tasks []int, emit func()) []int {
	o.recording, o.recorded = true, tasks
	defer func() { o.recording, o.recorded = false, nil }()
	emit()
	return o.recorded
}

// openTree counts a tree the spout opened into the drain gauge, at the next flush.
func (o *outbox) openTree() { o.trees++ }

// countTrees adds the trees opened since the last flush to the drain gauge.
// Every flush calls it first. A tree is counted out when its outcome reaches
// the spout, which serves outcomes between bursts only, and every burst ends
// with a flush; a drain begins after the spouts flushed.
func (o *outbox) countTrees() {
	if o.trees != 0 {
		o.inc.gauge.add(o.trees)
		o.trees = 0
	}
}

// Track and Anchor buffer acker operations for the tree's acker.
func (o *outbox) Track(root uint64, spout int) {
	o.ack(ackerOp{Kind: opTrack, Root: root, Spout: int32(spout)})
}

func (o *outbox) Anchor(root, edge uint64) {
	o.ack(ackerOp{Kind: opAnchor, Root: root, Edge: edge})
}

// Fail fails the tree root (routing.Sink).
func (o *outbox) Fail(root uint64) { o.ack(ackerOp{Kind: opFail, Root: root}) }

func (o *outbox) ack(op ackerOp) {
	a := ackerOf(o.inc.plan, op.Root)
	b := o.acks[a]
	if b == nil {
		b = ackerPool.Get().(*ackerBatch)
		o.acks[a] = b
		o.ackDirty = append(o.ackDirty, a)
	}
	b.ops = append(b.ops, op)
	if len(b.ops) >= o.batchSize {
		o.flushAcker(a)
	}
}

func (o *outbox) flushAcker(a int) {
	b := o.acks[a]
	if b == nil {
		return
	}
	o.countTrees()
	o.acks[a] = nil
	if p := o.inc.hops; p != nil {
		for i := range b.ops {
			if b.ops[i].Kind == opOk {
				p.Mark(b.ops[i].Root, hops.AckFlush)
			}
		}
	}
	o.inc.boxes[a].PostUserMessage(b)
}

// flushAcks sends every acker batch: control lane, never blocks.
func (o *outbox) flushAcks() {
	for _, a := range o.ackDirty {
		o.flushAcker(a)
	}
	o.ackDirty = o.ackDirty[:0]
}

// flushTo sends task's data batch, parking while its ring is full.
func (o *outbox) flushTo(task int) {
	b := o.data[task]
	if b == nil || b.len() == 0 {
		return
	}
	o.data[task] = nil
	if p := o.inc.hops; p != nil {
		markBatch(p, b, hops.SpoutFlush)
	}
	n := int64(b.len())
	o.inc.gauge.add(n + o.trees) // countTrees, in the same add
	o.trees = 0
	o.sent[task].Add(n) // before the receiver can see them
	if !o.send(task, b) {
		o.inc.gauge.add(-n) // the topology is being torn down
		o.sent[task].Add(-n)
		putBatch(b)
	}
}

// flush sends everything buffered, acker batches first.
func (o *outbox) flush() {
	o.countTrees() // even with nothing to send: a tree's operations may have left already
	o.flushAcks()
	for _, task := range o.dirty {
		o.flushTo(task)
	}
	o.dirty = o.dirty[:0]
}

// markBatch tells the hop probe that the sampled trees in b reached h.
func markBatch(p *hops.Probe, b *tupleBatch, h hops.Hop) {
	for i := range b.ids {
		p.Mark(b.ids[i].Root, h)
	}
}
