package testsupport

import (
	"testing"
	"time"
)

func TestScaled(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
	}{
		{"", 2 * time.Second},
		{"3", 6 * time.Second},
		{"0.5", time.Second},
		{"0", 2 * time.Second},
		{"-2", 2 * time.Second},
		{"fast", 2 * time.Second},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(TimeoutScaleEnv, tc.env)
			if got := Scaled(2 * time.Second); got != tc.want {
				t.Errorf("with %s=%q Scaled(2s) = %v, want %v", TimeoutScaleEnv, tc.env, got, tc.want)
			}
		})
	}
}

func TestAwait(t *testing.T) {
	n := 0
	if !Await(time.Minute, func() bool { n++; return n == 3 }) {
		t.Fatal("Await gave up on a condition that came true")
	}
	if n != 3 {
		t.Errorf("Await read the condition %d times, want 3 (until it held)", n)
	}
	if Await(10*time.Millisecond, func() bool { return false }) {
		t.Error("Await reported a condition that never held")
	}
}

func TestFailFast(t *testing.T) {
	for env, want := range map[string]bool{"": false, "0": false, "1": true, "yes": false} {
		t.Setenv(FailFastEnv, env)
		if got := FailFast(); got != want {
			t.Errorf("with %s=%q FailFast() = %v, want %v", FailFastEnv, env, got, want)
		}
	}
}
