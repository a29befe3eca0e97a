package dsl

import (
	"fmt"
	"reflect"
	"time"
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
	// the last watermark is late: it joins no window and is acked. A time the
	// window cannot compute with fails the input, with an error in the bolt's
	// log naming the time and the range: the range is int64 nanoseconds since
	// 1970 (the years 1678 to 2262) narrowed at each end by the window's
	// Length, Lag and two Slides, so the zero time.Time is always outside.
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
	// Now overrides the processing-time clock, which is the topology's own
	// ([TaskInfo].Now: the wall clock, or a test's manual clock given to
	// supervision.Run, so windows close as the test advances it): a tuple's
	// time is Now() when it arrives, and windows that slide by time close on
	// the first tick at or after their end. Processing time only.
	Now func() time.Time
}

// maxWindowTime bounds a window's Length, Slide and Lag. The window code
// works in int64 nanoseconds since the epoch and adds and subtracts them
// from event times; bounded, the sums cannot overflow for any event time
// inside [earliestEvent, latestEvent]. Ten years is far more than any window
// wants (Storm's are ints of milliseconds: at most 24.8 days).
const maxWindowTime = 10 * 365 * 24 * time.Hour

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
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: windowKind, Impl: def, Typed: func(info TaskInfo) TypedBolt {
		w := &windowValues[In]{spec: spec, def: def, maxTuples: info.Settings.WindowMaxTuples}
		if w.maxTuples <= 0 {
			w.maxTuples = defaults().WindowMaxTuples
		}
		if len(def.problems()) == 0 { // else the runtime's task fails every input
			w.handle = newHandler(info)
		}
		return TypedBolt{Window: w}
	}}
}

// windowValues is a windowed bolt task's typed half (see [TypedWindow]).
type windowValues[In any] struct {
	spec      WindowSpec[In]
	def       *windowDef
	maxTuples int
	handle    func(Window[In], Emitter) error
	vals      []In
	expired   []In // values of earlier windows let go of since the last call
	staged    In
}

func (w *windowValues[In]) Counts() (int, int) { return w.def.count, w.def.slideCount }
func (w *windowValues[In]) Durations() (time.Duration, time.Duration, time.Duration) {
	return w.def.length, w.def.slide, w.def.lag
}
func (w *windowValues[In]) EventTime() bool       { return w.def.eventTime }
func (w *windowValues[In]) MaxTuples() int        { return w.maxTuples }
func (w *windowValues[In]) Now() func() time.Time { return w.spec.Now }
func (w *windowValues[In]) Problems() []string    { return w.def.problems() }

func (w *windowValues[In]) Stage(in *Tuple) bool {
	v, ok := in.Value.(In)
	w.staged = v
	return ok
}

func (w *windowValues[In]) Stamp() time.Time { return w.spec.Timestamp(w.staged) }

func (w *windowValues[In]) Late() (any, bool) {
	if w.spec.Late == nil {
		return nil, false
	}
	return w.spec.Late(w.staged), true
}

func (w *windowValues[In]) Insert(at int) {
	w.vals = append(w.vals, w.staged)
	if last := len(w.vals) - 1; at < last {
		copy(w.vals[at+1:], w.vals[at:last])
		w.vals[at] = w.staged
	}
	var zero In
	w.staged = zero
}

func (w *windowValues[In]) Compact(from int) {
	n := copy(w.vals, w.vals[from:])
	clear(w.vals[n:])
	w.vals = w.vals[:n]
}

func (w *windowValues[In]) Clear(from, to int) {
	clear(w.vals[from:to])
	if to == len(w.vals) {
		w.vals = w.vals[:0]
	}
}

func (w *windowValues[In]) Expire(i int) { w.expired = append(w.expired, w.vals[i]) }

func (w *windowValues[In]) Call(from, newFrom, to int, start, end time.Time, out Emitter) error {
	defer func() { // also after a panic, which the runtime recovers
		clear(w.expired)
		w.expired = w.expired[:0]
	}()
	return w.handle(Window[In]{Tuples: w.vals[from:to], New: w.vals[newFrom:to], Expired: w.expired, Start: start, End: end}, out)
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
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"Length", d.length}, {"Slide", d.slide}, {"Lag", d.lag}} {
		if f.v > maxWindowTime && (f.name != "Slide" || !d.tumbling) { // a tumbling Slide is its Length
			p = append(p, fmt.Sprintf("window %s %v is above the maximum %v", f.name, f.v, maxWindowTime))
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
