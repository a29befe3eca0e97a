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

// Window is what a windowed bolt's handler receives each time a window closes
// (Storm's TupleWindow). Tuples are oldest first: by timestamp in event time,
// by arrival otherwise.
//
// A window that slides by time ends at a multiple of the slide since the Unix
// epoch (Storm's aligned windows) and, measured in time, holds the tuples with
// Start <= time < End. A window that slides by count ends with the tuple that
// completed the count, at its time, and, measured in time, holds the tuples
// with Start <= time <= End. Start is End minus the length for a window
// measured in time, and the time of its oldest tuple for one measured in
// tuples.
type Window[In any] struct {
	// Tuples are every tuple in the window.
	Tuples []In
	// New are the Tuples that were in no earlier call's window: a suffix of
	// Tuples.
	New []In
	// Expired are the tuples of earlier calls' windows that left since the last
	// call. They are acked already.
	Expired []In
	// Start and End bound the window in time (see [Window]).
	Start, End time.Time
}

// WindowSpec says what a windowed bolt's windows are (Storm's withWindow,
// withTumblingWindow, withTimestampField, withLag, withWatermarkInterval,
// withLateTupleStream). The length is Count or Length; the slide is SlideCount
// or Slide, and neither means a tumbling window (it slides by its length).
// Count and time mix as in Storm: Count 100 with Slide 10 s is the last 100
// tuples every 10 s.
type WindowSpec[In any] struct {
	// Count is the window's length in tuples.
	Count int
	// Length is the window's length in time.
	Length time.Duration
	// SlideCount slides the window every SlideCount tuples.
	SlideCount int
	// Slide slides the window every Slide of time.
	Slide time.Duration

	// Timestamp makes the window follow event time: each tuple's time is
	// Timestamp(tuple) instead of its arrival. It is called on the task's
	// goroutine, once per input. Windows close as the watermark passes their
	// end; the watermark is the lowest, over the bolt's input streams, of the
	// latest timestamp seen, minus Lag, computed every WatermarkInterval once
	// every input stream has delivered a tuple to the task. A tuple older than
	// the last watermark is late: it joins no window and is acked.
	Timestamp func(In) time.Time
	// Lag is how far out of order event timestamps may arrive (event time only).
	Lag time.Duration
	// WatermarkInterval is how often the bolt computes the watermark (event
	// time) or reads the clock to close windows (processing time); it is the
	// bolt's tick frequency unless the bolt's own conf sets
	// [TickFrequency]. Default: 1 s, or the Slide when that is shorter.
	WatermarkInterval time.Duration
	// Late maps a late tuple to the tuple the bolt emits for it, anchored to
	// it, before acking it: a value of a declared stream type, which other
	// bolts subscribe to as to any of the bolt's streams (Storm's late tuple
	// stream; a type that is no stream fails the late tuple, as any bad emit
	// does). Nil drops late tuples (acked, logged at debug level, counted in
	// the task's "window.late" metric). Event time only.
	Late func(In) any
	// Now is the processing-time clock (default time.Now): a tuple's time is
	// Now() when it arrives, and windows that slide by time close on the first
	// tick at or after their end. Specs that run the topology on a manual clock
	// pass its Now (sheltertest.Clock.Now), so windows close when the clock is
	// advanced. Processing time only.
	Now func() time.Time
}

// windowMaxTuples is the conf key of Settings.WindowMaxTuples. It has no
// exported constant because every exported identifier counts against the
// module's budget; Storm names its window keys topology.bolts.window.*.
const windowMaxTuples = "topology.bolts.window.max.tuples"

const windowKind = "window"

