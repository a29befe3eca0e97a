package jetstream

import (
	"testing"
	"time"
)

// The nack delay doubles per delivery from base and stops at max, without
// overflowing for a message delivered very many times.
func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		n    uint64
		want time.Duration
	}{{0, ms}, {1, ms}, {2, 2 * ms}, {3, 4 * ms}, {4, 8 * ms}, {5, 10 * ms}, {6, 10 * ms}, {1 << 62, 10 * ms}} {
		if got := backoff(ms, 10*ms, c.n); got != c.want {
			t.Errorf("backoff(1ms, 10ms, %d) = %v, want %v", c.n, got, c.want)
		}
	}
}
