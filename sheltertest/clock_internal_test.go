package sheltertest

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// The kit's Clock wraps the runtime's manual clock; this in-package test
// schedules on it directly, as the runtime does once the Clock is given to Run.
func TestClockRunsDueCallbacksInDeadlineOrder(t *testing.T) {
	start := time.Unix(100, 0)
	c := NewClock(start)
	var got []string
	c.m.AfterFunc(3*time.Second, func() { got = append(got, "three") })
	every := c.m.Every(time.Second, func(beats int) { got = append(got, fmt.Sprintf("every×%d", beats)) })
	c.m.AfterFunc(time.Second, func() { got = append(got, "one") })
	c.m.AfterFunc(10*time.Second, func() { got = append(got, "ten") })
	if c.m.Timers() != 4 {
		t.Fatalf("Timers() = %d, want 4", c.m.Timers())
	}

	c.Advance(999 * time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("callbacks ran early: %v", got)
	}
	c.Advance(time.Millisecond)
	c.Advance(2 * time.Second)
	// At 1 s two callbacks are due: the one scheduled first runs first. The
	// repeating one runs once for the two periods of the second Advance, at 3 s.
	want := []string{"every×1", "one", "three", "every×2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("callbacks ran %v, want %v", got, want)
	}
	if now := c.Now(); !now.Equal(start.Add(3 * time.Second)) {
		t.Errorf("Now() = %v, want start + 3s", now)
	}
	if c.m.Timers() != 2 { // every and ten; one-shot timers are gone once run
		t.Errorf("Timers() = %d, want 2", c.m.Timers())
	}
	every.Stop()
	got = nil
	c.Advance(time.Hour)
	if !reflect.DeepEqual(got, []string{"ten"}) || c.m.Timers() != 0 {
		t.Errorf("after Stop: ran %v with %d timers left, want [ten] and none", got, c.m.Timers())
	}
}