// Windowed defines a windowed bolt: it holds its inputs and calls a handler
// with each window as it closes, one handler per task, made by newHandler on
// the task's goroutine. A bolt whose input type is an interface (every stream
// it subscribes to implements it) gets join windows of all its streams.
//
// The handler is called on the task's goroutine, never concurrently, and not
// for a window with no tuples. The Window's slices are only valid during the
// call: copy what you keep. Emits through out are anchored to every tuple in
// the window, so a tuple emitted for a window that fails downstream fails every
// tuple of the window. A returned error or a panic (recovered and logged with
// its stack, including an emit's panic) fails every tuple of the window, which
// leaves the bolt (a reliable spout replays them).
//
// The bolt acks an input when it has left every window that holds it, not when
// it arrives; the handler must not ack. In processing time a window measured
// in tuples holds at most Count. Every window holds at most
// topology.bolts.window.max.tuples (default 1<<20, a conf key of the bolt or
// the topology): beyond it new inputs are failed, with a warning when that
// starts (a time window's size is its receive rate times its length). What a
// window holds when the topology stops is never acked: Stop's drain waits for
// it until the drain timeout (supervision.WithDrainTimeout; by default the
// message timeout), then the spouts nack it.
//
// [Builder.Build] checks the spec; it rejects a window on anchored inputs whose
// length plus slide in time exceeds the message timeout (Storm's check; a
// tumbling window slides by its length) and a window measured or slid in
// tuples that the reliable spouts feeding it cannot fill. A window that slides
// by time or follows event time gets tick tuples every WatermarkInterval.
func Windowed[In any](newHandler func(TaskInfo) func(w Window[In], out Emitter) error, spec WindowSpec[In]) *BoltSpec {
	def := spec.def()
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: windowKind, Impl: def, NewTask: func(info TaskInfo) any {
		if problems := def.problems(); len(problems) > 0 { // Build rejects such a spec
			return &autoAckTask[In]{h: handlerFunc[In](func(In, Emitter) error {
				return fmt.Errorf("bad window: %v", problems)
			})}
		}
		return newWindowTask(info, newHandler(info), spec, def)
	}}
}

// windowDef is a spec without its type parameter, normalized: a tumbling
// window slides by its length. Build validates it from BoltSpec.Impl.
type windowDef struct {
	count, slideCount              int
	length, slide, lag, interval   time.Duration
	eventTime, late, now, tumbling bool
}

func (s WindowSpec[In]) def() *windowDef {
	d := &windowDef{count: s.Count, slideCount: s.SlideCount, length: s.Length, slide: s.Slide,
		lag: s.Lag, interval: s.WatermarkInterval, eventTime: s.Timestamp != nil, late: s.Late != nil, now: s.Now != nil}
	if d.slideCount == 0 && d.slide == 0 {
		d.tumbling = true
		d.slideCount, d.slide = max(d.count, 0), max(d.length, 0)
	}
	if d.interval == 0 {
		d.interval = time.Second
		if d.slide > 0 {
			d.interval = min(d.interval, d.slide)
		}
	}
	return d
}

// ticks reports whether windows close on ticks: by time, or on watermarks.
func (d *windowDef) ticks() bool { return d.eventTime || d.slide > 0 }

func (d *windowDef) problems() []string {
	var p []string
	for _, f := range []struct {
		name string
		neg  bool
	}{{"Count", d.count < 0}, {"Length", d.length < 0}, {"SlideCount", d.slideCount < 0}, {"Slide", d.slide < 0},
		{"Lag", d.lag < 0}, {"WatermarkInterval", d.interval < 0}} {
		if f.neg {
			p = append(p, fmt.Sprintf("window %s is negative", f.name))
		}
	}
	if (d.count > 0) == (d.length > 0) {
		p = append(p, "a window is measured by Count (tuples) or by Length (time): set exactly one")
	}
	if !d.tumbling && d.slideCount > 0 && d.slide > 0 {
		p = append(p, "a window slides by SlideCount (tuples) or by Slide (time): set at most one")
	}
	if !d.eventTime {
		if d.lag != 0 {
			p = append(p, "Lag applies to event time only: set Timestamp")
		}
		if d.late {
			p = append(p, "Late applies to event time only: set Timestamp")
		}
	} else if d.now {
		p = append(p, "Now is the processing-time clock; a window with a Timestamp follows event time")
	}
	return p
}

