// Package clock gives the runtime its sense of time: timers and repeating beats that
// tests replace with a [Manual] clock. Acker expiry, spout back-off, tick tuples and
// restart back-off read only this clock, so a 30-second timeout runs in microseconds.
package clock

import (
	"sync"
	"time"
)

// Clock schedules callbacks. Callbacks run on a goroutine the clock owns and must
// not block; the runtime's callbacks only post messages.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once after d.
	AfterFunc(d time.Duration, f func()) Timer
	// Every calls f every d until stopped. beats is how many periods the call
	// stands for: 1, unless a manual clock's Advance passed several at once;
	// they are coalesced into one call, as a time.Ticker drops the ticks of a
	// slow receiver, but counted.
	Every(d time.Duration, f func(beats int)) Timer
}

// Timer cancels a scheduled callback. After Stop returns, f is not running and
// will not run again. It is an alias of an unnamed interface so that clocks
// declared elsewhere (supervision.Clock) are the same interface as this one.
type Timer = interface{ Stop() }

// Real returns the wall clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &realTimer{stop: make(chan struct{}), done: make(chan struct{})}
	go t.run(d, false, func(int) { f() })
	return t
}

func (realClock) Every(d time.Duration, f func(beats int)) Timer {
	t := &realTimer{stop: make(chan struct{}), done: make(chan struct{})}
	go t.run(d, true, f)
	return t
}

// realTimer owns one goroutine, so Stop can join it: time.AfterFunc cannot be joined.
type realTimer struct {
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

func (t *realTimer) run(d time.Duration, repeat bool, f func(beats int)) {
	defer close(t.done)
	tk := time.NewTicker(max(d, time.Microsecond))
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
			f(1) // the ticker drops what f was too slow for
			if !repeat {
				return
			}
		}
	}
}

func (t *realTimer) Stop() {
	t.once.Do(func() { close(t.stop) })
	<-t.done
}

// Manual is a clock that moves only when told to. Advance runs due callbacks on
// the caller's goroutine, in deadline order, and returns: like zap's test
// clock it only fires timers, and a test waits for what the callbacks caused
// (the runtime's only post messages to tasks). It is safe for concurrent use.
type Manual struct {
	mu     sync.Mutex // mu guards now, seq and timers
	now    time.Time
	seq    int
	timers map[*manualTimer]struct{}
}

// NewManual returns a manual clock reading start.
func NewManual(start time.Time) *Manual {
	return &Manual{now: start, timers: map[*manualTimer]struct{}{}}
}

type manualTimer struct {
	c     *Manual
	at    time.Time // the next due time
	every time.Duration
	f     func(beats int)
	seq   int
}

// Now returns the manual time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// AfterFunc schedules f at Now()+d.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	return m.schedule(d, 0, func(int) { f() })
}

// Every schedules f at every multiple of d from now; see Advance for how beats
// that fall due together are counted. A period under a nanosecond counts as one.
func (m *Manual) Every(d time.Duration, f func(beats int)) Timer {
	return m.schedule(d, max(d, 1), f)
}

func (m *Manual) schedule(d, every time.Duration, f func(int)) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	t := &manualTimer{c: m, at: m.now.Add(d), every: every, f: f, seq: m.seq}
	m.timers[t] = struct{}{}
	return t
}

func (t *manualTimer) Stop() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	delete(t.c.timers, t)
}

// Timers returns how many callbacks are scheduled.
func (m *Manual) Timers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// Advance moves time forward by d, running every callback that falls due. A
// repeating callback runs once, however many of its periods d spans: at the
// latest of them, told how many. Advance(time.Hour) thus costs one call per
// timer, not one per period, as a time.Ticker hands a slow receiver one tick.
// A timer a callback arms during an Advance runs in the next Advance (at once
// if it is due by then), so a callback that re-arms itself costs one run per
// Advance too. Callbacks run in the order of the times they run at, and the clock reads that
// time while each runs. Settlers run before the first and after each (see
// Settle).
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	end := m.now.Add(d)
	armed := m.seq // timers armed by the callbacks of this Advance wait for the next
	m.mu.Unlock()
	for {
		t, beats := m.nextDue(end, armed)
		if t == nil {
			break
		}
		t.f(beats)
	}
	m.mu.Lock()
	if end.After(m.now) { // a concurrent Advance may have gone further
		m.now = end
	}
	m.mu.Unlock()
}

// nextDue picks the callback that runs first by end among the timers armed
// up to seq armed, moves the clock to the time it runs at and reschedules or
// drops it. A repeating timer runs at its last due time by end, for all the
// beats due until then. A timer a callback armed during this Advance (a
// spout's back-off re-armed after each empty Next) runs in the next one: one
// Advance of an hour costs what is due, not one round per re-arming.
func (m *Manual) nextDue(end time.Time, armed int) (next *manualTimer, beats int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var at time.Time
	for t := range m.timers {
		if t.at.After(end) || t.seq > armed {
			continue
		}
		n, runAt := t.due(end)
		if next == nil || runAt.Before(at) || runAt.Equal(at) && t.seq < next.seq {
			next, beats, at = t, n, runAt
		}
	}
	if next == nil {
		return nil, 0
	}
	if at.After(m.now) {
		m.now = at
	}
	if next.every > 0 {
		next.at = at.Add(next.every)
	} else {
		delete(m.timers, next)
	}
	return next, beats
}

// due returns how many of t's beats are due by end (t.at is) and the last.
func (t *manualTimer) due(end time.Time) (beats int, last time.Time) {
	if t.every == 0 {
		return 1, t.at
	}
	n := end.Sub(t.at) / t.every
	return int(n) + 1, t.at.Add(n * t.every)
}
