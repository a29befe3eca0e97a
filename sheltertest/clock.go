package sheltertest

import (
	"time"

	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/hooks"
	"github.com/goshelter/goshelter/supervision"
)

// Clock is a clock that moves only when told to. Everything the runtime times
// reads it once it is given to Run (see [Clock.Option]): tuple timeouts, spout
// waits, tick tuples, processing-time windows, restart back-off and stable
// periods, so a 30-second timeout runs in microseconds. Components read it as
// dsl.TaskInfo.Now. Durations the runtime measures (latencies) stay
// wall-clock time, and so does the batch flush interval: it bounds how long a
// tuple waits to leave its task, so tuples flow whether or not the clock moves.
// It is safe for concurrent use.
type Clock struct{ m *clock.Manual }

// NewClock returns a manual clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{m: clock.NewManual(start)} }

// Option is the supervision.Option that makes a topology run on c.
func (c *Clock) Option() supervision.Option {
	return hooks.WithClock(c.m).(supervision.Option)
}

// Advance moves the clock forward by d, running every callback that falls due,
// in deadline order, on the caller's goroutine, and waits for the topologies
// running on c: before the first callback, until every task has handled what
// was queued to it (a tracked tree on its way to its acker, an input in a
// mailbox, tuples waiting in a batch); after each callback, until the tasks
// have handled what it made due (the ackers' rotation, tick tuples, window
// ends, a spout's back-off) and the outcomes have reached the sources. So when
// Advance(45 * time.Second) returns, every tree open before it has been nacked
// to its source. A repeating timer runs once however many periods d spans, as
// a time.Ticker gives a slow receiver one tick, but every beat still counts:
// Advance(time.Hour) sends each ticked bolt one tick tuple, expires what an
// hour of rotations would, and costs about as much as Advance(time.Second):
// a timer armed by what an Advance ran (a spout's back-off, re-armed after
// each empty Next) runs in the next Advance, not again in the same one.
//
// Advance waits for no task when it is called from inside one (a bolt's
// Execute or Tick, a spout's Next): that task cannot go on while it waits, and
// the others may be waiting for it. It only runs the callbacks then. For the
// same reason, do not call it from a goroutine a task waits for. A bolt busy
// in user code (an Execute waiting for the test) holds Advance until it
// returns. A spout's Next does not: a source may wait there for data, so
// Advance waits only for what the spout emitted before it, and for the Next
// to return when acks or nacks wait for the spout, unless it is seen blocked.
// So advance after a message was seen downstream, not as soon as the source
// handed it out. Advance gives up waiting when the topology stops or a task
// fails.
func (c *Clock) Advance(d time.Duration) { c.m.Advance(d) }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return c.m.Now() }
