package actors

import (
	"fmt"

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

// in records a received message of kind with no fields.
func (t *tracer) in(kind string) {
	if t.on() {
		t.record(trace.Event{Kind: kind})
	}
}
