package clock

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestManualRunsDueCallbacksInDeadlineOrder(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var got []string
	m.AfterFunc(3*time.Second, func() { got = append(got, "three") })
	m.Every(time.Second, func(beats int) { got = append(got, fmt.Sprintf("every×%d", beats)) })
	m.AfterFunc(time.Second, func() { got = append(got, "one") })

	m.Advance(999 * time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("callbacks ran early: %v", got)
	}
	m.Advance(time.Millisecond)
	m.Advance(2 * time.Second)
	// At 1 s both are due: the one scheduled first runs first. The next Advance
	// spans two periods: the repeating callback runs once, at the later (3 s,
	// after "three", scheduled before it), for both.
	want := []string{"every×1", "one", "three", "every×2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if now := m.Now(); !now.Equal(time.Unix(3, 0)) {
		t.Fatalf("Now() = %v after advancing 3 s", now)
	}
}

// TestManualAdvanceCostsOneCallPerTimer: a long Advance calls a fast repeating
// callback once with the beats it stands for, and the clock reads the time of
// each call while it runs.
func TestManualAdvanceCostsOneCallPerTimer(t *testing.T) {
	start := time.Unix(0, 0)
	m := NewManual(start)
	var calls, beats int
	var at []time.Duration
	m.Every(time.Millisecond, func(n int) {
		calls++
		beats += n
		at = append(at, m.Now().Sub(start))
	})
	m.AfterFunc(90*time.Minute, func() { at = append(at, m.Now().Sub(start)) })
	m.Advance(time.Hour)
	if calls != 1 || beats != 3_600_000 {
		t.Fatalf("an hour of 1 ms beats: %d calls for %d beats, want 1 call for 3600000", calls, beats)
	}
	m.Advance(time.Hour + 500*time.Microsecond) // the one-shot at 1h30 runs first
	if calls != 2 || beats != 7_200_000 {
		t.Fatalf("the second hour: %d calls, %d beats in all; want 2 and 7200000", calls, beats)
	}
	want := []time.Duration{time.Hour, 90 * time.Minute, 2 * time.Hour}
	if !reflect.DeepEqual(at, want) {
		t.Fatalf("callbacks ran at %v, want %v", at, want)
	}
}

func TestManualStopCancels(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var n int
	tm := m.Every(time.Second, func(beats int) { n += beats })
	m.Advance(2 * time.Second)
	tm.Stop()
	m.Advance(10 * time.Second)
	if n != 2 || m.Timers() != 0 {
		t.Fatalf("ran %d times, %d timers left; want 2 and 0", n, m.Timers())
	}
}

// A timer a callback arms runs in the next Advance, not in the one that armed
// it: a callback that re-arms itself (a spout's back-off after each empty
// Next) costs one run per Advance, however far it goes.
func TestManualCallbackMayScheduleAnother(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var fired atomic.Int32
	m.AfterFunc(time.Second, func() {
		m.AfterFunc(time.Second, func() { fired.Add(1) })
	})
	m.Advance(2 * time.Second)
	if fired.Load() != 0 {
		t.Fatal("a timer armed by a callback ran in the Advance that armed it")
	}
	m.Advance(0)
	if fired.Load() != 1 {
		t.Fatal("a timer armed by a callback, due already, did not run in the next Advance")
	}
}

func TestManualSelfRearmingTimerRunsOncePerAdvance(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var runs int
	var rearm func()
	rearm = func() { runs++; m.AfterFunc(100*time.Millisecond, rearm) }
	m.AfterFunc(100*time.Millisecond, rearm)
	m.Advance(time.Hour)
	if runs != 1 {
		t.Fatalf("a self-rearming timer ran %d times in Advance(time.Hour), want 1", runs)
	}
	m.Advance(time.Hour)
	if runs != 2 {
		t.Fatalf("ran %d times after two Advances, want 2", runs)
	}
}

func TestRealTimerStopJoinsItsGoroutine(t *testing.T) {
	c := Real()
	fired := make(chan struct{}, 16)
	tm := c.Every(time.Millisecond, func(int) { fired <- struct{}{} })
	<-fired
	tm.Stop()
	tm.Stop() // idempotent
	once := c.AfterFunc(time.Hour, func() { t.Error("fired") })
	once.Stop()
	// goleak.VerifyTestMain checks that both goroutines are gone.
}

func TestRealAfterFuncFiresOnce(t *testing.T) {
	done := make(chan struct{})
	tm := Real().AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	tm.Stop()
}
