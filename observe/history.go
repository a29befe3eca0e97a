package observe

import (
	"sync"
	"time"

	"github.com/goshelter/goshelter/internal/stats"
	"github.com/goshelter/goshelter/supervision"
)

// The windows of Storm's REST API, as its UI offers them: the last ten
// minutes, three hours and day, and the incarnation's life.
const (
	windowTenMinutes = "600"
	windowThreeHours = "10800"
	windowOneDay     = "86400"
	windowAllTime    = ":all-time"
	tenMinutes       = 600 * time.Second
)

// stormWindows are the windows in the order Storm lists them.
var stormWindows = []string{windowTenMinutes, windowThreeHours, windowOneDay, windowAllTime}

// span is a window of fixed length and how far apart the snapshots kept for
// it are: a sixtieth of its length, so that while someone is watching it
// covers between its length and a sixtieth more, from at most 62 snapshots
// (with 4,096 tasks, about 2 MB a window).
type span struct {
	window string
	length time.Duration
	gap    time.Duration
}

// spans are the windows of fixed length, shortest first.
var spans = [...]span{
	{windowTenMinutes, tenMinutes, 10 * time.Second},
	{windowThreeHours, 3 * time.Hour, 3 * time.Minute},
	{windowOneDay, 24 * time.Hour, 24 * time.Minute},
}

// spanOf returns the index in spans of window, false for all time (or a
// window goshelter does not serve).
func spanOf(window string) (int, bool) {
	for i, s := range spans {
		if s.window == window {
			return i, true
		}
	}
	return 0, false
}

// counters are the figures of a task a window subtracts (stats.Window): a
// kept snapshot holds only these, not the histograms, maps and texts of a
// whole supervision.TaskStats.
type counters struct {
	emitted, transferred, executed, acked, failed, expired int64
	processSamples, completeSamples                        int64
	executeTime, processTime, completeTime                 time.Duration
}

func countersOf(t supervision.TaskStats) counters {
	return counters{
		emitted: t.Emitted, transferred: t.Transferred, executed: t.Executed, acked: t.Acked, failed: t.Failed, expired: t.Expired,
		processSamples: t.ProcessSamples, completeSamples: t.CompleteSamples,
		executeTime: t.ExecuteTime, processTime: t.ProcessTime, completeTime: t.CompleteTime,
	}
}

func (c counters) task() supervision.TaskStats {
	return supervision.TaskStats{
		Emitted: c.emitted, Transferred: c.transferred, Executed: c.executed, Acked: c.acked, Failed: c.failed, Expired: c.expired,
		ProcessSamples: c.processSamples, CompleteSamples: c.completeSamples,
		ExecuteTime: c.executeTime, ProcessTime: c.processTime, CompleteTime: c.completeTime,
	}
}

// sample is a snapshot's counters by task id.
type sample struct {
	time        time.Time
	incarnation int
	tasks       map[int]counters
}

// history keeps snapshots of the current incarnation, for each window of
// fixed length one per its gap, for as long as the window needs them. It
// samples when asked, not on a timer of its own, so a handler costs nothing
// (and runs no goroutine) while nobody reads it; the page asks every few
// seconds while it is open. It is safe for concurrent use.
type history struct {
	mu sync.Mutex // mu guards samples
	// samples are, by span (in the order of spans), the kept snapshots,
	// oldest first, all of one incarnation.
	samples [len(spans)][]sample
}

// windowed is one window's figures per task (stats.Window), and the time
// they cover.
type windowed struct {
	window string // one of stormWindows
	span   time.Duration
	tasks  map[int]supervision.TaskStats
}

// window returns cur's counters over window (one of stormWindows) and keeps
// cur for later windows.
//
// A window of fixed length starts at the newest kept snapshot at least that
// old. Until there is one it covers the incarnation's life when that is
// shorter than the window and otherwise, when nobody asked for a while, the
// span closest to the window's length it can; span always says what it
// covers. All-time covers the incarnation's life: counters start from zero
// with each incarnation, as a Storm worker's do when it restarts.
func (h *history) window(cur supervision.Stats, window string) windowed {
	now := byTask(cur)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keep(cur)
	w := windowed{window: window, span: cur.Uptime, tasks: now}
	i, fixed := spanOf(window)
	if !fixed || cur.Uptime <= spans[i].length {
		return w
	}
	sp, base := spans[i], h.samples[i][0]
	age := cur.Time.Sub(base.time)
	if age <= 0 || (age < sp.length && sp.length-age > cur.Uptime-sp.length) {
		return w // the incarnation's life is the closer span
	}
	w.span, w.tasks = age, make(map[int]supervision.TaskStats, len(now))
	for id, t := range now {
		w.tasks[id] = stats.Window(t, base.tasks[id].task())
	}
	return w
}

// keep records cur in each span whose newest kept snapshot is its gap old,
// and drops the snapshots a span no longer needs. Spans that record at the
// same time share the snapshot, which nobody changes.
func (h *history) keep(cur supervision.Stats) {
	var snap *sample
	for i, sp := range spans {
		kept := h.samples[i]
		if len(kept) > 0 && kept[0].incarnation != cur.Incarnation {
			kept = nil // counters started from zero again
		}
		if n := len(kept); n == 0 || cur.Time.Sub(kept[n-1].time) >= sp.gap {
			if snap == nil {
				snap = &sample{time: cur.Time, incarnation: cur.Incarnation, tasks: make(map[int]counters, len(cur.Tasks))}
				for _, t := range cur.Tasks {
					snap.tasks[t.Task] = countersOf(t)
				}
			}
			kept = append(kept, *snap)
		}
		// Keep the newest snapshot at least the span's length old, and those after it.
		drop := 0
		for drop+1 < len(kept) && cur.Time.Sub(kept[drop+1].time) >= sp.length {
			drop++
		}
		h.samples[i] = kept[drop:]
	}
}

func byTask(s supervision.Stats) map[int]supervision.TaskStats {
	out := make(map[int]supervision.TaskStats, len(s.Tasks))
	for _, t := range s.Tasks {
		out[t.Task] = t
	}
	return out
}
