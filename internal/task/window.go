package task

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

// windowMaxTuples is the conf key of dsl.Settings.WindowMaxTuples, for the
// warning that names the cap.
const windowMaxTuples = "topology.bolts.window.max.tuples"

// The task a Windowed spec runs: it holds inputs, closes windows on the count
// or the clock (watermark), calls the handler, and acks what left every window.

// windowTask runs a windowed bolt's task. It holds its inputs in three
// parallel slices, oldest first, so a window is a subslice handed to the
// handler without copying. Entries leave from the head only: the held tuples
// that can be in no future window are always the oldest.
type windowTask struct {
	typed dsl.TypedWindow // the values, at the indexes of ts and tups
	input reflect.Type    // what typed takes
	info  dsl.TaskInfo
	log   *zap.Logger
	now   func() time.Time
	event bool // event time: a value's time is its timestamp

	count, slideCount int   // in tuples; 0 when in time
	length, slide     int64 // in nanoseconds; 0 when in tuples
	lag               int64

	head    int // held entries are ts[head:], typed's values[head:], tups[head:]
	ts      []int64
	tups    []dsl.Tuple
	tracked int   // held entries on a tuple tree, for anchoring
	shown   int   // the first shown held entries have been in a window
	evicted int64 // entries that left so far: the head's rank

	nextEnd  int64 // end of the next window that slides by time
	hasNext  bool
	lastTrig int64 // rank of the entry that ended the last window by count
	deadTs   int64 // entries older than this are in no future window
	deadRank int64 // entries up to this rank are in no future window

	wm    int64 // event time: the last watermark
	hasWM bool
	// earliest and latest bound the event times the window computes with
	// (see windowMargin); a timestamp outside fails its input.
	earliest, latest time.Time
	streams          []streamMax
	known            bool // streams lists every input stream (from the model)

	maxTuples                  int
	refusing, refused, lateNum int64 // refusing: inputs failed since the cap was reached
	out                        windowEmitter
}

// streamMax is the latest event time seen on one input stream.
type streamMax struct {
	source string
	stream int // Stream.Index, -1 for a tuple without a stream
	max    int64
	seen   bool
}

