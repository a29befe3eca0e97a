package task

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

// NewSpout makes one task of spout c for the task info describes: around
// the typed half of a spout dsl defines, or by the spec's own NewTask. It
// panics when the spec makes no task, which fails the task naming c.
func NewSpout(c *dsl.Component, info dsl.TaskInfo) dsl.SpoutTask {
	spec := c.Spout
	switch {
	case spec.Typed != nil:
		t := &reliableTask{typed: spec.Typed(info)}
		t.direct = t.typed.DirectTask()
		src := t.typed.Source()
		t.activator, _ = src.(activator)
		t.deactivator, _ = src.(deactivator)
		t.positioner, _ = src.(positioner)
		t.closer, _ = src.(closer)
		return t
	case spec.TypedNext != nil:
		return unreliableTask(spec.TypedNext(info))
	case spec.NewTask != nil:
		if t := spec.NewTask(info); t != nil {
			return t
		}
	}
	panic(fmt.Errorf("spout %q: its spec made no task", c.ID))
}

// emitTo emits tuple to task (0: through the groupings).
func emitTo(e dsl.SpoutEmitter, task int, tuple any, tracked bool) uint64 {
	if task == 0 {
		return e.Emit(tuple, tracked)
	}
	d, ok := e.(component.DirectSpoutEmitter)
	if !ok {
		panic(fmt.Errorf("dsl: the runtime cannot emit direct from a spout (task %d)", task))
	}
	return d.EmitDirect(task, tuple, tracked)
}

// reliableTask emits its Source's messages tracked and tells the Source each
// one's outcome; its typed half keeps the message ids by tree root.
type reliableTask struct {
	typed dsl.TypedSource
	// The Source's optional hooks, nil when it lacks them.
	direct      func(tuple any) int
	activator   activator
	deactivator deactivator
	positioner  positioner
	closer      closer
}

func (r *reliableTask) Next(e dsl.SpoutEmitter) bool {
	tuple, ok := r.typed.Next()
	if !ok {
		return false
	}
	task := 0
	if r.direct != nil {
		task = r.directTask(tuple)
	}
	if root := emitTo(e, task, tuple, true); root != 0 {
		r.typed.Pend(root)
	} else {
		r.typed.Settle(true) // nothing downstream tracks it: complete already
	}
	return true
}

// directTask asks the source for the task of the current message; if that panics, the message is nacked first (it
// was handed out and never emitted) and the panic fails the task.
func (r *reliableTask) directTask(tuple any) int {
	defer func() {
		if p := recover(); p != nil {
			r.typed.Settle(false)
			panic(p)
		}
	}()
	return r.direct(tuple)
}

func (r *reliableTask) Ack(root uint64)  { r.typed.Done(root, true) }
func (r *reliableTask) Nack(root uint64) { r.typed.Done(root, false) }
func (r *reliableTask) Abandon()         { r.typed.Abandon() }

// Close forwards the end of the task's incarnation to the Source's Close
// hook (component.Closer). The runtime calls it once, on the task's
// goroutine, after Abandon: the Source has heard its last Ack or Nack.
func (r *reliableTask) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Positioned reports whether the source has positions (Position and Rewind).
func (r *reliableTask) Positioned() bool { return r.positioner != nil }

// SourcePosition returns the source's position, if it has positions
// (component.PositionedSpout).
func (r *reliableTask) SourcePosition() ([]byte, bool) {
	if r.positioner == nil {
		return nil, false
	}
	return r.positioner.Position(), true
}

// RewindSource rewinds the source to a committed position. The messages
// pending before (none, at a start) are forgotten: the source replays from
// position on, which covers them.
func (r *reliableTask) RewindSource(position []byte) error {
	if r.positioner == nil {
		return nil
	}
	r.typed.Forget()
	return r.positioner.Rewind(position)
}

// Activate and Deactivate forward the task's activation to the Source's
// hooks (component.Activator).
func (r *reliableTask) Activate() {
	if r.activator != nil {
		r.activator.Activate()
	}
}

func (r *reliableTask) Deactivate() {
	if r.deactivator != nil {
		r.deactivator.Deactivate()
	}
}

// unreliableTask emits its next function's tuples untracked.
type unreliableTask func() (any, bool)

func (u unreliableTask) Next(e dsl.SpoutEmitter) bool {
	tuple, ok := u()
	if ok {
		e.Emit(tuple, false)
	}
	return ok
}

func (unreliableTask) Ack(uint64)  {}
func (unreliableTask) Nack(uint64) {}
func (unreliableTask) Abandon()    {}
