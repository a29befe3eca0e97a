package dsl

import (
	"fmt"
	"reflect"
)

// spoutEmitter is the runtime's side of a spout emit (package
// internal/component names it SpoutEmitter; the two are one type).
type spoutEmitter = interface {
	Emit(tuple any, tracked bool) (root uint64)
}

// spoutDirectEmitter is the runtime's side of a direct spout emit (package
// internal/component names it DirectSpoutEmitter; the two are one type).
type spoutDirectEmitter = interface {
	EmitDirect(task int, tuple any, tracked bool) (root uint64)
}

// directSource is a Source that chooses the task of each message (see Source
// and "Optional hooks" in the package doc).
type directSource[T any] interface {
	DirectTask(tuple T) (task int)
}

// emitTo emits tuple to task (0: through the groupings).
func emitTo(e spoutEmitter, task int, tuple any, tracked bool) uint64 {
	if task == 0 {
		return e.Emit(tuple, tracked)
	}
	d, ok := e.(spoutDirectEmitter)
	if !ok {
		panic(fmt.Errorf("dsl: the runtime cannot emit direct from a spout (task %d)", task))
	}
	return d.EmitDirect(task, tuple, tracked)
}

// activator and deactivator are a Source's activation hooks (see "Optional
// hooks" in the package doc). They are separate: a Source may have either.
type (
	activator   interface{ Activate() }
	deactivator interface{ Deactivate() }
)

// positioner is a Source that can say where it is and go back there: its
// position is stored with every checkpoint of a topology with [Stateful]
// bolts, and the source is rewound to the committed one when the topology
// starts again (see "Optional hooks" in the package doc).
type positioner interface {
	Position() []byte
	Rewind(position []byte) error
}

// Source is a reliable spout's per-task state. Next returns a message id and a
// tuple, or ok=false when it has nothing now. Every id Next returns later gets
// exactly one Ack or Nack, on the same goroutine as Next.
//
// A spout whose stream is subscribed with [Direct] grouping chooses the task
// of each message, as Storm's emitDirect does: its Source also has a method
//
//	DirectTask(tuple T) (task int)
//
// which is called after Next for each tuple and names a task of a direct
// subscriber (TaskInfo.Model.Component(id).Tasks lists them); 0 sends the
// tuple through the groupings, which only suits a stream with no direct
// subscriber. A task that does not subscribe fails the spout's task.
//
// A Source may also have methods Activate() and Deactivate(); these and
// DirectTask are its optional hooks (see the package doc), which
// [Builder.Build] checks by name.
type Source[ID comparable, T any] interface {
	Next() (id ID, tuple T, ok bool)
	Ack(id ID)
	Nack(id ID)
}

// SpoutSpec is a spout definition: its output stream type and how to create a
// task. Make one with [Reliable], [ReliableFrom], [Unreliable], [UnreliableFrom]
// or an adapter such as multilang.Spout.
type SpoutSpec struct {
	Output   reflect.Type
	Reliable bool
	// NewTask creates one task's implementation of the runtime's spout contract
	// (package internal/component); the runtime calls it on the task's goroutine.
	NewTask func(TaskInfo) any
	// Kind names the implementation for graphs and logs ("reliable", "unreliable", "shell").
	Kind string
	// Impl is the implementation's own description of the spout (multilang keeps
	// its command and declared streams here); the runtime ignores it.
	Impl any

	hooks hookCheck // the Source type's optional hooks, checked by Build
}

// Reliable defines a spout whose messages are tracked: ack or nack is called once
// for every id next returns, on the goroutine of the task that called next. The
// functions are shared by all tasks of the spout: with Parallelism above 1 they
// are called concurrently, from each task's goroutine, so shared state needs a
// lock. Use [ReliableFrom] for per-task state, which needs none.
func Reliable[ID comparable, T any](next func() (ID, T, bool), ack, nack func(ID)) *SpoutSpec {
	src := funcSource[ID, T]{next, ack, nack}
	return ReliableFrom(func(TaskInfo) funcSource[ID, T] { return src })
}

// ReliableFrom defines a reliable spout with one Source per task, made by
// newSource on the task's goroutine. A Source with a method Activate() or
// Deactivate() hears of its task's activation or deactivation. Declare
// newSource's result as the source's own type (func(dsl.TaskInfo) *queue), so
// that [Builder.Build] can check it for mistaken hooks; see "Optional hooks"
// in the package doc.
func ReliableFrom[ID comparable, T any, S Source[ID, T]](newSource func(TaskInfo) S) *SpoutSpec {
	hooks := newHookCheck[S]("source", sourceHooks[T]())
	return &SpoutSpec{
		Output:   reflect.TypeFor[T](),
		Reliable: true,
		Kind:     "reliable",
		hooks:    hooks,
		NewTask: func(info TaskInfo) any {
			src := newSource(info)
			hooks.value(src)
			// The map grows with what is pending, not with the max: a max of
			// 2^31-1 ("unlimited") must not cost memory up front.
			return &reliableTask[ID, T]{src: src, pending: make(map[uint64]ID, min(info.Settings.MaxSpoutPending, 1024))}
		},
	}
}

