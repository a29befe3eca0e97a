package actors

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/trace"
	"go.uber.org/zap"
)

// Where tick and lifecycle tuples come from, as in Storm.
const (
	systemComponent = "__system"
	systemTaskID    = -1
	ackerComponent  = "__acker"
)

// tracer sends events to the configured trace function and, in debug mode, to the
// task's logger. Its zero value traces nothing.
type tracer struct {
	component string
	task      int
	fn        func(trace.Event)
	log       *zap.Logger // nil unless topology.debug
}

// on reports whether tracing is on; callers that would build an event with
// fields (and so allocate) check it first, so tracing costs a nil check when off.
func (t *tracer) on() bool { return t.fn != nil || t.log != nil }

// record sends e, filling in the task.
func (t *tracer) record(e trace.Event) {
	e.Component, e.Task = t.component, t.task
	if t.fn != nil {
		t.fn(e)
	}
	if t.log != nil {
		// Info, not Debug: topology.debug is the switch, as in Storm, so the trace
		// shows with a production logger too.
		t.log.Info("message", zap.Bool("out", e.Out), zap.String("kind", e.Kind), zap.String("msg", fmt.Sprintf("%+v", e)))
	}
}

// The helpers below build their event in a frame of their own and are never
// inlined: a trace.Event literal in a per-tuple function would give every call
// of it a frame of several hundred bytes, tracing on or off.

// input records a tuple received.
//
//go:noinline
func (t *tracer) input(in *dsl.Tuple) { t.record(trace.Event{Kind: "Tuple", Input: *in}) }

// emit records a tuple emitted.
//
//go:noinline
func (t *tracer) emit(value any, anchors []dsl.TupleID, direct int) {
	t.record(trace.Event{Out: true, Kind: "Emit", Value: value, Anchors: anchors, Direct: direct})
}

// settle records an input's Ok or Fail.
//
//go:noinline
func (t *tracer) settle(kind string, id dsl.TupleID) {
	t.record(trace.Event{Out: true, Kind: kind, ID: id})
}

// outcome records a tree's Ack or Nack reaching its spout.
//
//go:noinline
func (t *tracer) outcome(kind string, root uint64) { t.record(trace.Event{Kind: kind, Root: root}) }

// in records a received message of kind with no fields.
func (t *tracer) in(kind string) {
	if t.on() {
		t.record(trace.Event{Kind: kind})
	}
}
