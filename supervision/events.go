package supervision

import (
	"fmt"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/trace"
)

// EventKind says what happened to a running topology.
type EventKind int

// Lifecycle events.
const (
	Started    EventKind = iota + 1 // an incarnation is active
	Failed                          // a task failed (Err is a *TaskError)
	Restarting                      // a new incarnation follows after Delay (Attempt counts from 1)
	GaveUp                          // too many restarts, or restarts are off: the topology is down (Err)
	Stopped                         // Stop finished, or Run's ctx ended
)

var eventNames = map[EventKind]string{
	Started: "started", Failed: "failed", Restarting: "restarting", GaveUp: "gave up", Stopped: "stopped",
}

func (k EventKind) String() string {
	if n, ok := eventNames[k]; ok {
		return n
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is a lifecycle event of a running topology.
type Event struct {
	Time        time.Time // when it happened (wall clock)
	Kind        EventKind
	Incarnation int
	Attempt     int
	Delay       time.Duration
	Err         error
}

// TraceEvent is one message a task received (Out false) or sent (Out true), as
// the reference message flows name them; see [WithTrace].
//
// Kind is one of: "Activate", "Deactivate", "Stop" (lifecycle, received); "Next" (a
// spout asked for a message); "Emit" (sent: Value, Anchors, Direct); "Tuple" (a
// bolt received Input); "Ok", "Fail" (a bolt acked or failed the input with
// ID); "Ack", "Nack" (a spout heard tree Root's outcome); "Tick" (a timer
// beat); "AckerStep" (an acker applied Op, one of "Track", "Anchor", "Ok" and
// "Fail", to tree Root: Edge, Spout, and XOR and Outcome afterwards, Outcome
// being "", "complete", "failed" or "refused").
type TraceEvent struct {
	Component string // "__acker" and "__system" for those tasks
	Task      int
	Out       bool
	Kind      string
	Value     any           // Emit: the emitted value
	Input     dsl.Tuple     // Tuple: the input
	ID        dsl.TupleID   // Ok, Fail: the input's id
	Anchors   []dsl.TupleID // Emit: the trees the emit joins
	Direct    int           // Emit: the direct target, 0 for grouped
	Root      uint64        // Ack, Nack, AckerStep: the tree
	Op        string        // AckerStep
	Edge      uint64        // AckerStep: the edge XORed in or out
	Spout     int           // AckerStep: the tree's spout task
	XOR       uint64        // AckerStep: the tree's accumulator afterwards
	Outcome   string        // AckerStep
}

// traceFunc adapts fn to the runtime's trace (the two structs are one shape).
func traceFunc(fn func(TraceEvent)) func(trace.Event) {
	if fn == nil {
		return nil
	}
	return func(e trace.Event) { fn(TraceEvent(e)) }
}

// backoff returns the wait before restart attempt n (n >= 1): min(base·2^n, cap).
func backoff(base, cap time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n; i++ {
		if d >= cap || d > (1<<62)/2 {
			return cap
		}
		d *= 2
	}
	return min(d, cap)
}
