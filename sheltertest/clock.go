package sheltertest

import (
	"time"

	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/supervision"
)

// Clock is a clock that moves only when told to, as zap's test clock. It holds
// a [supervision.Clock], and [Clock.Option] is [supervision.WithClock] with it.
// Once a topology runs on it, everything the runtime times reads it: tuple
// timeouts, spout waits, tick tuples, processing-time windows, restart
// back-off and stable periods, so a 30-second timeout runs in microseconds.
// Components read it as dsl.TaskInfo.Now. Durations the runtime measures
// (latencies) stay wall-clock time, and so does the batch flush interval: it
// bounds how long a tuple waits to leave its task, so tuples flow whether or
// not the clock moves.
// It is safe for concurrent use.
type Clock struct{ m *clock.Manual }

// NewClock returns a manual clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{m: clock.NewManual(start)} }

// Option is supervision.WithClock(c): the option that makes a topology run on c.
func (c *Clock) Option() supervision.Option { return supervision.WithClock(c.m) }

// Advance moves the clock forward by d and runs every callback that falls due,
// in deadline order, on the caller's goroutine; then it returns. It fires
// timers and waits for nothing else: the runtime's callbacks only post
// messages (a rotation to the ackers, a tick to a bolt, the next Next to a
// backing-off spout, the end of a restart's back-off), and the tasks handle
// them on their own goroutines after Advance returned. Wait for the effect
// you expect: [WaitIdle] (every tree settled, nothing in flight),
// [Source.WaitOutcomes] or [Source.WaitSettled] (what reached the source),
// [Recorder.Wait], or a channel your component closes.
//
// A timer's message comes after the acks, Tracks and outcomes sent to the
// same task before it: an acker rotates only once it has applied what was
// queued to it when Advance ran, so a tree whose tuple a bolt received before
// Advance was called is timed out by a rotation that Advance runs (its Track
// reached the acker before the tuple left the spout). A tree still on its way
// (a source's message handed out, not yet seen downstream) may miss it: wait
// for the tuple to arrive before advancing past its timeout, or advance
// again. A bolt's tick goes ahead of the inputs still queued to it: wait for
// the inputs a tick must see to be executed (a window's, say) before
// advancing.
//
// A repeating timer runs once however many periods d spans, as a time.Ticker
// gives a slow receiver one tick, but every beat still counts:
// Advance(time.Hour) sends each ticked bolt one tick tuple, expires what an
// hour of rotations would, and costs about as much as Advance(time.Second):
// a timer armed by what an Advance ran (a spout's back-off, re-armed after
// each empty Next) runs in the next Advance, not again in the same one.
// Advance may be called from any goroutine, a component's included.
func (c *Clock) Advance(d time.Duration) { c.m.Advance(d) }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return c.m.Now() }
