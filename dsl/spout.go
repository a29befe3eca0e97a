package dsl

import (
	"reflect"

	"github.com/goshelter/goshelter/internal/idtable"
)

// directSource is a Source that chooses the task of each message (see Source
// and "Optional hooks" in the package doc).
type directSource[T any] interface {
	DirectTask(tuple T) (task int)
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
// subscriber. A task that does not subscribe (or 0 on a direct stream) fails that
// message: it is nacked, the error is logged, and the spout goes on (see
// [Emitter]).
//
// A Source may also have the methods Activate() and Deactivate() (its task's
// activation), Position() []byte and Rewind([]byte) error (where it is, for
// the checkpoints of a topology with state) and Close() error (its task's
// incarnation ended: release its client). These and DirectTask are its
// optional hooks (see "Optional hooks" in the package doc, with runnable
// examples of a positioned source and of Close), which [Builder.Build]
// checks by name.
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
	// Typed makes one task's typed half of a spout defined by [Reliable] or
	// [ReliableFrom] (see [TypedSource]), on the task's goroutine.
	Typed func(TaskInfo) TypedSource
	// TypedNext makes one task's next function of a spout defined by
	// [Unreliable] or [UnreliableFrom], on the task's goroutine.
	TypedNext func(TaskInfo) func() (tuple any, ok bool)
	// NewTask makes one task of a spout that implements the task itself (an
	// adapter's shell spout), on the task's goroutine. The runtime calls it
	// when Typed and TypedNext are nil.
	NewTask func(TaskInfo) SpoutTask
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
		Typed: func(info TaskInfo) TypedSource {
			src := newSource(info)
			hooks.value(src)
			// The table grows with what is pending, not with the max: a max of
			// 2^31-1 ("unlimited") must not cost memory up front.
			t := &typedSource[ID, T]{src: src}
			t.direct, _ = any(src).(directSource[T])
			return t
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
		TypedNext: func(info TaskInfo) func() (any, bool) {
			next := newNext(info)
			return func() (any, bool) {
				tuple, ok := next()
				if !ok {
					return nil, false // no tuple to box
				}
				return tuple, true
			}
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

// typedSource is the typed half of a reliable spout task: the Source, and
// the ids of its messages by tree root.
type typedSource[ID comparable, T any] struct {
	src     Source[ID, T]
	direct  directSource[T] // src, if it has the DirectTask hook
	pending idtable.Table[ID]
	current ID // the message of the last Next, until Pend or Settle
}

func (s *typedSource[ID, T]) Source() any { return s.src }

func (s *typedSource[ID, T]) Next() (any, bool) {
	id, tuple, ok := s.src.Next()
	if !ok {
		return nil, false
	}
	s.current = id
	return tuple, true
}

func (s *typedSource[ID, T]) DirectTask() func(tuple any) int {
	if s.direct == nil {
		return nil
	}
	return func(tuple any) int { return s.direct.DirectTask(tuple.(T)) }
}

func (s *typedSource[ID, T]) Pend(root uint64) {
	s.pending.Put(root, s.current)
	s.current = *new(ID)
}

func (s *typedSource[ID, T]) Settle(ack bool) {
	id := s.current
	s.current = *new(ID)
	s.tell(id, ack)
}

func (s *typedSource[ID, T]) Done(root uint64, ack bool) {
	if id, ok := s.pending.Take(root); ok {
		s.tell(id, ack)
	}
}

func (s *typedSource[ID, T]) Abandon() {
	s.pending.Sweep(func(_ uint64, id *ID) bool {
		s.src.Nack(*id)
		return true
	})
}

func (s *typedSource[ID, T]) Forget() { s.pending.Clear() }

func (s *typedSource[ID, T]) tell(id ID, ack bool) {
	if ack {
		s.src.Ack(id)
	} else {
		s.src.Nack(id)
	}
}
