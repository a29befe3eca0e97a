package observe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/supervision"
)

func TestProgressLine(t *testing.T) {
	prev, cur := sampleStats(4*time.Second, 1), sampleStats(5*time.Second, 2)
	got := observe.ProgressLine(observe.NewReport(&prev, cur))
	want := "progress: 5s emitted=800 (400/s) acked=760 (380/s) failed=20 pending=10"
	if got != want {
		t.Errorf("ProgressLine = %q, want %q", got, want)
	}
	cur.Restarts = 2
	if got := observe.ProgressLine(observe.NewReport(&prev, cur)); !strings.HasSuffix(got, " pending=10 restarts=2") {
		t.Errorf("after restarts, ProgressLine = %q", got)
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

func TestStartProgressWritesLinesUntilStopped(t *testing.T) {
	src := &fakeSource{stats: []supervision.Stats{sampleStats(time.Second, 1), sampleStats(2*time.Second, 2)}}
	out := &lines{ch: make(chan string, 2)}
	p := observe.StartProgress(out, src, time.Millisecond)
	first := <-out.ch
	p.Stop()
	p.Stop() // idempotent
	if !strings.HasPrefix(first, "progress: 2s emitted=800 (400/s)") || !strings.HasSuffix(first, "\n") {
		t.Errorf("first line = %q", first)
	}
}
