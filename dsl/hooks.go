package dsl

// Optional interfaces for components that live partly outside the runtime, such as
// multilang shell components whose work happens in a child process. The runtime
// checks for them with type assertions; ordinary components need none of them.

// TaskEmitter is implemented by the runtime's bolt [Collector]. EmitTasks emits
// tuple anchored to anchors, to task direct (0 means by the groupings), and returns
// tasks with the id of every task the tuple was sent to appended: Storm's emit
// return value, which multilang children may ask for. It panics with an
// *EmitError as Emit does, and is only valid on the task's goroutine.
type TaskEmitter interface {
	EmitTasks(anchors []Tuple, direct int, tuple any, tasks []int) []int
}

// SpoutTaskEmitter is implemented by the runtime's [SpoutEmitter]: EmitTasks is
// Emit that also appends the ids of the tasks the tuple was sent to to tasks.
type SpoutTaskEmitter interface {
	EmitTasks(tuple any, tracked bool, tasks []int) (root uint64, out []int)
}

// SpoutOpener is implemented by spout tasks that emit outside Next (a shell
// spout's child may emit while it handles activate, ack or fail). The runtime calls
// Open once, on the task's goroutine, after NewTask and before Activate; e stays
// valid for the task's life but only on the task's goroutine.
type SpoutOpener interface {
	Open(e SpoutEmitter)
}

// Closer is implemented by spout and bolt tasks that hold resources the runtime
// does not own (a child process). The runtime calls Close once, on the task's
// goroutine, when the task stops for any reason (stop, restart, failure). Close
// may block for a bounded time (a child's grace period); its error is logged.
type Closer interface {
	Close() error
}
