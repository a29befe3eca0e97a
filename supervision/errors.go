package supervision

import (
	"errors"
	"fmt"

	"github.com/goshelter/goshelter/actors"
)

// ErrGaveUp is wrapped by Wait's error when the host stopped restarting.
var ErrGaveUp = errors.New("supervision: gave up restarting the topology")

// ErrStopped is returned by Stop when the topology had already stopped.
var ErrStopped = errors.New("supervision: topology already stopped")

// ErrStopping is returned by Stop called from inside the topology (a
// component's code, a WithEvents callback): the stop has started and goes on
// after that code returns; Done closes when it is over.
var ErrStopping = errors.New("supervision: stop started from inside the topology; it completes asynchronously")

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

func taskError(topology string, f actors.Failure) *TaskError {
	return &TaskError{Topology: topology, Component: f.Component, Task: f.Task, Err: f.Err, Stack: f.Stack}
}
