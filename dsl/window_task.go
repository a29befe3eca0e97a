package dsl

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"sort"
	"time"

	"go.uber.org/zap"
)

// The task a Windowed spec runs: it holds inputs, closes windows on the count
// or the clock (watermark), calls the handler, and acks what left every window.

// windowTask runs a windowed bolt's task. It holds its inputs in three
// parallel slices, oldest first, so a window is a subslice handed to the
// handler without copying. Entries leave from the head only: the held tuples
// that can be in no future window are always the oldest.
type windowTask[In any] struct {
	handle func(Window[In], Emitter) error
	info   TaskInfo
	log    *zap.Logger
	now    func() time.Time
	stamp  func(In) time.Time // event time, or nil
	late   func(In) any

	count, slideCount int   // in tuples; 0 when in time
	length, slide     int64 // in nanoseconds; 0 when in tuples
	lag               int64

	head    int // held entries are ts[head:], vals[head:], tups[head:]
	ts      []int64
	vals    []In
	tups    []Tuple
	tracked int   // held entries on a tuple tree, for anchoring
	shown   int   // the first shown held entries have been in a window
	evicted int64 // entries that left so far: the head's rank
	expired []In  // shown entries that left since the last call

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

func newWindowTask[In any](info TaskInfo, handle func(Window[In], Emitter) error, spec WindowSpec[In], d *windowDef) *windowTask[In] {
	w := &windowTask[In]{
		handle: handle, info: info, log: info.Logger, now: spec.Now, stamp: spec.Timestamp, late: spec.Late,
		count: d.count, slideCount: d.slideCount, length: int64(d.length), slide: int64(d.slide), lag: int64(d.lag),
		lastTrig: -1, deadTs: minInt64, deadRank: -1, maxTuples: info.Settings.WindowMaxTuples,
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
	if w.maxTuples <= 0 {
		w.maxTuples = defaults().WindowMaxTuples
	}
	if w.stamp == nil && w.count > 0 && w.slideCount > w.count {
		// Windows that skip tuples (SlideCount above Count): the tuples before
		// the first window's are in none.
		w.deadRank = int64(w.slideCount - 1 - w.count)
	}
	if w.stamp != nil {
		margin := d.windowMargin()
		w.earliest, w.latest = time.Unix(0, minInt64+margin), time.Unix(0, maxInt64-margin)
	}
	if m := info.Model; m != nil && w.stamp != nil {
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

func (w *windowTask[In]) Execute(t *Tuple, c Collector) error {
	if t.IsTick() {
		return w.tick(c)
	}
	in := *t // held in the window: a copy, as the input's batch is reused
	v, ok := t.Value.(In)
	if !ok { // Build only lets assignable streams in: this guards other producers (shell)
		c.Fail(in)
		return fmt.Errorf("input of type %T is not %v", t.Value, reflect.TypeFor[In]())
	}
	var err error
	var ts int64
	if w.stamp != nil {
		at := w.stamp(v)
		if at.Before(w.earliest) || at.After(w.latest) {
			// UnixNano would wrap it into some other window: refuse it.
			c.Fail(in)
			return fmt.Errorf("event time %v is outside the range a window can compute with, %v to %v",
				at, w.earliest.UTC(), w.latest.UTC())
		}
		ts = at.UnixNano()
		w.track(in, ts)
		if w.hasWM && ts < w.wm {
			w.lateInput(in, v, ts, c)
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
	i := w.insert(ts, v, in)
	if w.stamp == nil && w.slide > 0 && !w.hasNext {
		// In processing time later tuples are never older, so the window this
		// one ends in is the next to close (and bounds a Count window at once).
		w.nextEnd, w.hasNext = floorTo(ts, w.slide)+w.slide, true
	}
	if w.stamp == nil && w.length > 0 && w.slideCount > 0 {
		// The next window ends with a later tuple, so it starts after ts-length.
		w.deadTs = max(w.deadTs, ts-w.length)
	}
	if w.stamp == nil && w.slideCount > 0 && w.evicted+int64(i) == w.lastTrig+int64(w.slideCount) {
		w.lastTrig = w.evicted + int64(i)
		err = w.evaluate(i, ts, c)
	}
	w.evict(c)
	return err
}

// tick closes the windows whose end the clock or the watermark has passed.
func (w *windowTask[In]) tick(c Collector) error {
	if w.stamp == nil {
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
func (w *windowTask[In]) closeUntil(frontier int64, c Collector) error {
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
func (w *windowTask[In]) evaluate(p int, end int64, c Collector) error {
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
		if w.stamp != nil {
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
func (w *windowTask[In]) call(n int, end int64, c Collector) error {
	start := end - w.length
	if w.count > 0 {
		start = w.ts[w.head]
	}
	win := Window[In]{
		Tuples:  w.vals[w.head : w.head+n],
		New:     w.vals[w.head+min(w.shown, n) : w.head+n],
		Expired: w.expired,
		Start:   time.Unix(0, start),
		End:     time.Unix(0, end),
	}
	w.out.c, w.out.window, w.out.anchor = c, nil, nil
	if w.tracked > 0 {
		w.out.window = w.tups[w.head : w.head+n]
	}
	err := w.run(win)
	w.out.c, w.out.window, w.out.anchor = nil, nil, nil
	clear(w.expired)
	w.expired = w.expired[:0]
	w.shown = max(w.shown, n)
	if err == nil {
		return nil
	}
	for _, t := range w.tups[w.head : w.head+n] {
		c.Fail(t)
	}
	w.drop(n)
	return fmt.Errorf("window [%v, %v] of %d tuples failed: %w", win.Start, win.End, n, err)
}

// run calls the handler, turning a panic into an error with its stack.
func (w *windowTask[In]) run(win Window[In]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return w.handle(win, &w.out)
}

// evict lets go of the oldest entries that no future window can hold.
func (w *windowTask[In]) evict(c Collector) {
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
func (w *windowTask[In]) evictN(n int, c Collector) {
	for i := w.head; i < w.head+n; i++ {
		c.Ack(w.tups[i])
		if i-w.head < w.shown {
			w.expired = append(w.expired, w.vals[i])
		}
	}
	w.drop(n)
}

// drop lets go of the n oldest entries (settled already).
func (w *windowTask[In]) drop(n int) {
	if n == 0 {
		return
	}
	for i := w.head; i < w.head+n; i++ {
		if w.tups[i].ID.Edge != 0 {
			w.tracked--
		}
	}
	var zero In
	for i := w.head; i < w.head+n; i++ { // let the values be collected
		w.vals[i], w.tups[i] = zero, Tuple{}
	}
	w.head += n
	w.evicted += int64(n)
	w.shown = max(0, w.shown-n)
	if w.head == len(w.ts) {
		w.head, w.ts, w.vals, w.tups = 0, w.ts[:0], w.vals[:0], w.tups[:0]
	}
}

// insert adds an entry in time order (after any with the same time) and
// returns its index among the held entries.
func (w *windowTask[In]) insert(ts int64, v In, in Tuple) int {
	if w.head > 0 && w.head >= len(w.ts)/2 { // reuse the space left at the head
		n := copy(w.ts, w.ts[w.head:])
		copy(w.vals, w.vals[w.head:])
		copy(w.tups, w.tups[w.head:])
		var zero In
		for i := n; i < len(w.ts); i++ {
			w.vals[i], w.tups[i] = zero, Tuple{}
		}
		w.ts, w.vals, w.tups, w.head = w.ts[:n], w.vals[:n], w.tups[:n], 0
	}
	if in.ID.Edge != 0 {
		w.tracked++
	}
	w.ts, w.vals, w.tups = append(w.ts, ts), append(w.vals, v), append(w.tups, in)
	i := len(w.ts) - 1
	if i > w.head && w.ts[i-1] > ts { // out of order (event time): move it back
		at := w.head + sort.Search(i-w.head, func(j int) bool { return w.ts[w.head+j] > ts })
		copy(w.ts[at+1:], w.ts[at:i])
		copy(w.vals[at+1:], w.vals[at:i])
		copy(w.tups[at+1:], w.tups[at:i])
		w.ts[at], w.vals[at], w.tups[at] = ts, v, in
		i = at
	}
	return i - w.head
}

func (w *windowTask[In]) len() int { return len(w.ts) - w.head }

// below returns how many held entries are older than t.
func (w *windowTask[In]) below(t int64) int {
	held := w.ts[w.head:]
	return sort.Search(len(held), func(i int) bool { return held[i] >= t })
}

// from returns the index of the first of the first n held entries at or after t.
func (w *windowTask[In]) from(t int64, n int) int {
	held := w.ts[w.head : w.head+n]
	return sort.Search(n, func(i int) bool { return held[i] >= t })
}

// track records an input's event time on its stream.
func (w *windowTask[In]) track(in Tuple, ts int64) {
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

func (w *windowTask[In]) streamOf(source string, stream int) int {
	for i, s := range w.streams {
		if s.stream == stream && s.source == source {
			return i
		}
	}
	return -1
}

// watermark is the lowest latest event time over the input streams, minus
// the lag, once every input stream has been seen.
func (w *windowTask[In]) watermark() (int64, bool) {
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
func (w *windowTask[In]) lateInput(in Tuple, v In, ts int64, c Collector) {
	w.lateNum++
	if w.info.Metric != nil {
		w.info.Metric("window.late", w.lateNum)
	}
	if w.late != nil {
		c.EmitAnchored([]Tuple{in}, w.late(v))
	} else {
		w.log.Debug("window dropped a late tuple", zap.String("source", in.Source),
			zap.Time("time", time.Unix(0, ts)), zap.Time("watermark", time.Unix(0, w.wm)))
	}
	c.Ack(in)
}

// refuse fails an input that would take the task over its cap, warning once
// per run of refusals.
func (w *windowTask[In]) refuse(in Tuple, c Collector) {
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
// Collector's Joins, see joiner), and carries the sender and stream of one of
// them, so the Collector judges the stand-in as it judged that input.
type windowEmitter struct {
	c      Collector
	window []Tuple // the window's inputs, if any is tracked
	anchor []Tuple // the stand-in, built on the window's first emit
	seen   map[uint64]struct{}
}

func (e *windowEmitter) Emit(tuple any) { e.c.EmitAnchored(e.anchors(), tuple) }

func (e *windowEmitter) EmitDirect(task int, tuple any) {
	e.c.EmitDirectAnchored(task, e.anchors(), tuple)
}

func (e *windowEmitter) anchors() []Tuple {
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
	j, judges := e.c.(joiner)
	var first *Tuple
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
	e.anchor = []Tuple{{Source: first.Source, Task: first.Task, Stream: first.Stream,
		ID: TupleID{Root: roots[0], Edge: edge, Roots: roots[1:len(roots):len(roots)]}}}
	return e.anchor
}

// joiner is implemented by the runtime's Collectors and multilang.Serve's
// (internal/component.Joiner): Joins reports whether an emit anchored to in
// joins in's trees, by the anchoring of the edge in came in on. A Collector
// without it (a test's) has every tracked input judged to join.
type joiner interface {
	Joins(in *Tuple) bool
}

// badWindow is the task of a window whose spec Build rejects, should one run
// anyway: it fails every input, saying why.
type badWindow []string

func (b badWindow) Execute(in *Tuple, c Collector) error {
	if in.IsTick() {
		return nil
	}
	c.Fail(*in)
	return fmt.Errorf("bad window: %v", []string(b))
}
