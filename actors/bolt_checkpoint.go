package actors

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/state"
)

// boltCheckpoint is a bolt task's side of checkpoints (checkpoint.go): it
// aligns barriers from the task's senders, snapshots a stateful task's
// changes, and holds its acks until their checkpoint commits.
type boltCheckpoint struct {
	c       *checkpointer
	state   component.StateTask // nil for a bolt without state
	holds   bool                // acks wait for commits: the bolt has state
	space   string
	senders int      // tasks that send to this one: each sends every barrier
	to      []int    // tasks this one sends to
	id      uint64   // the checkpoint being aligned, 0 for none
	arrived int      // senders whose barrier id came
	blocked []bool   // by task id: its barrier came, its later data waits
	waiting []any    // data from blocked senders, in arrival order
	acks    heldAcks // acks of inputs executed since the last barrier
	// covered holds the acks set aside at each barrier, until that
	// checkpoint commits.
	covered []coveredAcks
	spare   [][]dsl.TupleID // emptied blocks, for heldAcks to reuse
}

type coveredAcks struct {
	id   uint64
	acks heldAcks
}

// heldAckBlock is how many acks a block of heldAcks holds. An interval's
// acks can run into millions: growing one slice would copy them again at
// every doubling, blocks are written once.
const heldAckBlock = 4096

// heldAcks is a list of acks in blocks of heldAckBlock.
type heldAcks struct{ blocks [][]dsl.TupleID }

func (h *heldAcks) add(id dsl.TupleID, spare *[][]dsl.TupleID) {
	n := len(h.blocks)
	if n == 0 || len(h.blocks[n-1]) == heldAckBlock {
		var b []dsl.TupleID
		if k := len(*spare); k > 0 {
			b, *spare = (*spare)[k-1], (*spare)[:k-1]
		} else {
			b = make([]dsl.TupleID, 0, heldAckBlock)
		}
		h.blocks = append(h.blocks, b)
		n++
	}
	h.blocks[n-1] = append(h.blocks[n-1], id)
}

func (h *heldAcks) empty() bool { return len(h.blocks) == 0 }

// newBoltCheckpoint restores a stateful task's state from the last commit;
// a store that cannot be read fails the task.
func newBoltCheckpoint(b *boltTask, c *checkpointer, info dsl.TaskInfo) *boltCheckpoint {
	top := b.inc.plan.Topology
	k := &boltCheckpoint{c: c, blocked: make([]bool, len(b.inc.boxes)), to: receivers(top, b.task.Component)}
	for _, from := range senders(top, b.task.Component) {
		k.senders += from.Parallelism
	}
	if st, ok := b.impl.(component.StateTask); ok {
		k.state, k.holds = st, true
		k.space = taskSpace("bolt", b.task.Component, b.task.Index)
		if err := c.restoreBolt(info.Context(), b, st); err != nil {
			panic(taskFailure{err})
		}
	}
	return k
}

// data takes a message from the data lane: a blocked sender's waits until
// the barrier is aligned; the rest is executed or aligned now.
func (k *boltCheckpoint) data(b *boltTask, m dataMsg) {
	from := senderOf(m)
	if k.blocked[from] {
		k.waiting = append(k.waiting, m)
		return
	}
	switch m := m.(type) {
	case *tupleBatch:
		b.consume(m)
	case *cutBarrier:
		k.barrier(b, m)
	}
}

func senderOf(m dataMsg) int {
	switch m := m.(type) {
	case *tupleBatch:
		return m.task
	case *cutBarrier:
		return m.from
	}
	return 0
}

// barrier counts one sender's barrier; the last one passes the cut.
func (k *boltCheckpoint) barrier(b *boltTask, m *cutBarrier) {
	if k.id != m.id && k.arrived > 0 {
		panic(fmt.Errorf("bolt %q task %d: barrier %d from task %d while aligning checkpoint %d",
			b.task.Component.ID, b.task.ID, m.id, m.from, k.id))
	}
	k.id = m.id
	k.blocked[m.from] = true
	if k.arrived++; k.arrived < k.senders {
		return
	}
	k.pass(b, m.id)
	waiting := k.waiting
	k.waiting, k.arrived, k.id = nil, 0, 0
	clear(k.blocked)
	for i, w := range waiting {
		waiting[i] = nil
		k.data(b, w.(dataMsg)) // may block a sender again at its next barrier
	}
}

// pass takes the task's part in checkpoint id: everything before the cut
// has been executed, nothing after it.
func (k *boltCheckpoint) pass(b *boltTask, id uint64) {
	var changes []state.Change
	size := 0
	if k.state != nil {
		var err error
		size, err = k.state.SnapshotState(func(key, value []byte) {
			changes = append(changes, state.Change{Space: k.space, Key: append([]byte{}, key...),
				Value: append([]byte(nil), value...), Delete: value == nil})
		})
		if err != nil {
			panic(taskFailure{fmt.Errorf("bolt %q task %d: snapshotting its state for checkpoint %d: %w",
				b.task.Component.ID, b.task.ID, id, err)})
		}
		if !k.acks.empty() {
			k.covered = append(k.covered, coveredAcks{id: id, acks: k.acks})
			k.acks = heldAcks{}
		}
	}
	b.flush() // what the inputs before the cut emitted goes before the barrier
	for _, to := range k.to {
		b.inc.boxes[to].putData(&cutBarrier{id: id, from: b.task.ID})
	}
	k.c.report(ckReport{id: id, task: b.task.ID, changes: changes, size: size})
}

// hold sets an input's ack aside until its checkpoint commits.
func (k *boltCheckpoint) hold(id dsl.TupleID) { k.acks.add(id, &k.spare) }

// commit acks the inputs covered by checkpoints up to id.
func (k *boltCheckpoint) commit(b *boltTask, id uint64) {
	n := 0
	for _, c := range k.covered {
		if c.id > id {
			break
		}
		for _, block := range c.acks.blocks {
			for i := range block {
				b.sendAck(&block[i])
			}
			clear(block) // drops the trees' root lists
			if len(k.spare) < 4 {
				k.spare = append(k.spare, block[:0])
			}
		}
		n++
	}
	k.covered = append(k.covered[:0], k.covered[n:]...)
	b.out.flushAcks()
}

// failed rolls the topology back when a tracked input fails: the cut must not
// commit what other tasks did with the input while this one failed it, so the
// task fails (its control lane is served before the barrier that would
// follow), and the next incarnation replays from the last commit.
func (k *boltCheckpoint) failed(b *boltTask, in dsl.Tuple) {
	err := fmt.Errorf("bolt %q task %d failed an input of stream %q in a topology with state: rolling back to the last checkpoint",
		b.task.Component.ID, b.task.ID, streamName(in))
	b.inc.boxes[b.task.ID].PostUserMessage(failTask{err})
}
