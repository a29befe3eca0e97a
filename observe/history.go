package observe

import (
	"sync"
	"time"

	"github.com/goshelter/goshelter/internal/stats"
	"github.com/goshelter/goshelter/supervision"
)

// The windows of Storm's REST API that goshelter serves: the last ten minutes
// and the incarnation's life.
const (
	windowTenMinutes = "600"
	windowAllTime    = ":all-time"
	tenMinutes       = 600 * time.Second
	// sampleGap is how far apart the kept snapshots are: a ten-minute window
	// covers between 600 and 600+sampleGap seconds while someone is watching.
	sampleGap = 10 * time.Second
)

// sample is a snapshot's figures by task id.
type sample struct {
	time        time.Time
	incarnation int
	tasks       map[int]supervision.TaskStats
}

// history keeps snapshots of the current incarnation, one per sampleGap, for
// as long as the ten-minute window needs them. It samples when asked, not on a
// timer of its own, so a handler costs nothing (and runs no goroutine) while
// nobody reads it; the page asks every few seconds while it is open. It is safe
// for concurrent use.
type history struct {
	mu      sync.Mutex // mu guards samples
	samples []sample   // oldest first, all of one incarnation
}

// windowed is one window's figures per task (stats.Window), and the time
// they cover.
type windowed struct {
	window string // windowTenMinutes or windowAllTime
	span   time.Duration
	tasks  map[int]supervision.TaskStats
}

// window returns cur's counters over window (windowTenMinutes or
// windowAllTime) and keeps cur for later windows.
//
// The ten-minute window starts at the newest kept snapshot at least ten
// minutes old. Until there is one it covers the incarnation's life when that is
// shorter than ten minutes and otherwise, when nobody asked for a while, the
// span closest to ten minutes it can; span always says what it covers.
// All-time covers the incarnation's life: counters start from zero with each
// incarnation, as a Storm worker's do when it restarts.
func (h *history) window(cur supervision.Stats, window string) windowed {
	now := byTask(cur)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keep(cur, now)
	w := windowed{window: window, span: cur.Uptime, tasks: now}
	if window != windowTenMinutes || cur.Uptime <= tenMinutes {
		return w
	}
	base := h.samples[0]
	age := cur.Time.Sub(base.time)
	if age <= 0 || (age < tenMinutes && tenMinutes-age > cur.Uptime-tenMinutes) {
		return w // the incarnation's life is the closer span
	}
	w.span, w.tasks = age, make(map[int]supervision.TaskStats, len(now))
	for id, t := range now {
		w.tasks[id] = stats.Window(t, base.tasks[id])
	}
	return w
}

// keep records cur when the newest kept snapshot is sampleGap old, and drops
// the snapshots the ten-minute window no longer needs.
func (h *history) keep(cur supervision.Stats, now map[int]supervision.TaskStats) {
	if len(h.samples) > 0 && h.samples[0].incarnation != cur.Incarnation {
		h.samples = nil // counters started from zero again
	}
	if n := len(h.samples); n == 0 || cur.Time.Sub(h.samples[n-1].time) >= sampleGap {
		h.samples = append(h.samples, sample{time: cur.Time, incarnation: cur.Incarnation, tasks: now})
	}
	// Keep the newest snapshot at least ten minutes old, and those after it.
	drop := 0
	for drop+1 < len(h.samples) && cur.Time.Sub(h.samples[drop+1].time) >= tenMinutes {
		drop++
	}
	h.samples = h.samples[drop:]
}

func byTask(s supervision.Stats) map[int]supervision.TaskStats {
	out := make(map[int]supervision.TaskStats, len(s.Tasks))
	for _, t := range s.Tasks {
		out[t.Task] = t
	}
	return out
}
