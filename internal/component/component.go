// Package component states the runtime's half of the contract between the
// runtime and the tasks of spouts and bolts: the tasks that package
// internal/task builds from dsl's specs, and those adapters such as multilang
// make, which the runtime drives. Applications never see it; they write dsl
// handlers and sources.
//
// # The contract
//
// A task is a dsl.SpoutTask or a dsl.BoltTask: dsl names the contract
// because its specs' NewTask returns one; this package adds what only the
// runtime and the task implementations share. The runtime calls
// every method on the task's own goroutine, one at a time, so implementations
// need no locks; a method may block only as long as the task may be
// unresponsive. A panic in any method is recovered by the runtime: in a bolt's
// Execute it fails that input, elsewhere it fails the task (under supervision
// the topology restarts). Optional interfaces ([Opener], [Closer],
// [TaskEmitter], [SpoutTaskEmitter], [DirectSpoutEmitter]) are found by type
// assertion.
package component

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
)

// AutoAcker is a BoltTask that can leave the final ack of an input to its
// caller: ExecuteAuto does what Execute does, except that where Execute would
// end by acking in, it returns ack = true and the caller acks in itself. The
// runtime calls it instead of Execute, acking in place: no interface call and
// no copy of the input per tuple on the auto-ack path. Fails (an error, a
// terminator) still go through c.
type AutoAcker interface {
	ExecuteAuto(in *dsl.Tuple, c dsl.Collector) (ack bool, err error)
}

// Opener is implemented by spout tasks that emit outside Next (a shell spout's
// child may emit while it handles activate, ack or fail). The runtime calls
// Open once, after NewTask and before activation; e stays valid for the task's
// life, on the task's goroutine only.
type Opener interface {
	Open(e dsl.SpoutEmitter)
}

// Activator is implemented by tasks that want to know when they are activated
// and deactivated (dsl's reliable spouts forward it to their Source).
type Activator interface {
	Activate()
	Deactivate()
}

// Closer is implemented by tasks that hold resources the runtime does not own
// (a child process). The runtime calls Close once when the task stops for any
// reason; it may block for a bounded time, and its error is logged.
type Closer interface {
	Close() error
}

// TaskEmitter is implemented by the runtime's bolt Collector. EmitTasks emits
// tuple anchored to anchors, to task direct (0: by the groupings), and returns
// tasks with the id of every task the tuple was sent to appended (Storm's emit
// return value). It panics with a *EmitError as Emit does.
type TaskEmitter interface {
	EmitTasks(anchors []dsl.Tuple, direct int, tuple any, tasks []int) []int
}

// SpoutTaskEmitter is implemented by the runtime's dsl.SpoutEmitter: EmitTasks
// is Emit that also appends the ids of the tasks the tuple was sent to.
type SpoutTaskEmitter interface {
	EmitTasks(tuple any, tracked bool, tasks []int) (root uint64, out []int)
}

// DirectSpoutEmitter is implemented by the runtime's dsl.SpoutEmitter:
// EmitDirect is Emit to task only, on a stream whose subscribers use direct
// grouping (Storm's emitDirect from a spout). An emit on a stream that is not
// direct, or to a task that does not subscribe, fails as Emit's does.
type DirectSpoutEmitter interface {
	EmitDirect(task int, tuple any, tracked bool) (root uint64)
}

// Anchoring is one bolt's table of which input edges anchor (the rule is
// stated once, on dsl.Edge.Anchored), by the sending component and
// the stream of its input edges, built once per task so that the per-tuple
// path only indexes a slice. The zero value anchors nothing.
type Anchoring struct {
	streams  int
	anchored []bool // by sending component's Index * streams + Stream.Index
}

// NewAnchoring returns the table of bolt's input edges in t.
func NewAnchoring(t *dsl.Topology, bolt *dsl.Component) Anchoring {
	a := Anchoring{streams: len(t.Streams), anchored: make([]bool, len(t.Components)*len(t.Streams))}
	for _, e := range t.Edges {
		if e.To == bolt && e.Anchored {
			a.anchored[e.From.Index*a.streams+e.Stream.Index] = true
		}
	}
	return a
}

// Joins reports whether an emit anchored to an input sent by the component
// of index source on stream joins the input's trees. An input that came on no
// edge of the bolt (a tick, a tuple the host never delivered) joins nothing.
func (a Anchoring) Joins(source int, stream *dsl.Stream) bool {
	if stream == nil || source < 0 || stream.Index >= a.streams {
		return false
	}
	i := source*a.streams + stream.Index
	return i < len(a.anchored) && a.anchored[i]
}

// Joiner is implemented by the Collectors of both hosts: Joins reports
// whether an emit anchored to in joins in's trees (whether the edge in came
// in on is anchored: dsl.Edge.Anchored). The Collectors apply it to every
// anchor they are given; internal/task's windows ask it of each input they
// hold when they build the one anchor that stands for a whole window, so that
// anchor covers only the inputs whose edges are anchored (each input judged
// by its own edge).
type Joiner interface {
	Joins(in *dsl.Tuple) bool
}

// EmitError reports an emit the topology cannot route. A bolt's emitters panic
// with it and the host recovers it where it called the bolt, failing the
// input; a spout's emitters hand it to the host, which logs it and fails the
// message (see dsl.SpoutEmitter). The reasons are stated once, in emitcheck.go.
type EmitError struct {
	Component string
	Stream    string // the tuple's Go type or stream name
	Task      int    // the direct target, if any
	Reason    string
}

func (e *EmitError) Error() string {
	return fmt.Sprintf("component %q cannot emit %s: %s", e.Component, e.Stream, e.Reason)
}

// StateTask is implemented by the bolt tasks of dsl.Stateful (built by
// internal/task). The runtime
// calls RestoreState for every key of the task's state in the last committed
// checkpoint before the first input, and SnapshotState at each checkpoint's
// barrier: put gets every key changed since the last snapshot (a nil value
// for a deleted key) and may not keep the slices past the call; size is the
// bytes handed. An error fails the task.
type StateTask interface {
	RestoreState(key, value []byte) error
	SnapshotState(put func(key, value []byte)) (size int, err error)
}

// PositionedSpout is implemented by the reliable spout tasks internal/task
// builds. ok reports
// whether the source has positions (the optional hooks Position and Rewind):
// a checkpoint stores SourcePosition's result, taken between two Next calls,
// and a restart calls RewindSource with the committed one before the first
// Next, after which the source replays from there.
type PositionedSpout interface {
	Positioned() bool
	SourcePosition() (position []byte, ok bool)
	RewindSource(position []byte) error
}

// TwoPhase is the two-phase commit hooks of a bolt's handler (a sink that
// commits its output with the checkpoints: see the dsl package doc).
type TwoPhase interface {
	RecoverCheckpoint(prepared []byte) error
	PrepareCheckpoint(id uint64) ([]byte, error)
	CommitCheckpoint(id uint64) error
}

// TwoPhaser is implemented by the bolt tasks internal/task builds: it returns
// the handler's two-phase hooks, or nil when it has none.
type TwoPhaser interface {
	TwoPhase() TwoPhase
}
