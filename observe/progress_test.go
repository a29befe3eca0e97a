package observe

import (
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	prev, cur := sampleStats(4*time.Second, 1), sampleStats(5*time.Second, 2)
	got := progressLine(newReport(&prev, cur))
	want := "progress: 5s emitted=800 (400/s) acked=760 (380/s) failed=20 pending=10"
	if got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
	cur.Restarts = 2
	if got := progressLine(newReport(&prev, cur)); !strings.HasSuffix(got, " pending=10 restarts=2") {
		t.Errorf("after restarts, progressLine = %q", got)
	}
}

// lines is an io.Writer that hands each write to a channel.
type lines struct{ ch chan string }

func (l *lines) Write(p []byte) (int, error) {
	select {
	case l.ch <- string(p):
	default: // the test has what it needs
	}
	return len(p), nil
}

func TestProgressWritesLinesUntilStopped(t *testing.T) {
	out := &lines{ch: make(chan string, 2)}
	stop, _ := progress(out, script(sampleStats(time.Second, 1), sampleStats(2*time.Second, 2)), nil, time.Millisecond)
	first := <-out.ch
	stop()
	stop() // idempotent
	if !strings.HasPrefix(first, "progress: 2s emitted=800 (400/s)") || !strings.HasSuffix(first, "\n") {
		t.Errorf("first line = %q", first)
	}
}

func TestProgressEndsWhenTheTopologyIsDown(t *testing.T) {
	down := make(chan struct{})
	stop, finished := progress(&lines{ch: make(chan string)}, script(sampleStats(time.Second, 1)), down, time.Hour)
	defer stop()
	close(down)
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("progress kept running after the topology was down")
	}
}
