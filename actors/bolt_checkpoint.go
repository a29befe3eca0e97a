package actors

import (
	"fmt"
	"sync"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/state"
	"go.uber.org/zap"
)

// boltCheckpoint is a bolt task's side of checkpoints (checkpoint.go): it
// aligns barriers from the task's senders, waits until the inputs executed
// before the cut are settled, snapshots a stateful task's changes or
// prepares a two-phase handler's output, and holds a stateful task's acks
// until their checkpoint commits.
type boltCheckpoint struct {
	c        *checkpointer
	state    component.StateTask // nil for a bolt without state
	twoPhase component.TwoPhase  // nil for a bolt without the two-phase hooks
	holds    bool                // acks wait for commits: the bolt has state
	space    string
	// open counts the tracked inputs executed and not yet acked or failed
	// (a manual bolt settles them later, a sink on its broker's answer); a
	// barrier passes only once they are all settled, so the checkpoint never
	// commits a position past an input whose output may still fail. waits is
	// false for a window bolt, which holds inputs across barriers by design.
	open  int
	waits bool
	// settling is the checkpoint aligned while inputs were open: it passes
	// when the last of them settles.
	settling uint64
	// poisoned is set when the task failed a tracked input: it passes no more
	// barriers, so no checkpoint commits what other tasks did with that
	// input, while the failure reaches the spout (which hears its Nack) and
	// the topology rolls back.
	poisoned bool
	senders  int      // tasks that send to this one: each sends every barrier
	to       []int    // tasks this one sends to
	id       uint64   // the checkpoint being aligned, 0 for none
	arrived  int      // senders whose barrier id came
	blocked  []bool   // by task id: its barrier came, its later data waits
	waiting  []any    // data from blocked senders, in arrival order
	acks     heldAcks // acks of inputs executed since the last barrier
	// covered holds the acks set aside at each barrier, until that
	// checkpoint commits.
	covered []coveredAcks
	ackers  int // the plan's acker tasks, among which held acks are sorted
}

type coveredAcks struct {
	id   uint64
	acks heldAcks
}

// heldAckBlock is how many acks a block of heldAcks holds. An interval's
// acks can run into millions: growing one slice would copy them again at
// every doubling, blocks are written once.
const heldAckBlock = 4096

// heldAck is the acker operation an input's ack will send to one of its
// trees: Ok(root, edge).
type heldAck struct{ root, edge uint64 }

// okBlock is a block of held acks, and the message that takes them to their
// acker when their checkpoint commits: the block itself travels, so a commit
// that releases an interval's acks copies none of them into acker batches
// (which cost 24 bytes an ack plus their growth, on top of the 16 held, all
// live at once while the acker works through them). The acker empties it and
// puts it back in okBlocks.
type okBlock struct{ acks []heldAck }

var okBlocks = sync.Pool{New: func() any { return &okBlock{acks: make([]heldAck, 0, heldAckBlock)} }}

// heldAcks is the acks held for a checkpoint, a list of okBlocks per acker
// task (by its index in the plan's ackers). They are held until the
// checkpoint commits, a whole interval of them (millions a second in a word
// count), so each costs 16 bytes, not a 40-byte TupleID: an input anchored to
// several trees is held as one Ok per tree, as sendAck would send them. And
// an ack for the same tree as the one held before it for the same acker is
// folded into it: Ok XORs its edge into the tree's value, so Ok(r, a) then
// Ok(r, b) leave the tree as Ok(r, a^b) does, and what a bolt executes in a
// row often comes from one tree (the words of one sentence).
type heldAcks struct{ byAcker [][]*okBlock }

// add holds the ack of input id, whose trees are tracked by ackers ackers.
func (h *heldAcks) add(id *dsl.TupleID, ackers int) {
	h.put(ackerIndex(id.Root, ackers), id.Root, id.Edge)
	for _, r := range id.Roots {
		h.put(ackerIndex(r, ackers), r, id.Edge)
	}
}

func (h *heldAcks) put(acker int, root, edge uint64) {
	if acker >= len(h.byAcker) {
		h.byAcker = append(h.byAcker, make([][]*okBlock, acker+1-len(h.byAcker))...)
	}
	blocks := h.byAcker[acker]
	n := len(blocks)
	if n > 0 { // a listed block holds its first ack already
		if last := blocks[n-1].acks; last[len(last)-1].root == root {
			last[len(last)-1].edge ^= edge
			return
		}
	}
	if n == 0 || len(blocks[n-1].acks) == heldAckBlock {
		blocks = append(blocks, okBlocks.Get().(*okBlock))
		h.byAcker[acker] = blocks
		n++
	}
	blocks[n-1].acks = append(blocks[n-1].acks, heldAck{root, edge})
}

// empty reports whether no ack is held: byAcker grows only when one is.
func (h *heldAcks) empty() bool { return len(h.byAcker) == 0 }

