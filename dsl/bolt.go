package dsl

import (
	"fmt"
	"reflect"
)

// BoltTask is a running bolt instance as the runtime drives it. Execute is called
// one tuple at a time from the task's actor. The kind's wrapper acks or fails the
// input through c; a panic in Execute is recovered by the runtime, which fails the
// input and logs the panic with its stack.
type BoltTask interface {
	Execute(in Tuple, c Collector) error
}

// Ticker is implemented by handlers that want tick tuples (see [TickFrequency]).
type Ticker interface {
	Tick(t Tick, c Collector) error
}

// BoltSpec is a bolt definition: the input type its handler accepts and how to
// create a task.
type BoltSpec struct {
	// Input is the handler's input type; every stream the bolt subscribes to must be
	// assignable to it.
	Input   reflect.Type
	NewTask func(TaskInfo) BoltTask
	// Kind names the implementation ("auto-ack", "terminator", "manual", "shell").
	Kind string
	// Impl is the implementation's own description of the bolt (multilang keeps its
	// command and declared streams here); the runtime ignores it.
	Impl any
}

// Handler processes one input of an auto-ack bolt.
type Handler[In any] interface {
	Execute(in In, out Emitter) error
}

// HandlerFunc adapts a function to a [Handler].
type HandlerFunc[In any] func(in In, out Emitter) error

// Execute calls f.
func (f HandlerFunc[In]) Execute(in In, out Emitter) error { return f(in, out) }

// AutoAck defines a bolt that acks each input after consume returns nil (its emits
// are routed first) and fails it when consume returns an error or panics.
// consume is shared by all tasks; use [AutoAckFrom] for per-task state.
func AutoAck[In any](consume func(in In, out Emitter) error) *BoltSpec {
	h := HandlerFunc[In](consume)
	return AutoAckFrom(func(TaskInfo) Handler[In] { return h })
}

// AutoAckFrom defines an auto-ack bolt with one Handler per task. A Handler that
// also implements [Ticker] receives tick tuples.
func AutoAckFrom[In any](newHandler func(TaskInfo) Handler[In]) *BoltSpec {
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "auto-ack", NewTask: func(info TaskInfo) BoltTask {
		return &autoAckTask[In]{h: newHandler(info), fail: false}
	}}
}

// Terminator defines a sink that always fails its input after consume returns, as
// FsShelter's terminating bolts do; put it on unanchored edges so trees are not failed.
func Terminator[In any](consume func(in In)) *BoltSpec {
	h := HandlerFunc[In](func(in In, _ Emitter) error { consume(in); return nil })
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "terminator", NewTask: func(TaskInfo) BoltTask {
		return &autoAckTask[In]{h: h, fail: true}
	}}
}

// ManualHandler processes one input of a manual-ack bolt. It must ack or fail
// input through c, now or later (for example on a tick). A returned error or a
// panic fails the input.
type ManualHandler[In any] interface {
	Execute(in In, input Tuple, c Collector) error
}

// ManualFunc adapts a function to a [ManualHandler].
type ManualFunc[In any] func(in In, input Tuple, c Collector) error

// Execute calls f.
func (f ManualFunc[In]) Execute(in In, input Tuple, c Collector) error { return f(in, input, c) }

// Manual defines a bolt whose handler acks and fails inputs itself, one handler
// per task.
func Manual[In any](newHandler func(TaskInfo) ManualHandler[In]) *BoltSpec {
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: "manual", NewTask: func(info TaskInfo) BoltTask {
		return &manualTask[In]{h: newHandler(info)}
	}}
}

type autoAckTask[In any] struct {
	h    Handler[In]
	fail bool // terminator
}

func (a *autoAckTask[In]) Execute(in Tuple, c Collector) error {
	if in.IsTick() {
		return tick(a.h, in.Value.(Tick), c)
	}
	v, err := inputOf[In](in, c)
	if err != nil {
		return err
	}
	if err := a.h.Execute(v, c); err != nil {
		c.Fail(in)
		return err
	}
	if a.fail {
		c.Fail(in)
	} else {
		c.Ack(in)
	}
	return nil
}

type manualTask[In any] struct{ h ManualHandler[In] }

func (m *manualTask[In]) Execute(in Tuple, c Collector) error {
	if in.IsTick() {
		return tick(m.h, in.Value.(Tick), c)
	}
	v, err := inputOf[In](in, c)
	if err != nil {
		return err
	}
	if err := m.h.Execute(v, in, c); err != nil {
		c.Fail(in)
		return err
	}
	return nil
}

// inputOf returns the input's value as the handler's type, or fails the input:
// Build only lets assignable streams in, so this guards other producers (shell).
func inputOf[In any](in Tuple, c Collector) (In, error) {
	v, ok := in.Value.(In)
	if !ok {
		c.Fail(in)
		return v, fmt.Errorf("input of type %T is not %v", in.Value, reflect.TypeFor[In]())
	}
	return v, nil
}

func tick(h any, t Tick, c Collector) error {
	if tk, ok := h.(Ticker); ok {
		return tk.Tick(t, c)
	}
	return nil
}
