package dsl

import (
	"fmt"
	"reflect"
)

// ticker is the optional hook of handlers that want tick tuples (see
// "Optional hooks" in the package doc; handlerHooks checks its name).
type ticker interface {
	Tick(t Tick, c Collector) error
}

// BoltSpec is a bolt definition: the input type its handler accepts and how to
// create a task.
type BoltSpec struct {
	// Input is the handler's input type; every stream the bolt subscribes to must be
	// assignable to it.
	Input reflect.Type
	// NewTask creates one task's implementation of the runtime's bolt contract
	// (package internal/component); the runtime calls it on the task's goroutine.
	NewTask func(TaskInfo) any
	// Kind names the implementation ("auto-ack", "terminator", "manual",
	// "window", "shell").
	Kind string
	// Impl is the implementation's own description of the bolt (multilang keeps its
	// command and declared streams here); the runtime ignores it.
	Impl any

	hooks hookCheck // the handler type's optional hooks, checked by Build
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
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "auto-ack", hooks: hooks, NewTask: func(info TaskInfo) any {
		h := newHandler(info)
		hooks.value(h)
		return newAutoAckTask(h, false)
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
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: terminatorKind, NewTask: func(TaskInfo) any {
		return newAutoAckTask(h, true)
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
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "manual", hooks: hooks, NewTask: func(info TaskInfo) any {
		h := newHandler(info)
		hooks.value(h)
		return &manualTask[In]{h: h}
	}}
}

const terminatorKind = "terminator"

type autoAckTask[In any] struct {
	h    Handler[In]
	fn   handlerFunc[In] // h when it is a function: called without the interface
	fail bool            // terminator
}

func newAutoAckTask[In any](h Handler[In], fail bool) *autoAckTask[In] {
	a := &autoAckTask[In]{h: h, fail: fail}
	a.fn, _ = h.(handlerFunc[In])
	return a
}

func (a *autoAckTask[In]) Execute(in *Tuple, c Collector) error {
	ack, err := a.ExecuteAuto(in, c)
	if ack {
		c.Ack(*in)
	}
	return err
}

// ExecuteAuto is Execute, except that the ack of a handled input is left to
// the caller (the runtime acks it in place; see internal/component.AutoAcker).
func (a *autoAckTask[In]) ExecuteAuto(in *Tuple, c Collector) (ack bool, err error) {
	if in.IsTick() {
		return false, tick(a.h, in.Value.(Tick), c)
	}
	v, err := inputOf[In](in, c)
	if err != nil {
		return false, err
	}
	if a.fn != nil {
		err = a.fn(v, c)
	} else {
		err = a.h.Execute(v, c)
	}
	if err != nil || a.fail {
		c.Fail(*in)
		return false, err
	}
	return true, nil
}

type manualTask[In any] struct{ h ManualHandler[In] }

func (m *manualTask[In]) Execute(in *Tuple, c Collector) error {
	if in.IsTick() {
		return tick(m.h, in.Value.(Tick), c)
	}
	v, err := inputOf[In](in, c)
	if err != nil {
		return err
	}
	if err := m.h.Execute(v, *in, c); err != nil {
		c.Fail(*in)
		return err
	}
	return nil
}

// inputOf returns the input's value as the handler's type, or fails the input:
// Build only lets assignable streams in, so this guards other producers (shell).
func inputOf[In any](in *Tuple, c Collector) (In, error) {
	v, ok := in.Value.(In)
	if !ok {
		c.Fail(*in)
		return v, fmt.Errorf("input of type %T is not %v", in.Value, reflect.TypeFor[In]())
	}
	return v, nil
}

func tick(h any, t Tick, c Collector) error {
	if tk, ok := h.(ticker); ok {
		return tk.Tick(t, c)
	}
	return nil
}
