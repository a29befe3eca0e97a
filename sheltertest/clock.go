package sheltertest

import (
	"time"

	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/hooks"
	"github.com/goshelter/goshelter/supervision"
)

// Clock is a clock that moves only when told to. Everything the runtime times
// reads it once it is given to Run (see [Clock.Option]): tuple timeouts, spout
// waits, tick tuples, restart back-off and stable periods, so a 30-second
// timeout runs in microseconds. Durations the runtime measures (latencies) stay
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
// in deadline order, on the caller's goroutine. The runtime's callbacks only
// post messages to tasks, so when Advance returns they are queued, not
// necessarily handled. A repeating timer (tick tuples, the ackers' rotation)
// runs once however many periods d spans, as a time.Ticker gives a slow
// receiver one tick, but every beat still counts: Advance(time.Hour) sends
// each ticked bolt one tick tuple, expires what an hour of rotations would,
// and costs about as much as Advance(time.Second).
func (c *Clock) Advance(d time.Duration) { c.m.Advance(d) }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return c.m.Now() }