func newWindowTask(info dsl.TaskInfo, typed dsl.TypedWindow, input reflect.Type) *windowTask {
	count, slideCount := typed.Counts()
	length, slide, lag := typed.Durations()
	w := &windowTask{
		typed: typed, input: input, info: info, log: info.Logger, now: typed.Now(), event: typed.EventTime(),
		count: count, slideCount: slideCount, length: int64(length), slide: int64(slide), lag: int64(lag),
		lastTrig: -1, deadTs: minInt64, deadRank: -1, maxTuples: typed.MaxTuples(),
	}
	if w.log == nil {
		w.log = zap.NewNop()
	}
	if w.now == nil {
		w.now = info.Now // the topology's clock, a test's manual one included
	}
	if w.now == nil {
		w.now = time.Now
	}
	if !w.event && w.count > 0 && w.slideCount > w.count {
		// Windows that skip tuples (SlideCount above Count): the tuples before
		// the first window's are in none.
		w.deadRank = int64(w.slideCount - 1 - w.count)
	}
	if w.event {
		// How far from the ends of int64 nanoseconds an event time must stay
		// so that every sum the window code forms with it (minus the lag,
		// minus the length, plus two slides) stays in range (dsl bounds each
		// of them, so the margin itself cannot overflow).
		margin := int64(lag + length + 2*slide)
		w.earliest, w.latest = time.Unix(0, minInt64+margin), time.Unix(0, maxInt64-margin)
	}
	if m := info.Model; m != nil && w.event {
		for _, e := range m.Edges {
			if e.To.ID == info.Component && w.streamOf(e.From.ID, e.Stream.Index) < 0 {
				w.streams = append(w.streams, streamMax{source: e.From.ID, stream: e.Stream.Index})
			}
		}
		w.known = len(w.streams) > 0
	}
	return w
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

func (w *windowTask) Execute(t *dsl.Tuple, c dsl.Collector) error {
	if t.IsTick() {
		return w.tick(c)
	}
	in := *t               // held in the window: a copy, as the input's batch is reused
	if !w.typed.Stage(t) { // Build only lets assignable streams in: this guards other producers (shell)
		c.Fail(in)
		return fmt.Errorf("input of type %T is not %v", t.Value, w.input)
	}
	var err error
	var ts int64
	if w.event {
		at := w.typed.Stamp()
		if at.Before(w.earliest) || at.After(w.latest) {
			// UnixNano would wrap it into some other window: refuse it.
			c.Fail(in)
			return fmt.Errorf("event time %v is outside the range a window can compute with, %v to %v",
				at, w.earliest.UTC(), w.latest.UTC())
		}
		ts = at.UnixNano()
		w.track(in, ts)
		if w.hasWM && ts < w.wm {
			w.lateInput(in, ts, c)
			return nil
		}
	} else {
		ts = w.now().UnixNano()
	}
	if w.len() >= w.maxTuples {
		w.refuse(in, c)
		return nil
	}
	if w.refusing > 0 {
		w.log.Info("window accepts inputs again", zap.Int64("failed", w.refusing))
		w.refusing = 0
	}
	i := w.insert(ts, in)
	if !w.event && w.slide > 0 && !w.hasNext {
		// In processing time later tuples are never older, so the window this
		// one ends in is the next to close (and bounds a Count window at once).
		w.nextEnd, w.hasNext = floorTo(ts, w.slide)+w.slide, true
	}
	if !w.event && w.length > 0 && w.slideCount > 0 {
		// The next window ends with a later tuple, so it starts after ts-length.
		w.deadTs = max(w.deadTs, ts-w.length)
	}
	if !w.event && w.slideCount > 0 && w.evicted+int64(i) == w.lastTrig+int64(w.slideCount) {
		w.lastTrig = w.evicted + int64(i)
		err = w.evaluate(i, ts, c)
	}
	w.evict(c)
	return err
}

// tick closes the windows whose end the clock or the watermark has passed.
func (w *windowTask) tick(c dsl.Collector) error {
	if !w.event {
		if w.slide == 0 {
			return nil // windows that slide by count close on arrival
		}
		return w.closeUntil(w.now().UnixNano(), c)
	}
	wm, ok := w.watermark()
	if !ok || (w.hasWM && wm <= w.wm) {
		return nil
	}
	w.wm, w.hasWM = wm, true
	if w.slide > 0 {
		return w.closeUntil(wm, c)
	}
	var errs []error
	for {
		rank := w.lastTrig + int64(w.slideCount)
		i := int(rank - w.evicted)
		if i >= w.len() || w.ts[w.head+i] >= wm {
			break
		}
		w.lastTrig = rank
		errs = append(errs, w.evaluate(i, w.ts[w.head+i], c))
	}
	return errors.Join(errs...)
}

// closeUntil closes, in order, every window that slides by time and ends at
// or before frontier, skipping runs of windows with nothing in them.
func (w *windowTask) closeUntil(frontier int64, c dsl.Collector) error {
	var errs []error
	for w.len() > 0 {
		end := w.nextEnd
		if oldest := w.ts[w.head]; !w.hasNext || oldest >= end {
			end = floorTo(oldest, w.slide) + w.slide // the windows before are empty
		}
		if end > frontier {
			// Not committed: in event time a tuple inside the lag may still
			// land in a window before end.
			break
		}
		w.nextEnd, w.hasNext = end, true
		errs = append(errs, w.evaluate(w.below(end)-1, end, c))
		w.nextEnd += w.slide
	}
	if w.len() == 0 {
		w.hasNext = false
	}
	return errors.Join(errs...)
}

// evaluate closes the window that ends with held entry p, at end: it lets go
// of what is older than the window, calls the handler, and lets go of what the
// next window cannot hold.
func (w *windowTask) evaluate(p int, end int64, c dsl.Collector) error {
	rank := w.evicted + int64(p)
	first := 0
	if w.count > 0 {
		first = max(0, p+1-w.count)
	} else {
		first = w.from(end-w.length, p+1)
	}
	w.evictN(first, c)
	n := p + 1 - first // tuples in the window
	var err error
	if n > 0 {
		err = w.call(n, end, c)
	}
	switch {
	case w.slide > 0 && w.length > 0: // the next window starts a slide later
		w.deadTs = max(w.deadTs, end+w.slide-w.length)
	case w.slideCount > 0 && w.count > 0: // the next window holds SlideCount more
		dead := rank + int64(w.slideCount) - int64(w.count)
		if w.event {
			// Later entries may still move (a tuple inside the lag sorts
			// before them), so only those up to the window's end are settled.
			dead = min(dead, rank)
		}
		w.deadRank = max(w.deadRank, dead)
	}
	w.evict(c)
	return err
}

// call hands the first n held entries to the handler as a window ending at
// end; if it fails, they are failed and let go of.
func (w *windowTask) call(n int, end int64, c dsl.Collector) error {
	start := end - w.length
	if w.count > 0 {
		start = w.ts[w.head]
	}
	from, to := w.head, w.head+n
	newFrom, winStart, winEnd := w.head+min(w.shown, n), time.Unix(0, start), time.Unix(0, end)
	w.out.c, w.out.window, w.out.anchor = c, nil, nil
	if w.tracked > 0 {
		w.out.window = w.tups[from:to]
	}
	err := w.run(from, newFrom, to, winStart, winEnd)
	w.out.c, w.out.window, w.out.anchor = nil, nil, nil
	w.shown = max(w.shown, n)
	if err == nil {
		return nil
	}
	for _, t := range w.tups[w.head : w.head+n] {
		c.Fail(t)
	}
	w.drop(n)
	return fmt.Errorf("window [%v, %v] of %d tuples failed: %w", winStart, winEnd, n, err)
}

// run calls the handler, turning a panic into an error with its stack.
func (w *windowTask) run(from, newFrom, to int, start, end time.Time) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return w.typed.Call(from, newFrom, to, start, end, &w.out)
}