// windows checks every windowed bolt and gives it tick tuples if it needs them.
func (v *validator) windows() {
	for _, c := range v.t.Components {
		if c.Bolt == nil {
			continue
		}
		d, ok := c.Bolt.Impl.(*windowDef)
		if !ok {
			continue
		}
		problems := d.problems()
		for _, p := range problems {
			v.problem("bolt %q: %s", c.ID, p)
		}
		if len(problems) > 0 {
			continue
		}
		v.windowInputs(c, d)
		if need := max(d.count, d.slideCount); need > c.Settings.WindowMaxTuples {
			v.problem("bolt %q: its window needs %d tuples, more than its cap %s=%d",
				c.ID, need, windowMaxTuples, c.Settings.WindowMaxTuples)
		}
		if !d.ticks() {
			continue
		}
		if _, own := c.Conf[TickFrequency]; !own {
			c.Settings.TickFrequency = d.interval
		} else if c.Settings.TickFrequency <= 0 {
			v.problem("bolt %q: its window closes on tick tuples, but its conf turns them off (%s)", c.ID, TickFrequency)
		}
	}
}

// windowInputs applies Storm's checks that a window on anchored inputs can
// close before its inputs' trees time out, and can fill at all.
func (v *validator) windowInputs(c *Component, d *windowDef) {
	anchored, spoutsOnly := false, true
	capacity := 0
	seen := map[string]bool{}
	for _, e := range v.t.Edges {
		if e.To != c {
			continue
		}
		anchored = anchored || e.Anchored
		if !e.Anchored || e.From.Spout == nil || !e.From.Spout.Reliable {
			spoutsOnly = false
			continue
		}
		if !seen[e.From.ID] {
			seen[e.From.ID] = true
			capacity += e.From.Settings.MaxSpoutPending * e.From.Parallelism
		}
	}
	if !anchored {
		return
	}
	var hold time.Duration
	var what string
	switch {
	case d.length > 0 && d.slide > 0:
		hold, what = d.length+d.slide, fmt.Sprintf("window length %v plus slide %v is %v", d.length, d.slide, d.length+d.slide)
	case d.length > 0:
		hold, what = d.length, fmt.Sprintf("window length %v", d.length)
	case d.slide > 0:
		hold, what = d.slide, fmt.Sprintf("window slide %v", d.slide)
	}
	if timeout := v.t.Settings.MessageTimeout; hold > timeout {
		v.problem("bolt %q: %s, more than the message timeout %v (%s): its anchored inputs would time out inside the window",
			c.ID, what, timeout, MessageTimeout)
	}
	// A window measured or slid in tuples needs that many in flight at once.
	// Only a bolt fed by reliable spouts alone has a known bound: a bolt
	// upstream may emit many tuples per message.
	if need := max(d.count, d.slideCount); spoutsOnly && need > capacity {
		v.problem("bolt %q: its window needs %d tuples in flight, but the reliable spouts feeding it keep at most %d pending (%s times parallelism): it would never fill",
			c.ID, need, capacity, MaxSpoutPending)
	}
}

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

	wm      int64 // event time: the last watermark
	hasWM   bool
	streams []streamMax
	known   bool // streams lists every input stream (from the model)

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

const minInt64 = -1 << 63

func (w *windowTask[In]) Execute(in Tuple, c Collector) error {
	if in.IsTick() {
		return w.tick(c)
	}
	v, err := inputOf[In](in, c)
	if err != nil {
		return err
	}
	var ts int64
	if w.stamp != nil {
		ts = w.stamp(v).UnixNano()
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
	wm := int64(1<<63 - 1)
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
	for _, t := range e.window {
		if t.ID.Edge == 0 {
			continue
		}
		if edge == 0 {
			edge = t.ID.Edge
		}
		add(t.ID.Root)
		for _, r := range t.ID.Roots {
			add(r)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	e.anchor = []Tuple{{ID: TupleID{Root: roots[0], Edge: edge, Roots: roots[1:len(roots):len(roots)]}}}
	return e.anchor
}
