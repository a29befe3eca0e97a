package observe

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ProgressLine sums a report's spouts into one line: uptime, tuples emitted and
// acked (totals and rates over the report's window), failed and pending, and the
// restarts once there were any (the other figures are then the current
// incarnation's), e.g.
//
//	progress: 3s emitted=123456 (41.2k/s) acked=120000 (40.0k/s) failed=0 pending=128
func ProgressLine(r Report) string {
	var sum Figures
	for _, f := range r.Components {
		if f.Kind == "spout" {
			sum.add(f)
		}
	}
	line := fmt.Sprintf("progress: %s emitted=%d (%s) acked=%d (%s) failed=%d pending=%d",
		(time.Duration(r.UptimeSecs * float64(time.Second))).Round(time.Second),
		sum.Emitted, rateText(sum.EmitRate), sum.Acked, rateText(sum.AckRate), sum.Failed, sum.Pending)
	if r.Restarts > 0 { // counters and uptime are the current incarnation's
		line += fmt.Sprintf(" restarts=%d", r.Restarts)
	}
	return line
}

// Progress writes a [ProgressLine] per interval on a goroutine of its own until
// Stop.
type Progress struct {
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// StartProgress writes a progress line about src to w every interval, each
// covering the interval before it. Write errors are ignored.
func StartProgress(w io.Writer, src Source, interval time.Duration) *Progress {
	p := &Progress{stop: make(chan struct{}), done: make(chan struct{})}
	window := NewWindow(src, 0)
	window.Report() // the baseline
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				_, _ = fmt.Fprintln(w, ProgressLine(window.Report()))
			}
		}
	}()
	return p
}

// Stop ends the progress lines and waits for the goroutine to end. It may be
// called more than once.
func (p *Progress) Stop() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// IsTerminal reports whether f is a character device (a terminal, or /dev/null),
// for samples that print progress by default only to a person watching.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
