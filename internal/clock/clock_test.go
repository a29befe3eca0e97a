package clock

import (
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
	m.Every(time.Second, func() { got = append(got, "every") })
	m.AfterFunc(time.Second, func() { got = append(got, "one") })

	m.Advance(999 * time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("callbacks ran early: %v", got)
	}
	m.Advance(2001 * time.Millisecond)
	want := []string{"every", "one", "every", "three", "every"} // at 3 s, the earlier-scheduled timer first
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if now := m.Now(); !now.Equal(time.Unix(3, 0)) {
		t.Fatalf("Now() = %v after advancing 3 s", now)
	}
}

func TestManualStopCancels(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var n int
	tm := m.Every(time.Second, func() { n++ })
	m.Advance(2 * time.Second)
	tm.Stop()
	m.Advance(10 * time.Second)
	if n != 2 || m.Timers() != 0 {
		t.Fatalf("ran %d times, %d timers left; want 2 and 0", n, m.Timers())
	}
}

func TestManualCallbackMayScheduleAnother(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var fired atomic.Int32
	m.AfterFunc(time.Second, func() {
		m.AfterFunc(time.Second, func() { fired.Add(1) })
	})
	m.Advance(2 * time.Second)
	if fired.Load() != 1 {
		t.Fatal("a timer scheduled from a callback did not fire within the same Advance")
	}
}

func TestRealTimerStopJoinsItsGoroutine(t *testing.T) {
	c := Real()
	fired := make(chan struct{}, 16)
	tm := c.Every(time.Millisecond, func() { fired <- struct{}{} })
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
