package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/acker"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/internal/trace"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// ackerTask owns one Tracker and tells spouts about finished trees, batched per
// spout task.
type ackerTask struct {
	inc     *incarnation
	task    routing.Task
	tracker *acker.Tracker
	trace   tracer
	log     *zap.Logger
	stats   *taskStats
	out     []*feedback // by spout task id, grown on demand
	dirty   []int       // spout tasks with feedback in out
	batch   int         // feedback entries per message
	refused int         // trees refused since the last tick, logged once per tick
	open    int64       // trees tracked and not ended, for the stats
}

func (a *ackerTask) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *ackerBatch:
		ops, merge := m.ops, !a.trace.on() // traced, each op is its own step
		for i := 0; i < len(ops); i++ {
			op := ops[i]
			// A spout emit's Track is followed by the Anchors of its edges:
			// they open the tree together, one lookup instead of one per op.
			for merge && op.Kind == opTrack && i+1 < len(ops) && ops[i+1].Kind == opAnchor && ops[i+1].Root == op.Root {
				i++
				op.Edge ^= ops[i].Edge
			}
			a.apply(op)
		}
		clear(m.ops)
		m.ops = m.ops[:0]
		ackerPool.Put(m)
	case *okBlock:
		// A stateful bolt's acks, held until the checkpoint that covers
		// them committed.
		for _, h := range m.acks {
			a.apply(ackerOp{Kind: opOk, Root: h.root, Edge: h.edge})
		}
		m.acks = m.acks[:0]
		okBlocks.Put(m)
	case tick:
		a.trace.in("Tick")
		// Beats missed while the acker was busy still count: each is a rotation
		// (three empty every bucket, so more change nothing).
		for range min(m.n, 3) {
			a.tracker.Rotate(a.expire)
		}
		a.stats.Pending.Store(a.open)
		if a.refused > 0 {
			a.log.Warn("acker at capacity: new trees were nacked at once", zap.Int("refused", a.refused), zap.Int("capacity", a.inc.plan.Topology.Settings.AckerCapacity))
			a.refused = 0
		}
	case idle:
		a.flush()
	case activate:
		a.trace.in("Activate")
		close(m.done)
	case deactivate:
		a.trace.in("Deactivate")
		close(m.done)
	case *actor.Stopping:
		a.trace.in("Stop")
	}
}

// traceStep records an operation applied. It is out of line, like the
// tracer's helpers: apply runs for every operation.
//
//go:noinline
func (a *ackerTask) traceStep(op ackerOp, result outcome) {
	v, _ := a.tracker.Value(op.Root)
	a.trace.record(trace.Event{Kind: "AckerStep", Op: op.Kind.String(), Root: op.Root, Edge: op.Edge, Spout: int(op.Spout), XOR: v, Outcome: result.String()})
}

func (a *ackerTask) apply(op ackerOp) {
	result, spout := applyOp(a.tracker, op)
	if a.trace.on() {
		a.traceStep(op, result)
	}
	switch result {
	case pending:
		if op.Kind == opTrack {
			a.open++
		}
	case complete:
		a.open--
		if p := a.inc.hops; p != nil {
			p.Mark(op.Root, hops.Completed)
		}
		f := a.feedback(spout)
		f.acked = append(f.acked, op.Root)
		a.flushIfFull(spout, f)
		a.stats.Acked.Add(1)
	case failed:
		a.open--
		a.nack(spout, op.Root)
	case refused:
		a.refused++
		a.nack(spout, op.Root)
	}
}

func (a *ackerTask) expire(root uint64, spout int) {
	a.open--
	a.stats.Expired.Add(1)
	a.feedback(spout).expired++
	a.nack(spout, root)
}

func (a *ackerTask) nack(spout int, root uint64) {
	f := a.feedback(spout)
	f.nacked = append(f.nacked, root)
	a.stats.Failed.Add(1)
	a.flushIfFull(spout, f)
}

func (a *ackerTask) feedback(spout int) *feedback {
	for spout >= len(a.out) { // grows once per spout task, at its first outcome
		a.out = append(a.out, nil)
	}
	f := a.out[spout]
	if f == nil {
		f = feedbackPool.Get().(*feedback)
		a.out[spout] = f
		a.dirty = append(a.dirty, spout)
	}
	return f
}

func (a *ackerTask) flush() {
	for _, spout := range a.dirty {
		if f := a.out[spout]; f != nil {
			a.out[spout] = nil
			a.post(spout, f)
		}
	}
	a.dirty = a.dirty[:0]
	a.stats.Pending.Store(a.open)
}

// flushIfFull sends a spout's feedback once it holds a batch, so a busy acker that
// is never idle still answers promptly.
func (a *ackerTask) flushIfFull(spout int, f *feedback) {
	if len(f.acked)+len(f.nacked) >= a.batch {
		a.out[spout] = nil // stays in dirty: flush skips it
		a.post(spout, f)
	}
}

// post sends feedback to a spout task.
func (a *ackerTask) post(spout int, f *feedback) {
	if p := a.inc.hops; p != nil {
		for _, root := range f.acked {
			p.Mark(root, hops.OutcomeFlush)
		}
	}
	a.inc.boxes[spout].PostUserMessage(f)
}
