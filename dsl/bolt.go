package dsl

import "reflect"

// BoltSpec is a bolt definition: the input type its handler accepts and how to
// create a task.
type BoltSpec struct {
	// Input is the handler's input type; every stream the bolt subscribes to must be
	// assignable to it.
	Input reflect.Type
	// Typed makes one task's typed half of a bolt that dsl defines (see
	// [TypedBolt]), on the task's goroutine; the runtime builds the task
	// around it by Kind. Nil for a bolt that makes its own tasks.
	Typed func(TaskInfo) TypedBolt
	// NewTask makes one task of a bolt that implements the task itself (a
	// window, an adapter's shell bolt), on the task's goroutine. The runtime
	// calls it when Typed is nil.
	NewTask func(TaskInfo) BoltTask
	// Kind names the implementation ("auto-ack", "terminator", "manual",
	// "stateful", "window", "shell").
	Kind string
	// Impl is the implementation's own description of the bolt (multilang keeps its
	// command and declared streams here); the runtime ignores it.
	Impl any
	// StateSchema describes how a [Stateful] bolt's State is stored (the
	// shape of its key and value types); empty for other bolts. The host
	// records it with the checkpoints and refuses to restore a state that
	// was stored under another one.
	StateSchema string

	hooks hookCheck // the handler type's optional hooks, checked by Build
	// stateKey and stateValue are a Stateful bolt's State types, which
	// Build checks can be stored (nil for other bolts).
	stateKey, stateValue reflect.Type
}

// Handler processes one input of an auto-ack bolt.
type Handler[In any] interface {
	Execute(in In, out Emitter) error
}

// handlerFunc adapts a function to a [Handler].
type handlerFunc[In any] func(in In, out Emitter) error

func (f handlerFunc[In]) Execute(in In, out Emitter) error { return f(in, out) }

// AutoAck defines a bolt that acks each input after consume returns nil (its emits
// are routed first) and fails it when consume returns an error or panics.
// consume is shared by all tasks of the bolt: with Parallelism above 1 it is
// called concurrently, from each task's goroutine. Use [AutoAckFrom] for
// per-task state, which needs no lock.
func AutoAck[In any](consume func(in In, out Emitter) error) *BoltSpec {
	h := handlerFunc[In](consume)
	return AutoAckFrom(func(TaskInfo) handlerFunc[In] { return h })
}

// AutoAckFrom defines an auto-ack bolt with one Handler per task, made by
// newHandler on the task's goroutine. A Handler that also has a method
// Tick(dsl.Tick, dsl.Collector) error receives tick tuples. Declare
// newHandler's result as the handler's own type (func(dsl.TaskInfo) *counter),
// so that [Builder.Build] can check it for mistaken hooks; see "Optional
// hooks" in the package doc.
func AutoAckFrom[In any, H Handler[In]](newHandler func(TaskInfo) H) *BoltSpec {
	hooks := newHookCheck[H]("handler", handlerHooks)
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "auto-ack", hooks: hooks, Typed: func(info TaskInfo) TypedBolt {
		h := newHandler(info)
		hooks.value(h)
		return typedHandler[In](h)
	}}
}

// typedHandler is h's typed half. A function handler is called without the
// interface: one indirect call per input, as before the typed half existed.
func typedHandler[In any](h Handler[In]) TypedBolt {
	if fn, ok := any(h).(handlerFunc[In]); ok {
		return TypedBolt{Handler: h, Execute: func(in *Tuple, c Collector) (bool, error) {
			v, ok := in.Value.(In)
			if !ok {
				return false, nil
			}
			return true, fn(v, c)
		}}
	}
	return TypedBolt{Handler: h, Execute: func(in *Tuple, c Collector) (bool, error) {
		v, ok := in.Value.(In)
		if !ok {
			return false, nil
		}
		return true, h.Execute(v, c)
	}}
}

// Terminator defines a sink that fails its input after consume returns, as
// FsShelter's terminating bolts do, so it belongs where nothing is tracked:
// [Builder.Build] rejects it on every edge whose tuples can be tracked (from a
// reliable spout, whatever the edge's anchoring, or from a bolt with an
// anchored input edge that carries tracked tuples), where it would fail every
// tree. An untracked input's fail costs nothing.
func Terminator[In any](consume func(in In)) *BoltSpec {
	h := handlerFunc[In](func(in In, _ Emitter) error { consume(in); return nil })
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: terminatorKind, Typed: func(TaskInfo) TypedBolt {
		return typedHandler[In](h)
	}}
}

// ManualHandler processes one input of a manual-ack bolt. It must ack or fail
// input through c, now or later (for example on a tick: a handler that also
// has a method Tick(dsl.Tick, dsl.Collector) error receives tick tuples; see
// "Optional hooks" in the package doc). A returned error or a panic fails the
// input.
type ManualHandler[In any] interface {
	Execute(in In, input Tuple, c Collector) error
}

// Manual defines a bolt whose handler acks and fails inputs itself, one handler
// per task, made by newHandler on the task's goroutine. As with [AutoAckFrom],
// declare newHandler's result as the handler's own type so that
// [Builder.Build] can check its optional hooks (see the package doc).
func Manual[In any, H ManualHandler[In]](newHandler func(TaskInfo) H) *BoltSpec {
	hooks := newHookCheck[H]("handler", handlerHooks)
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "manual", hooks: hooks, Typed: func(info TaskInfo) TypedBolt {
		h := newHandler(info)
		hooks.value(h)
		return TypedBolt{Handler: h, Execute: func(in *Tuple, c Collector) (bool, error) {
			v, ok := in.Value.(In)
			if !ok {
				return false, nil
			}
			return true, h.Execute(v, *in, c)
		}}
	}}
}

const terminatorKind = "terminator"
