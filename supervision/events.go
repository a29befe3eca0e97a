package supervision

import (
	"fmt"
	"time"

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
// the reference message flows name them; see [WithTrace]. It is the runtime's
// own trace record, handed over as is: one struct for both.
//
// Kind is one of: "Activate", "Deactivate", "Stop" (lifecycle, received); "Next" (a
// spout asked for a message); "Emit" (sent: Value, Anchors, Direct); "Tuple" (a
// bolt received Input); "Ok", "Fail" (a bolt acked or failed the input with
// ID); "Ack", "Nack" (a spout heard tree Root's outcome); "Tick" (a timer
// beat); "AckerStep" (an acker applied Op, one of "Track", "Anchor", "Ok" and
// "Fail", to tree Root: Edge, Spout, and XOR and Outcome afterwards, Outcome
// being "", "complete", "failed" or "refused").
//
// Its fields: Component ("__acker" and "__system" for those tasks), Task,
// Out, Kind; Value (Emit: the emitted value); Input (Tuple: the input); ID
// (Ok, Fail: the input's id); Anchors (Emit: the trees the emit joins);
// Direct (Emit: the direct target, 0 for grouped); Root (Ack, Nack,
// AckerStep: the tree); Op, Edge (the edge XORed in or out), Spout (the
// tree's spout task), XOR (the tree's accumulator afterwards) and Outcome
// (AckerStep).
type TraceEvent = trace.Event

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
