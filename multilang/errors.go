package multilang

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel causes of a [ChildError], for errors.Is.
var (
	// ErrTimeout: the child was silent longer than topology.subprocess.timeout.secs.
	ErrTimeout = errors.New("multilang: child timed out")
	// ErrExited: the child exited, or closed its stdout, while its task was running.
	ErrExited = errors.New("multilang: child exited")
	// ErrHandshake: the child's answer to the handshake was wrong (no pid, no pid file).
	ErrHandshake = errors.New("multilang: bad handshake")
)

// ProtocolError reports bad input: a message that is not valid multilang, or a
// valid one that makes no sense here. It names the component, the task and the
// offending data.
type ProtocolError struct {
	Component string
	Task      int
	Data      []byte // the offending message (shortened in Error)
	Err       error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("multilang: component %q task %d: bad input %s: %v", e.Component, e.Task, Preview(e.Data), e.Err)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// ChildError reports a shell component's child process that failed its task:
// it exited, hung, or broke the protocol. Err is the cause.
type ChildError struct {
	Component string
	Task      int
	Command   string // the command line, for the reader
	Pid       int
	Exit      string // how the process ended, e.g. "exit status 3" or "signal: killed"
	Stderr    string // the last lines the child wrote to stderr
	Err       error
}

func (e *ChildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "multilang: component %q task %d: child %q (pid %d) failed: %v", e.Component, e.Task, e.Command, e.Pid, e.Err)
	if e.Exit != "" {
		fmt.Fprintf(&b, "; process: %s", e.Exit)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; stderr ends: %q", e.Stderr)
	}
	return b.String()
}

func (e *ChildError) Unwrap() error { return e.Err }
