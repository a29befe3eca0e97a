package testsupport

import (
	"testing"
	"time"
)

// pollEvery is how often [WaitUntil] reads its condition.
const pollEvery = 2 * time.Millisecond

// WaitUntil waits until cond reports true, reading it every few
// milliseconds, and fails tb, naming what it waited for, when
// Scaled(timeout) passes first. It is for figures that announce no change
// (a topology's stats, a counter of a server): where the code under test
// can signal (a channel, a Done), tests wait on that instead.
func WaitUntil(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Await(Scaled(timeout), cond) {
		tb.Fatalf("waited %v for %s", Scaled(timeout), what)
	}
}

// Await waits until cond reports true or d passes, reading cond every few
// milliseconds, and reports whether cond did; d is not scaled, so callers
// that want a bound pass Scaled(d). It suits a goroutine other than the
// test's, which must not call tb.Fatalf.
func Await(d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// Recv receives from ch and fails tb, naming what it waited for, when
// Scaled(timeout) passes first: a test waits on a channel through it, so a
// broken build fails the test instead of hanging it. Call it from the test's
// goroutine.
func Recv[T any](tb testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	tb.Helper()
	deadline := time.NewTimer(Scaled(timeout))
	defer deadline.Stop()
	select {
	case v := <-ch:
		return v
	case <-deadline.C:
		tb.Fatalf("waited %v for %s", Scaled(timeout), what)
		panic("unreachable")
	}
}
