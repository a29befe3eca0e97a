package main

import (
	"runtime"
	"testing"
	"time"
)

// TestCases runs every case briefly: each must move tuples, record latency when
// acked, and stop cleanly. It checks the instrument, not performance.
func TestCases(t *testing.T) {
	short := timing{warmup: 50 * time.Millisecond, measure: 250 * time.Millisecond} // room for a loaded machine: this checks the instrument
	for _, rs := range cases() {
		t.Run(rs.name(), func(t *testing.T) {
			s := setup{shape: rs.shape, acked: rs.acked, pending: 512, ackers: 1, spoutWait: defaultSpoutWait, flushOff: rs.flushOff}
			tm := short
			if rs.shape == topicToTopic || rs.shape == topicCount {
				if raceDetector {
					// An in-process broker under the race detector needs seconds
					// to warm up and a backlog of millions; .ci/run runs these
					// cases without -race instead.
					t.Skip("the Kafka cases run without -race (see .ci/run)")
				}
				tm, s.fill = kafkaTiming(timing{warmup: 500 * time.Millisecond, measure: time.Second})
			}
			if rs.flushOff {
				tm.measure = 300 * time.Millisecond // its first batch leaves after 64 ms
			}
			if rs.shape == topicCount {
				s.pending = statePending
			}
			if rs.shape == statefulCount {
				tm.measure = 2 * stateInterval // acks (and latency samples) come when a checkpoint commits
			}
			r := measure(rs.system, rs.start, s, tm)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.tuples == 0 {
				t.Fatal("no tuples")
			}
			// The Kafka cases measure throughput only: they sample no latency.
			if (rs.acked || rs.shape == slowSource) && rs.shape != topicToTopic && rs.shape != topicCount && r.samples == 0 {
				t.Error("acked run recorded no latency")
			}
			if r.nacks != 0 {
				t.Errorf("%d nacks", r.nacks)
			}
			if rs.half {
				s.rate = 20000
				h := measure(rs.system, rs.start, s, short)
				if h.err != nil {
					t.Fatal(h.err)
				}
				if got := h.rate(); got > 30000 {
					t.Errorf("paced at 20k tuples/s, ran at %.0f", got)
				}
			}
		})
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {0.999, 999 * time.Microsecond}} {
		got := h.quantile(c.q)
		if d := float64(got-c.want) / float64(c.want); d < -0.04 || d > 0.04 {
			t.Errorf("quantile(%v) = %v, want %v within 4%%", c.q, got, c.want)
		}
	}
	for v := uint64(0); v < 1<<20; v += 7 {
		if b := bucketValue(bucketOf(v)); float64(b) < float64(v)*0.96 || float64(b) > float64(v)*1.04+1 {
			t.Fatalf("value %d lands in bucket of %d", v, b)
		}
	}
}

func TestLimiter(t *testing.T) {
	if !(*limiter)(nil).take() {
		t.Fatal("a nil limiter must never limit")
	}
	l := newLimiter(1000)
	l.start = l.start.Add(-100 * time.Millisecond)
	n := 0
	for l.take() {
		n++
	}
	if n < 95 || n > 110 {
		t.Fatalf("100 ms at 1000/s granted %d", n)
	}
}

func TestLineHandoff(t *testing.T) {
	if d := lineHandoff(1); d != 0 {
		t.Errorf("lineHandoff(1) = %v, want 0 (no round trip to time)", d)
	}
	prev := runtime.GOMAXPROCS(1)
	d := lineHandoff(1000)
	runtime.GOMAXPROCS(prev)
	if d != 0 {
		t.Errorf("with one P: %v, want 0 (both sides would share a core)", d)
	}
	if prev < 2 {
		t.Skip("one CPU: nothing to measure")
	}
	// No upper bound: on a loaded machine one side may wait out the other's
	// time slice, and this checks the instrument, not the machine.
	if d := lineHandoff(1000); d <= 0 {
		t.Errorf("lineHandoff(1000) = %v, want a positive time per hand-off", d)
	}
}

// TestScaleRun runs the scale mode's case at two small sizes: tuples move, the
// RSS and start and stop times are read, and Stop succeeds.
func TestScaleRun(t *testing.T) {
	c := config{duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, pending: 512, ackers: 1, spoutWait: defaultSpoutWait}
	for _, n := range []int{2, 8} {
		r, err := scaleRun(c, n)
		if err != nil {
			t.Fatalf("%d tasks: %v", n, err)
		}
		if r.rate <= 0 || r.start <= 0 || r.stop <= 0 || r.heap == 0 {
			t.Errorf("%d tasks: %+v, want a rate, a heap and start and stop times", n, r)
		}
		if runtime.GOOS == "linux" && r.rss == 0 {
			t.Errorf("%d tasks: no peak RSS read", n)
		}
	}
}
