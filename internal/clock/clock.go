// Package clock gives the runtime its sense of time: timers and repeating beats that
// tests replace with a [Manual] clock. Acker expiry, spout back-off, tick tuples and
// restart back-off read only this clock, so a 30-second timeout runs in microseconds.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock schedules callbacks. Callbacks run on a goroutine the clock owns and must
// not block; the runtime's callbacks only post messages.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once after d.
	AfterFunc(d time.Duration, f func()) Timer
	// Every calls f every d until stopped.
	Every(d time.Duration, f func()) Timer
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
	go t.run(d, false, f)
	return t
}

func (realClock) Every(d time.Duration, f func()) Timer {
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

func (t *realTimer) run(d time.Duration, repeat bool, f func()) {
	defer close(t.done)
	tk := time.NewTicker(max(d, time.Microsecond))
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
			f()
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
// the caller's goroutine, in deadline order. It is safe for concurrent use.
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
	c      *Manual
	at     time.Time
	every  time.Duration
	f      func()
	seq    int
	active bool
}

// Now returns the manual time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// AfterFunc schedules f at Now()+d.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer { return m.schedule(d, 0, f) }

// Every schedules f at every multiple of d from now.
func (m *Manual) Every(d time.Duration, f func()) Timer { return m.schedule(d, d, f) }

func (m *Manual) schedule(d, every time.Duration, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	t := &manualTimer{c: m, at: m.now.Add(d), every: every, f: f, seq: m.seq, active: true}
	m.timers[t] = struct{}{}
	return t
}

func (t *manualTimer) Stop() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.active = false
	delete(t.c.timers, t)
}

// Timers returns how many callbacks are scheduled.
func (m *Manual) Timers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// Advance moves time forward by d, running every callback that falls due.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	end := m.now.Add(d)
	m.mu.Unlock()
	for {
		t := m.nextDue(end)
		if t == nil {
			break
		}
		t.f()
	}
	m.mu.Lock()
	m.now = end
	m.mu.Unlock()
}

// nextDue pops the earliest callback due by end and moves the clock to it.
func (m *Manual) nextDue(end time.Time) *manualTimer {
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []*manualTimer
	for t := range m.timers {
		if !t.at.After(end) {
			due = append(due, t)
		}
	}
	if len(due) == 0 {
		return nil
	}
	sort.Slice(due, func(i, j int) bool {
		if due[i].at.Equal(due[j].at) {
			return due[i].seq < due[j].seq
		}
		return due[i].at.Before(due[j].at)
	})
	t := due[0]
	m.now = t.at
	if t.every > 0 {
		t.at = t.at.Add(t.every)
	} else {
		delete(m.timers, t)
	}
	return t
}