// Unreliable defines a fire-and-forget spout: next returns a tuple or ok=false.
// next is shared by all tasks of the spout and called concurrently when
// Parallelism is above 1; use [UnreliableFrom] for per-task state. Its tuples
// go through the groupings: it cannot name a task, so it takes no [Direct]
// subscriber (Build says so).
func Unreliable[T any](next func() (T, bool)) *SpoutSpec {
	return UnreliableFrom(func(TaskInfo) func() (T, bool) { return next })
}

// UnreliableFrom defines an unreliable spout with a next function per task.
func UnreliableFrom[T any](newNext func(TaskInfo) func() (T, bool)) *SpoutSpec {
	return &SpoutSpec{
		Output: reflect.TypeFor[T](),
		Kind:   unreliableKind,
		NewTask: func(info TaskInfo) any {
			return unreliableTask[T](newNext(info))
		},
	}
}

// unreliableKind is the Kind of [Unreliable] spouts. Their next function has
// no way to name a task, so Build refuses them a [Direct] subscriber.
const unreliableKind = "unreliable"

type funcSource[ID comparable, T any] struct {
	next      func() (ID, T, bool)
	ack, nack func(ID)
}

func (s funcSource[ID, T]) Next() (ID, T, bool) { return s.next() }
func (s funcSource[ID, T]) Ack(id ID)           { s.ack(id) }
func (s funcSource[ID, T]) Nack(id ID)          { s.nack(id) }

// reliableTask maps tree roots back to the user's message ids.
type reliableTask[ID comparable, T any] struct {
	src     Source[ID, T]
	pending map[uint64]ID
}

func (r *reliableTask[ID, T]) Next(e spoutEmitter) bool {
	id, tuple, ok := r.src.Next()
	if !ok {
		return false
	}
	task := 0
	if d, ok := r.src.(directSource[T]); ok {
		task = r.directTask(d, id, tuple)
	}
	if root := emitTo(e, task, tuple, true); root != 0 {
		r.pending[root] = id
	} else {
		r.src.Ack(id) // nothing downstream tracks it: complete already
	}
	return true
}

// directTask asks the source for the task of the message id; if that panics,
// the message is nacked first (it was handed out and never emitted) and the
// panic fails the task.
func (r *reliableTask[ID, T]) directTask(d directSource[T], id ID, tuple T) int {
	defer func() {
		if p := recover(); p != nil {
			r.src.Nack(id)
			panic(p)
		}
	}()
	return d.DirectTask(tuple)
}

func (r *reliableTask[ID, T]) Ack(root uint64) {
	if id, ok := r.pending[root]; ok {
		delete(r.pending, root)
		r.src.Ack(id)
	}
}

func (r *reliableTask[ID, T]) Nack(root uint64) {
	if id, ok := r.pending[root]; ok {
		delete(r.pending, root)
		r.src.Nack(id)
	}
}

func (r *reliableTask[ID, T]) Abandon() {
	for root, id := range r.pending {
		delete(r.pending, root)
		r.src.Nack(id)
	}
}

// SourcePosition returns the source's position, if it has positions.
func (r *reliableTask[ID, T]) SourcePosition() ([]byte, bool) {
	p, ok := r.src.(positioner)
	if !ok {
		return nil, false
	}
	return p.Position(), true
}

// RewindSource rewinds the source to a committed position. The messages
// pending before (none, at a start) are forgotten: the source replays from
// position on, which covers them.
func (r *reliableTask[ID, T]) RewindSource(position []byte) error {
	p, ok := r.src.(positioner)
	if !ok {
		return nil
	}
	clear(r.pending)
	return p.Rewind(position)
}

func (r *reliableTask[ID, T]) Activate() {
	if a, ok := r.src.(activator); ok {
		a.Activate()
	}
}

func (r *reliableTask[ID, T]) Deactivate() {
	if d, ok := r.src.(deactivator); ok {
		d.Deactivate()
	}
}

type unreliableTask[T any] func() (T, bool)

func (u unreliableTask[T]) Next(e spoutEmitter) bool {
	tuple, ok := u()
	if ok {
		e.Emit(tuple, false)
	}
	return ok
}

func (unreliableTask[T]) Ack(uint64)  {}
func (unreliableTask[T]) Nack(uint64) {}
func (unreliableTask[T]) Abandon()    {}
