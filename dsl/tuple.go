package dsl

import (
	"context"
	"time"

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

// Tuple is an input as a bolt receives it. Value is immutable once emitted: the
// same value may be delivered to several tasks (All grouping), so no one may change it.
type Tuple struct {
	Value  any
	Stream *Stream // nil for tick and activation tuples
	Source string  // emitting component id, "__system" for ticks
	Task   int     // emitting task id, -1 for ticks
	ID     TupleID
}

// Tick is the value of a tick tuple, as Storm sends it: from component "__system",
// task -1, on stream "__tick" (Tuple.Stream is nil). RateSecs is the bolt's tick
// frequency in whole seconds, at least 1 (Storm's field is an integer); Period is
// the exact frequency, for sub-second settings.
type Tick struct {
	RateSecs int `storm:"rate_secs"`
	Period   time.Duration
	// Time is the runtime clock's reading when the tick was handed to the
	// task: the injected clock under test, so time-driven components (windows)
	// follow it without a clock of their own.
	Time time.Time
}

// IsTick reports whether t is a tick tuple.
func (t Tuple) IsTick() bool {
	if t.Stream != nil { // every data tuple: one compare, no type assertion
		return false
	}
	_, ok := t.Value.(Tick)
	return ok
}

// Emitter sends tuples from a bolt. Emit anchors the tuple to the input being
// executed when that input came in on an anchored edge (see "Anchoring" in
// the package doc), on every edge out of the bolt.
//
// A tuple the topology cannot route is a failed emit: its type is not a
// stream of the topology, EmitDirect names a task that does not subscribe or
// a stream whose subscribers do not use [Direct] grouping, or Emit names no
// task on a stream whose subscribers do. A failed emit does not return: it
// panics with an error naming the component, the stream and the reason, and
// the host recovers it where it called the bolt, as any panic of the bolt's
// code, failing the input being executed; tuples emitted before stay
// emitted, the error is logged (and sent to Storm as an "error" command under
// multilang.Serve), and the bolt goes on with its next input. Every host
// does the same. A spout's failed emit fails its message the same way (see
// [Source]).
//
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
	// EmitAnchored emits tuple anchored to every input in anchors that came
	// in on an anchored edge (each judged by its own edge; see "Anchoring"
	// in the package doc).
	EmitAnchored(anchors []Tuple, tuple any)
	// EmitDirectAnchored emits tuple to task, anchored as EmitAnchored
	// anchors it (Storm's emitDirect with anchors).
	EmitDirectAnchored(task int, anchors []Tuple, tuple any)
	// Ack completes the input's edge of its tuple trees.
	Ack(input Tuple)
	// Fail fails the input's tuple trees at once.
	Fail(input Tuple)
}

// TaskInfo describes the task a component instance runs as. The runtime passes
// it to the functions that create per-task state (ReliableFrom, AutoAckFrom,
// Manual, ...), on the task's goroutine.
type TaskInfo struct {
	Topology    string
	Component   string
	Task        int // topology-wide task id; see [Component] for the numbering
	Index       int // 0..Parallelism-1 within the component
	Parallelism int
	Settings    Settings
	Conf        Conf // the merged raw conf, including keys goshelter does not know
	// Logger logs with the topology, component and task as fields.
	Logger *zap.Logger
	// Model is the validated topology the task belongs to (read-only): Storm's
	// TopologyContext. Model.Component(id).Tasks are a component's task ids, as
	// Storm's getComponentTasks, for direct grouping.
	Model *Topology
	// Post runs fn later on the task's own goroutine, between inputs, with the
	// task's Collector (nil for spouts). Components that hear from outside the
	// runtime (a goroutine doing I/O, a shell child's output) use it to emit, ack
	// and fail safely. It never blocks; after the task stopped, fn is dropped.
	Post func(fn func(c Collector))
	// Fail fails the task with err, as a panic in Next would: under supervision
	// the topology restarts. It never blocks.
	Fail func(err error)
	// Metric records the latest value a component reports under name (Storm's
	// multilang "metrics" command); it shows in the task's stats. It never blocks.
	Metric func(name string, value any)
	// Now reads the clock the topology runs on: the wall clock, or a test's
	// manual clock (sheltertest.Clock) given to supervision.Run. Components
	// that time things read it, so tests can move their time. Nil outside the
	// runtime (a TaskInfo made by hand) means time.Now.
	Now func() time.Time
	// Checkpointed tells a task that it takes part in the checkpoints of a
	// topology with state (see docs/STATE.md): a spout's source position is
	// stored with each checkpoint and the source is rewound to it at a
	// restart (false for a spout declared with [OutsideCheckpoint]); a bolt's
	// two-phase hooks (RecoverCheckpoint, PrepareCheckpoint,
	// CommitCheckpoint) are called. A connector reads it to choose its
	// exactly-once mode.
	Checkpointed bool

	ctx context.Context
}

// Context returns a context that ends when the task is deactivated or stopped,
// or when its start is interrupted (Run's ctx ended first: then with that
// ctx's cause), for components doing I/O (a bolt calling a service, a source
// waiting for data). Under multilang.Serve it ends when Serve returns. It is
// never nil.
func (ti TaskInfo) Context() context.Context {
	if ti.ctx == nil {
		return context.Background()
	}
	return ti.ctx
}

// WithContext returns a copy of ti whose Context is ctx. The runtime uses it;
// tests that call a component's constructor directly may too.
func (ti TaskInfo) WithContext(ctx context.Context) TaskInfo {
	ti.ctx = ctx
	return ti
}
