// Package component states the contract between the runtime and the
// implementations of spouts and bolts: the tasks that dsl's constructors and the
// multilang adapter build, and the runtime drives. Applications never see it;
// they write dsl handlers and sources.
//
// # The contract
//
// A spec's NewTask (dsl.SpoutSpec, dsl.BoltSpec) returns a [SpoutTask] or a
// [BoltTask]. The runtime calls every method on the task's own goroutine, one at
// a time, so implementations need no locks; a method may block only as long as
// the task may be unresponsive. A panic in any method is recovered by the
// runtime: in a bolt's Execute it fails that input, elsewhere it fails the task
// (under supervision the topology restarts). Optional interfaces ([Opener],
// [Closer], [TaskEmitter], [SpoutTaskEmitter], [DirectSpoutEmitter]) are found
// by type assertion.
package component

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
)

// SpoutEmitter is the runtime side of a spout emit. Emit routes tuple; when
// tracked is true it starts a tuple tree and returns its root, which the task's
// Ack or Nack later receives, or 0 when no subscriber tracks it (the message is
// complete at once). It panics with a *EmitError when tuple cannot be routed.
//
// It is an alias of an unnamed interface so that dsl can implement the contract
// without importing this package.
type SpoutEmitter = interface {
	Emit(tuple any, tracked bool) (root uint64)
}

// SpoutTask is a running spout instance.
type SpoutTask interface {
	// Next asks the source for at most one message, emits it through e and
	// reports whether the source had one.
	Next(e SpoutEmitter) bool
	// Ack reports that the tree with this root was fully processed.
	Ack(root uint64)
	// Nack reports that the tree with this root failed or timed out.
	Nack(root uint64)
	// Abandon is called when the task stops with trees still open (a restart,
	// or a drain that timed out): their outcome will never be known, so the task
	// nacks every pending message to its source.
	Abandon()
}

// BoltTask is a running bolt instance. Execute acks or fails in through c,
// now or later; the runtime fails in when Execute panics. in is valid during
// the call only (the runtime reuses it for the next input): a task that holds
// an input keeps a copy.
type BoltTask interface {
	Execute(in *dsl.Tuple, c dsl.Collector) error
}

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
	Open(e SpoutEmitter)
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

// SpoutTaskEmitter is implemented by the runtime's [SpoutEmitter]: EmitTasks
// is Emit that also appends the ids of the tasks the tuple was sent to.
type SpoutTaskEmitter interface {
	EmitTasks(tuple any, tracked bool, tasks []int) (root uint64, out []int)
}

// DirectSpoutEmitter is implemented by the runtime's [SpoutEmitter]:
// EmitDirect is Emit to task only, on a stream whose subscribers use direct
// grouping (Storm's emitDirect from a spout). It panics with a *EmitError when
// the stream is not direct or task does not subscribe to it.
//
// It is an alias of an unnamed interface so that dsl can use it without
// importing this package.
type DirectSpoutEmitter = interface {
	EmitDirect(task int, tuple any, tracked bool) (root uint64)
}

// Anchors reports whether a bolt's emits, made while it processes an input
// delivered on edge e (or anchored explicitly to such an input), join the
// input's tuple trees: whether e, the edge INTO the bolt, is anchored. It is
// the rule of the reference's routing document ("s1 ==> b1 // Anchored: b1's
// emits are tracked"); the anchoring of the edges OUT of the bolt plays no
// part. A reliable spout's emits are tracked on every edge out of it,
// whatever the edge's anchoring, as in Storm and FsShelter: anchoring is
// about bolts.
//
// It is the one statement of the rule. Both hosts of a bolt apply it through
// [NewAnchoring]: the runtime per input and per anchor, and multilang.Serve
// per input it gets from Storm. dsl's Build cannot import this package and
// follows the same rule where it rejects Terminators on tracked edges.
func Anchors(e *dsl.Edge) bool { return e.Anchored }

// Anchoring is one bolt's table of [Anchors], by the sending component and
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
		if e.To == bolt && Anchors(e) {
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
// whether an emit anchored to in joins in's trees ([Anchors] applied to the
// edge in came in on). The Collectors apply it to every anchor they are given;
// dsl's windows ask it of each input they hold when they build the one anchor
// that stands for a whole window, so that anchor covers only the inputs whose
// edges are anchored (each input judged by its own edge).
//
// It is an alias of an unnamed interface so that dsl can use it without
// importing this package.
type Joiner = interface {
	Joins(in *dsl.Tuple) bool
}

// EmitError reports an emit the topology cannot route. Emitters panic with it;
// the runtime recovers it at the user-code boundary.
type EmitError struct {
	Component string
	Stream    string // the tuple's Go type or stream name
	Task      int    // the direct target, if any
	Reason    string
}

func (e *EmitError) Error() string {
	return fmt.Sprintf("component %q cannot emit %s: %s", e.Component, e.Stream, e.Reason)
}

// StateTask is implemented by the bolt tasks of dsl.Stateful. The runtime
// calls RestoreState for every key of the task's state in the last committed
// checkpoint before the first input, and SnapshotState at each checkpoint's
// barrier: put gets every key changed since the last snapshot (a nil value
// for a deleted key) and may not keep the slices past the call; size is the
// bytes handed. An error fails the task.
type StateTask interface {
	RestoreState(key, value []byte) error
	SnapshotState(put func(key, value []byte)) (size int, err error)
}

// PositionedSpout is implemented by dsl's reliable spout tasks. ok reports
// whether the source has positions (the optional hooks Position and Rewind):
// a checkpoint stores SourcePosition's result, taken between two Next calls,
// and a restart calls RewindSource with the committed one before the first
// Next, after which the source replays from there.
type PositionedSpout interface {
	SourcePosition() (position []byte, ok bool)
	RewindSource(position []byte) error
}
