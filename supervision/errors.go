package supervision

import (
	"errors"
	"fmt"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/state"
)

// ErrGaveUp is wrapped by Wait's error when the host stopped restarting.
var ErrGaveUp = errors.New("supervision: gave up restarting the topology")

// ErrStopped is returned by Stop when the topology had already stopped.
var ErrStopped = errors.New("supervision: topology already stopped")

// ErrStopping is returned by Stop called from inside the topology (a
// component's code, a WithEvents callback): the stop has started and goes on
// after that code returns; Done closes when it is over.
var ErrStopping = errors.New("supervision: stop started from inside the topology; it completes asynchronously")

// ErrNoStore is wrapped by Run's error when the topology has stateful bolts
// (dsl.Stateful) and no [WithStore]: their state would have nowhere to be
// checkpointed.
var ErrNoStore = errors.New("supervision: a topology with stateful bolts needs a store to checkpoint to (supervision.WithStore)")

// ErrStuck is the Err of a [TaskError] for a task that did not stop within the
// grace period of a stop or a restart: it is still running user code (a Next,
// an Execute, a hook that blocks), and Go cannot stop a goroutine from
// outside, so the task is abandoned. Stop's and Wait's errors wrap one such
// TaskError per stuck task.
var ErrStuck = errors.New("supervision: still running user code after the grace period; it cannot be stopped, only abandoned")

// TaskError reports a task that failed: a spout whose Next, Ack or Nack
// panicked, a component that called TaskInfo.Fail, a shell child that died.
// Stack is the stack of the panic, when the task panicked.
type TaskError struct {
	Topology  string
	Component string
	Task      int
	Err       error
	Stack     []byte
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("topology %q: task %d of %q failed: %v", e.Topology, e.Task, e.Component, e.Err)
}

// Unwrap returns the task's error (for a panic with an error value, that value
// is reachable through it too).
func (e *TaskError) Unwrap() error { return e.Err }

// stuckTask is the TaskError of a task that a stop abandoned: actors reports
// such tasks only, so the host names the cause users test for.
func stuckTask(topology string, f actors.Failure) *TaskError {
	return &TaskError{Topology: topology, Component: f.Component, Task: f.Task, Err: ErrStuck}
}

func taskError(topology string, f actors.Failure) *TaskError {
	return &TaskError{Topology: topology, Component: f.Component, Task: f.Task, Err: f.Err, Stack: f.Stack}
}

// fatal reports a failure that a restart cannot mend: the store diverged
// from what this process committed (state.ErrDiverged), so a new incarnation
// would restore from checkpoints the process knows are gone. The topology
// stops with a GaveUp event instead of restarting from nothing.
func fatal(err error) bool { return errors.Is(err, state.ErrDiverged) }
