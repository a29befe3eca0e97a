package actors

import (
	"fmt"

	"github.com/goshelter/goshelter/acker"
	"go.uber.org/zap"
)

// Event is one message a task received (Out false) or sent (Out true), for
// tracing, debug logs and specs. Msg is a protocol type (protocol.Next,
// protocol.Emit, protocol.Ok, ...) or an [AckerStep].
type Event struct {
	Component string // "__acker" and "__system" for those tasks
	Task      int
	Out       bool
	Msg       any
}

func (e Event) String() string {
	dir := "<-"
	if e.Out {
		dir = "->"
	}
	return fmt.Sprintf("%s#%d %s %#v", e.Component, e.Task, dir, e.Msg)
}

// AckerStep is an acker message as applied: Value is the tree's XOR accumulator
// afterwards, Outcome what the acker decided.
type AckerStep struct {
	Op      acker.Op
	Value   uint64
	Outcome acker.Outcome
}

// tracer sends events to the configured trace function and, in debug mode, to the
// task's logger. Its zero value traces nothing.
type tracer struct {
	component string
	task      int
	fn        func(Event)
	log       *zap.Logger // nil unless topology.debug
}

func (t *tracer) on() bool { return t.fn != nil || t.log != nil }

func (t *tracer) emit(out bool, msg any) {
	e := Event{Component: t.component, Task: t.task, Out: out, Msg: msg}
	if t.fn != nil {
		t.fn(e)
	}
	if t.log != nil {
		// Info, not Debug: topology.debug is the switch, as in Storm, so the trace
		// shows with a production logger too.
		t.log.Info("message", zap.Bool("out", out), zap.String("msg", fmt.Sprintf("%#v", msg)))
	}
}

// in and out cost a nil check when tracing is off; callers that would build a
// message with fields (and so allocate) check on() first.
func (t *tracer) in(msg any) {
	if t.on() {
		t.emit(false, msg)
	}
}

func (t *tracer) out(msg any) {
	if t.on() {
		t.emit(true, msg)
	}
}