// evict lets go of the oldest entries that no future window can hold.
func (w *windowTask) evict(c dsl.Collector) {
	n := 0
	for n < w.len() && (w.ts[w.head+n] < w.deadTs || w.evicted+int64(n) <= w.deadRank) {
		n++
	}
	if w.count > 0 && w.slide > 0 && w.hasNext {
		// The next window is the last Count of the entries before its end.
		if before := w.below(w.nextEnd); before-n > w.count {
			n = before - w.count
		}
	}
	w.evictN(n, c)
}

// evictN acks the n oldest entries and lets go of them; those that were in a
// window are reported as expired in the next call.
func (w *windowTask) evictN(n int, c dsl.Collector) {
	for i := w.head; i < w.head+n; i++ {
		c.Ack(w.tups[i])
		if i-w.head < w.shown {
			w.typed.Expire(i)
		}
	}
	w.drop(n)
}

// drop lets go of the n oldest entries (settled already).
func (w *windowTask) drop(n int) {
	if n == 0 {
		return
	}
	for i := w.head; i < w.head+n; i++ {
		if w.tups[i].ID.Edge != 0 {
			w.tracked--
		}
	}
	w.typed.Clear(w.head, w.head+n) // let the values be collected
	clear(w.tups[w.head : w.head+n])
	w.head += n
	w.evicted += int64(n)
	w.shown = max(0, w.shown-n)
	if w.head == len(w.ts) {
		w.head, w.ts, w.tups = 0, w.ts[:0], w.tups[:0]
	}
}

// insert adds an entry in time order (after any with the same time) and
// returns its index among the held entries.
func (w *windowTask) insert(ts int64, in dsl.Tuple) int {
	if w.head > 0 && w.head >= len(w.ts)/2 { // reuse the space left at the head
		n := copy(w.ts, w.ts[w.head:])
		w.typed.Compact(w.head)
		copy(w.tups, w.tups[w.head:])
		clear(w.tups[n:])
		w.ts, w.tups, w.head = w.ts[:n], w.tups[:n], 0
	}
	if in.ID.Edge != 0 {
		w.tracked++
	}
	w.ts, w.tups = append(w.ts, ts), append(w.tups, in)
	i := len(w.ts) - 1
	if i > w.head && w.ts[i-1] > ts { // out of order (event time): move it back
		at := w.head + sort.Search(i-w.head, func(j int) bool { return w.ts[w.head+j] > ts })
		copy(w.ts[at+1:], w.ts[at:i])
		copy(w.tups[at+1:], w.tups[at:i])
		w.ts[at], w.tups[at] = ts, in
		i = at
	}
	w.typed.Insert(i)
	return i - w.head
}

func (w *windowTask) len() int { return len(w.ts) - w.head }

// below returns how many held entries are older than t.
func (w *windowTask) below(t int64) int {
	held := w.ts[w.head:]
	return sort.Search(len(held), func(i int) bool { return held[i] >= t })
}

// from returns the index of the first of the first n held entries at or after t.
func (w *windowTask) from(t int64, n int) int {
	held := w.ts[w.head : w.head+n]
	return sort.Search(n, func(i int) bool { return held[i] >= t })
}

// track records an input's event time on its stream.
func (w *windowTask) track(in dsl.Tuple, ts int64) {
	stream := -1
	if in.Stream != nil {
		stream = in.Stream.Index
	}
	i := w.streamOf(in.Source, stream)
	if i < 0 {
		if w.known {
			return // not from an edge (an activation tuple): it moves no watermark
		}
		w.streams = append(w.streams, streamMax{source: in.Source, stream: stream})
		i = len(w.streams) - 1
	}
	if s := &w.streams[i]; !s.seen || ts > s.max {
		s.max, s.seen = ts, true
	}
}

