package supervision

import (
	"fmt"
	"time"
)

// EventKind says what happened to a running topology.
type EventKind int

// Lifecycle events.
const (
	Started    EventKind = iota + 1 // an incarnation is active
	Failed                          // a task failed (Err)
	Restarting                      // a new incarnation follows after Delay (Attempt counts from 1)
	GaveUp                          // too many restarts, or restarts are off: the topology is down (Err)
	Stopped                         // Stop finished
)

func (k EventKind) String() string {
	switch k {
	case Started:
		return "started"
	case Failed:
		return "failed"
	case Restarting:
		return "restarting"
	case GaveUp:
		return "gave up"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is a lifecycle event of a running topology.
type Event struct {
	Kind        EventKind
	Incarnation int
	Attempt     int
	Delay       time.Duration
	Err         error
}

func (e Event) String() string {
	s := fmt.Sprintf("%v incarnation=%d", e.Kind, e.Incarnation)
	if e.Kind == Restarting {
		s += fmt.Sprintf(" attempt=%d delay=%v", e.Attempt, e.Delay)
	}
	if e.Err != nil {
		s += fmt.Sprintf(" err=%v", e.Err)
	}
	return s
}

// Backoff returns the wait before restart attempt n (n >= 1): min(base·2^n, cap).
func Backoff(base, cap time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n; i++ {
		if d >= cap || d > (1<<62)/2 {
			return cap
		}
		d *= 2
	}
	return min(d, cap)
}