// newBoltCheckpoint restores a stateful task's state from the last commit;
// a store that cannot be read fails the task.
func newBoltCheckpoint(b *boltTask, c *checkpointer, info dsl.TaskInfo) *boltCheckpoint {
	top := b.inc.plan.Topology
	k := &boltCheckpoint{c: c, blocked: make([]bool, len(b.inc.boxes)), to: receivers(top, b.task.Component), ackers: len(b.inc.plan.Ackers),
		waits: b.task.Component.Bolt.Kind != windowKind}
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
	if tp, ok := b.impl.(component.TwoPhaser); ok && tp.TwoPhase() != nil {
		k.twoPhase = tp.TwoPhase()
		k.space = taskSpace("sink", b.task.Component, b.task.Index)
		if err := c.recoverSink(info.Context(), b, k.twoPhase); err != nil {
			panic(taskFailure{err})
		}
	}
	return k
}

// windowKind is dsl's kind of window bolts (dsl.BoltSpec.Kind).
const windowKind = "window"

// executing counts a tracked input the task is about to execute.
func (k *boltCheckpoint) executing(in *dsl.Tuple) {
	if in.ID.Edge != 0 && k.waits {
		k.open++
	}
}

// settled counts out a tracked input the task acked or failed; the last one
// of a checkpoint that waits for them lets it pass. The pass is posted, not
// made here: an ack may come from inside the handler's Execute.
func (k *boltCheckpoint) settled(b *boltTask) {
	if !k.waits || k.open == 0 {
		return // an input settled twice, or one executed before a restore
	}
	if k.open--; k.open == 0 && k.settling != 0 {
		b.inc.boxes[b.task.ID].PostUserMessage(passCut{id: k.settling})
	}
}

// passCut passes checkpoint id's cut once the inputs before it settled.
type passCut struct{ id uint64 }

// settledCut passes the checkpoint that waited for inputs to settle.
func (k *boltCheckpoint) settledCut(b *boltTask, id uint64) {
	if k.settling != id || k.open > 0 {
		return
	}
	k.settling = 0
	k.aligned(b, id)
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
	if k.open > 0 {
		k.settling = m.id // settled passes it
		return
	}
	k.aligned(b, m.id)
}

// aligned passes checkpoint id, whose barriers all came and whose inputs
// before the cut are settled, and executes the inputs held meanwhile.
func (k *boltCheckpoint) aligned(b *boltTask, id uint64) {
	if k.poisoned {
		return // the rollback is on its way: nothing after the failure commits
	}
	k.pass(b, id)
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
	if k.twoPhase != nil {
		prepared, err := k.twoPhase.PrepareCheckpoint(id)
		if err != nil {
			panic(taskFailure{fmt.Errorf("bolt %q task %d: preparing checkpoint %d: %w",
				b.task.Component.ID, b.task.ID, id, err)})
		}
		changes = append(changes, state.Change{Space: k.space, Key: preparedKey,
			Value: append([]byte(nil), prepared...), Delete: prepared == nil})
		size = len(prepared)
	}
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
		b.out.send(to, &cutBarrier{id: id, from: b.task.ID})
	}
	k.c.report(ckReport{id: id, task: b.task.ID, changes: changes, size: size})
}

// hold sets an input's ack aside until its checkpoint commits.
func (k *boltCheckpoint) hold(id *dsl.TupleID) { k.acks.add(id, k.ackers) }

// commit acks the inputs covered by checkpoints up to id, and tells a
// two-phase handler that id committed.
func (k *boltCheckpoint) commit(b *boltTask, id uint64) {
	if k.twoPhase != nil {
		if err := k.twoPhase.CommitCheckpoint(id); err != nil {
			// The next incarnation's RecoverCheckpoint finishes it.
			panic(taskFailure{fmt.Errorf("bolt %q task %d: committing its part of checkpoint %d: %w",
				b.task.Component.ID, b.task.ID, id, err)})
		}
	}
	b.out.flushAcks() // the acker operations sent before go first, as they did
	n := 0
	for _, c := range k.covered {
		if c.id > id {
			break
		}
		for i, blocks := range c.acks.byAcker {
			box := b.inc.boxes[b.inc.plan.Ackers[i]]
			for _, block := range blocks {
				if p := b.inc.hops; p != nil {
					for _, a := range block.acks {
						p.Mark(a.root, hops.AckFlush)
					}
				}
				box.PostUserMessage(block)
			}
		}
		n++
	}
	clear(k.covered[:n])
	k.covered = append(k.covered[:0], k.covered[n:]...)
}

// failed rolls the topology back when a tracked input fails. The cut must not
// commit what other tasks did with the input while this one failed it, so
// the task passes no more barriers; the failure travels to the spout through
// the acker, and the spout, having told its source which message failed
// (Nack: a source counts a poison message's rollbacks there), rolls the
// topology back to the last commit.
func (k *boltCheckpoint) failed(b *boltTask, in dsl.Tuple) {
	if !k.poisoned {
		k.poisoned = true
		b.log.Warn("bolt failed an input in a topology with state: no checkpoint commits until the topology rolls back",
			zap.String("stream", streamName(in)))
	}
}