func (w *windowTask) streamOf(source string, stream int) int {
	for i, s := range w.streams {
		if s.stream == stream && s.source == source {
			return i
		}
	}
	return -1
}

// watermark is the lowest latest event time over the input streams, minus
// the lag, once every input stream has been seen.
func (w *windowTask) watermark() (int64, bool) {
	if len(w.streams) == 0 {
		return 0, false
	}
	wm := int64(maxInt64)
	for _, s := range w.streams {
		if !s.seen {
			return 0, false
		}
		wm = min(wm, s.max)
	}
	return wm - w.lag, true
}

// lateInput sends a late input to the late stream, if any, and acks it.
func (w *windowTask) lateInput(in dsl.Tuple, ts int64, c dsl.Collector) {
	w.lateNum++
	if w.info.Metric != nil {
		w.info.Metric("window.late", w.lateNum)
	}
	if late, ok := w.typed.Late(); ok {
		c.EmitAnchored([]dsl.Tuple{in}, late)
	} else {
		w.log.Debug("window dropped a late tuple", zap.String("source", in.Source),
			zap.Time("time", time.Unix(0, ts)), zap.Time("watermark", time.Unix(0, w.wm)))
	}
	c.Ack(in)
}

// refuse fails an input that would take the task over its cap, warning once
// per run of refusals.
func (w *windowTask) refuse(in dsl.Tuple, c dsl.Collector) {
	if w.refusing == 0 {
		w.log.Warn("window is full: failing new inputs until its windows close",
			zap.Int("held", w.len()), zap.String("cap", fmt.Sprintf("%s=%d", windowMaxTuples, w.maxTuples)))
	}
	w.refusing++
	w.refused++
	if w.info.Metric != nil {
		w.info.Metric("window.refused", w.refused)
	}
	c.Fail(in)
}

// floorTo rounds t down to a multiple of d (both in nanoseconds since the epoch).
func floorTo(t, d int64) int64 {
	r := t % d
	if r < 0 {
		r += d
	}
	return t - r
}

// windowEmitter anchors a window's emits to every tuple in the window.
//
// It anchors to one input that stands for them all: its ID lists the union
// of their trees (Root and Roots, each once), which is what anchoring to each
// of them means (see [TupleID]). Built once per window, it spares every emit
// of a large window a merge of as many anchors as the window has tuples.
//
// Each input is judged by the edge it came in on, as an explicit anchor is:
// the stand-in covers only the inputs whose emits join their trees (the
// Collector's Joins, see component.Joiner), and carries the sender and stream of one of
// them, so the Collector judges the stand-in as it judged that input.
type windowEmitter struct {
	c      dsl.Collector
	window []dsl.Tuple // the window's inputs, if any is tracked
	anchor []dsl.Tuple // the stand-in, built on the window's first emit
	seen   map[uint64]struct{}
}

func (e *windowEmitter) Emit(tuple any) { e.c.EmitAnchored(e.anchors(), tuple) }

func (e *windowEmitter) EmitDirect(task int, tuple any) {
	e.c.EmitDirectAnchored(task, e.anchors(), tuple)
}

func (e *windowEmitter) anchors() []dsl.Tuple {
	if e.anchor != nil || e.window == nil {
		return e.anchor
	}
	if e.seen == nil {
		e.seen = map[uint64]struct{}{}
	}
	clear(e.seen)
	var edge uint64
	// A fresh slice per window: tuples emitted with it carry it downstream.
	var roots []uint64
	add := func(r uint64) {
		if _, dup := e.seen[r]; !dup {
			e.seen[r] = struct{}{}
			roots = append(roots, r)
		}
	}
	j, judges := e.c.(component.Joiner)
	var first *dsl.Tuple
	for i := range e.window {
		t := &e.window[i]
		if t.ID.Edge == 0 || (judges && !j.Joins(t)) {
			continue
		}
		if first == nil {
			first, edge = t, t.ID.Edge
		}
		add(t.ID.Root)
		for _, r := range t.ID.Roots {
			add(r)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	e.anchor = []dsl.Tuple{{Source: first.Source, Task: first.Task, Stream: first.Stream,
		ID: dsl.TupleID{Root: roots[0], Edge: edge, Roots: roots[1:len(roots):len(roots)]}}}
	return e.anchor
}

// badWindow is the task of a window whose spec Build rejects, should one run
// anyway: it fails every input, saying why.
type badWindow []string

func (b badWindow) Execute(in *dsl.Tuple, c dsl.Collector) error {
	if in.IsTick() {
		return nil
	}
	c.Fail(*in)
	return fmt.Errorf("bad window: %v", []string(b))
}
