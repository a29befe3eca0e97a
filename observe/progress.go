package observe

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/goshelter/goshelter/supervision"
)

// Progress writes a line about r to w every interval, each covering the
// interval before it, until stop is called or r is down; stop waits for the
// last line, so that what the caller prints next comes after it, and may be
// called more than once. A line sums the spouts, for a person watching a run or
// a CI log:
//
//	progress: 3s emitted=123456 (41.2k/s) acked=120000 (40.0k/s) failed=0 pending=128
//
// uptime, tuples emitted and acked (totals and rates), failed and pending, and
// restarts=N once there were any (the other figures are then the current
// incarnation's). Write errors are ignored: progress is not worth stopping for.
// interval must be positive.
func Progress(w io.Writer, r *supervision.Running, interval time.Duration) (stop func()) {
	stop, _ = progressOf(w, r, interval)
	return stop
}

// progressOf is [Progress] with the channel closed when the lines have ended,
// which tests await.
func progressOf(w io.Writer, r *supervision.Running, interval time.Duration) (stop func(), finished <-chan struct{}) {
	return progress(w, r.Stats, r.Done(), interval)
}

// progress is [Progress] on a stats function; finished is closed when the
// lines have ended.
func progress(w io.Writer, stats func() supervision.Stats, done <-chan struct{}, interval time.Duration) (stop func(), finished <-chan struct{}) {
	quit, ended := make(chan struct{}), make(chan struct{})
	window := newWindow(stats, 0)
	window.read() // the baseline
	go func() {
		defer close(ended)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-done:
				return
			case <-tick.C:
				_, _ = fmt.Fprintln(w, progressLine(window.read()))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-ended
	}, ended
}

// progressLine sums a report's spouts into one line (see [Progress]).
func progressLine(r report) string {
	var sum figures
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
