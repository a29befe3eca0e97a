package dsl

import (
	"reflect"

	"go.uber.org/zap"
)

// TupleID is a tuple's place in the tuple trees that track it. A zero Edge means
// the tuple is not tracked. Root is the tree's id; Roots lists further trees when
// the tuple was anchored to inputs of several trees (Storm's multi-anchoring).
type TupleID struct {
	Root  uint64
	Edge  uint64
	Roots []uint64
}

// Tracked reports whether the tuple belongs to at least one tuple tree.
func (id TupleID) Tracked() bool { return id.Edge != 0 }

// Tuple is an input as a bolt receives it. Value is immutable once emitted: the
// same value may be delivered to several tasks (All grouping), so no one may change it.
type Tuple struct {
	Value  any
	Stream *Stream // nil for tick and activation tuples
	Source string  // emitting component id, "__system" for ticks
	Task   int     // emitting task id, -1 for ticks
	ID     TupleID
}

// SystemComponent and TickStream name where tick tuples come from, as in Storm.
const (
	SystemComponent = "__system"
	TickStream      = "__tick"
	SystemTask      = -1
)

// Tick is the value of a tick tuple; RateSecs is the bolt's tick frequency.
type Tick struct {
	RateSecs int `storm:"rate_secs"`
}

// Ticks is the stream tick tuples arrive on: Storm's "__tick", with one field,
// rate_secs. It is not one of a topology's streams (its Index is -1).
var Ticks = &Stream{Index: -1, Name: TickStream, Type: reflect.TypeFor[Tick](), Fields: []string{"rate_secs"}}

// IsTick reports whether t is a tick tuple.
func (t Tuple) IsTick() bool { return t.Stream == Ticks }

// Emitter sends tuples from a bolt. Emit anchors the tuple to the input being
// executed on anchored edges. Both panic with an *EmitError when the tuple's type is
// not a stream of the topology or the task is not a direct subscriber; the runtime
// recovers that panic at the user-code boundary and fails the input.
// An Emitter is only valid on the task's goroutine, during the call that got it.
type Emitter interface {
	Emit(tuple any)
	EmitDirect(task int, tuple any)
}

// Collector is the full bolt output: emits with explicit anchors and explicit acks,
// for bolts that complete inputs later (aggregations, joins, batching).
// Every tracked input must be acked or failed exactly once.
type Collector interface {
	Emitter
	// EmitAnchored emits tuple anchored to every input in anchors.
	EmitAnchored(anchors []Tuple, tuple any)
	// Ack completes the input's edge of its tuple trees.
	Ack(input Tuple)
	// Fail fails the input's tuple trees at once.
	Fail(input Tuple)
}

// TaskInfo describes the task a component instance runs as.
type TaskInfo struct {
	Topology    string
	Component   string
	Task        int // topology-wide task id
	Index       int // 0..Parallelism-1 within the component
	Parallelism int
	Settings    Settings
	Conf        Conf // the merged raw conf, including keys goshelter does not know
	Logger      *zap.Logger
	// Post runs fn later on the task's own goroutine, between inputs, with the
	// task's Collector (nil for spouts). Components that hear from outside the
	// runtime (a shell child's output) use it to emit, ack and fail safely.
	// It never blocks.
	Post func(fn func(c Collector))
	// Fail fails the task with err, as a panic in Next would: under supervision
	// the topology restarts. It never blocks.
	Fail func(err error)
	// Model is the validated topology the task belongs to (read-only). Shell
	// components read it to describe the topology to their child process.
	Model *Topology
	// Metric records the latest value a component reports under name (Storm's
	// multilang "metrics" command); it shows in the task's stats. It never blocks.
	Metric func(name string, value any)
}

// EmitError reports an emit the topology cannot route.
type EmitError struct {
	Component string
	Stream    string // the tuple's Go type or stream name
	Task      int    // the direct target, if any
	Reason    string
}

func (e *EmitError) Error() string {
	return "dsl: component " + quote(e.Component) + " cannot emit " + e.Stream + ": " + e.Reason
}

func quote(s string) string { return "\"" + s + "\"" }
