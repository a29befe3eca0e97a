package multilang

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// The errors a shell component's task fails with, for errors.Is. The error
// itself names the component, the task, the command and the pid, and says how
// the process ended and what it last wrote to stderr; these values are what a
// program may want to act on.
var (
	// ErrChildFailed is wrapped by every error of a child process that failed
	// its task: it exited or closed its stdout, broke the protocol, answered
	// the handshake wrongly, or stayed silent too long (then ErrTimeout too).
	// A task that stops its child itself reports no error.
	ErrChildFailed = errors.New("multilang: shell child failed")
	// ErrTimeout is wrapped, with ErrChildFailed, when the child stayed silent
	// (a bolt's) or did not sync (a spout's) for longer than
	// topology.subprocess.timeout.secs: raising that conf key is the remedy
	// when the child is only slow.
	ErrTimeout = errors.New("multilang: child timed out")
)

// Causes of a child failure that callers tell apart by the message only.
var (
	errExited    = errors.New("multilang: child exited")
	errHandshake = errors.New("multilang: bad handshake")
	// errReaderStopped ends the reader when the child was stopped while the
	// reader waited for the task (it is never the first cause of a failure).
	errReaderStopped = errors.New("multilang: stopped while waiting for the task")
)

// protocolError reports bad input: a message that is not valid multilang, or a
// valid one that makes no sense here. It names the component, the task and the
// offending data, which is what a child's author needs to find the bug.
type protocolError struct {
	component string
	task      int
	data      []byte // the offending message (shortened in Error)
	err       error
}

func (e *protocolError) Error() string {
	return fmt.Sprintf("multilang: component %q task %d: bad input %s: %v", e.component, e.task, wire.Preview(e.data), e.err)
}

func (e *protocolError) Unwrap() error { return e.err }

// childError reports a shell component's child process that failed its task.
// It wraps both ErrChildFailed and the cause.
type childError struct {
	component string
	task      int
	command   string // the command line, for the reader
	pid       int
	exit      string // how the process ended, e.g. "exit status 3" or "signal: killed"
	stderr    string // the last lines the child wrote to stderr
	err       error
}

func (e *childError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "multilang: component %q task %d: child %q (pid %d) failed: %v", e.component, e.task, e.command, e.pid, e.err)
	if e.exit != "" {
		fmt.Fprintf(&b, "; process: %s", e.exit)
	}
	if e.stderr != "" {
		fmt.Fprintf(&b, "; stderr ends: %q", e.stderr)
	}
	return b.String()
}

func (e *childError) Unwrap() []error { return []error{ErrChildFailed, e.err} }
