package main

import "time"

// defaultSpoutWait is how long a rate-limited spout waits when it is ahead of
// its rate (-spout-wait). The goshelter spouts get it as
// topology.sleep.spout.wait.strategy.time.ms.
const defaultSpoutWait = 200 * time.Microsecond

// limiter paces a spout at a fixed rate. It reads the clock only when its budget
// runs out, so a full-speed spout pays nothing and a paced one pays once per refill.
// It is used by one goroutine.
type limiter struct {
	rate    float64 // tuples per second
	start   time.Time
	granted int64 // tuples allowed so far
	budget  int64 // tuples left of the last grant
}

// newLimiter returns a limiter for rate tuples/s, or nil (no limit) for rate <= 0.
func newLimiter(rate float64) *limiter {
	if rate <= 0 {
		return nil
	}
	return &limiter{rate: rate, start: time.Now()}
}

// take reports whether one more tuple may go now. A nil limiter always says yes.
func (l *limiter) take() bool {
	if l == nil {
		return true
	}
	if l.budget == 0 {
		due := int64(l.rate * time.Since(l.start).Seconds())
		if due <= l.granted {
			return false
		}
		l.budget, l.granted = due-l.granted, due
	}
	l.budget--
	return true
}
