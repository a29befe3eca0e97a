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

// Tracks reports whether the tuples a component emits onto edge e join the
// trees of what it is processing: a spout's reliable emits are tracked on
// every edge out of it, as in Storm and FsShelter, and a bolt's emits on its
// anchored edges. It is the one statement of the rule: the runtime's router
// applies it per delivery, and a component served to Storm applies it per
// stream (an emit with a message id or anchors is tracked on every edge of
// its stream in Storm).
func Tracks(e *dsl.Edge) bool { return e.Anchored || e.From.Spout != nil }

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
