package dsl

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Conf holds configuration under Storm's key names. Numbers are in the unit the key
// names (seconds or milliseconds); a [time.Duration] is accepted for any time key,
// which lets tests use short timeouts. Component conf overrides topology conf.
type Conf map[string]any

// Storm configuration keys understood by goshelter. Every number is checked
// against a range at Build, so an absurd value fails there with the key named
// instead of exhausting memory at run time.
// Windowed bolts also read "topology.bolts.window.max.tuples" (see [Settings]);
// shell bolts read "topology.shellbolt.max.pending", inputs queued for a
// child, 1..2^31-1 (default 100); memory grows only with what is queued.
const (
	MaxSpoutPending    = "topology.max.spout.pending"                 // trees in flight per spout task, 1..2^31-1 (default 128); memory grows only with what is pending
	AckerTasks         = "topology.acker.tasks"                       // acker tasks, 0..1024 (default 4; the executors' count when only that is set): the ackers that run
	AckerExecutors     = "topology.acker.executors"                   // acker executors, 0..1024 (default 2, at most the tasks); Storm's threads, no effect here (see [Settings])
	ReceiveBufferSize  = "topology.executor.receive.buffer.size"      // data mailbox slots, each a batch of up to BatchSize tuples, 2..2^20, rounded up to a power of two (default 256: 16,384 tuples per task)
	MessageTimeout     = "topology.message.timeout.secs"              // tuple tree timeout, at least 1 ms (default 30 s)
	SpoutWait          = "topology.sleep.spout.wait.strategy.time.ms" // back-off when a spout has nothing (default 100 ms)
	Debug              = "topology.debug"                             // trace every message (default false)
	TickFrequency      = "topology.tick.tuple.freq.secs"              // tick tuples to bolts (default none)
	SubprocessTimeout  = "topology.subprocess.timeout.secs"           // silence allowed from a shell child (default 30 s)
	BatchFlushInterval = "topology.batch.flush.interval.millis"       // longest a tuple waits in a batch, about (default 1 ms; 0: only full or idle batches flush)
	AckerCapacity      = "goshelter.acker.capacity"                   // open trees per acker before new ones are nacked, 1..2^31-1 (default 1<<20)
	BatchSize          = "goshelter.batch.size"                       // tuples carried per mailbox message, 1..65536 (default 64)
	CheckpointInterval = "topology.state.checkpoint.interval.ms"      // checkpoints of a topology with Stateful bolts, 1 ms..1 day (default 1000 ms), at most half the message timeout
)

// Settings is a resolved configuration: defaults, then topology conf, then component conf.
type Settings struct {
	MaxSpoutPending int
	// AckerTasks is how many acker tasks run. Every task is an actor of its
	// own, so this count is what sizes the ackers.
	AckerTasks int
	// AckerExecutors is Storm's count of threads serving the acker tasks, as
	// FsShelter and Storm read it: the tasks default to it when only it is
	// set, and it is lowered to the tasks when they are fewer. goshelter has
	// no executors (every task is an actor), so it has no further effect
	// here; it is range-checked and exported to Storm (multilang.Flux).
	AckerExecutors     int
	ReceiveBufferSize  int
	MessageTimeout     time.Duration
	SpoutWait          time.Duration
	Debug              bool
	TickFrequency      time.Duration // zero means no tick tuples
	SubprocessTimeout  time.Duration
	BatchFlushInterval time.Duration // zero: batches flush when full or idle only
	AckerCapacity      int
	BatchSize          int
	// WindowMaxTuples is how many tuples a windowed bolt's task holds before
	// it fails new inputs (conf key "topology.bolts.window.max.tuples",
	// default 1<<20); see [Windowed].
	WindowMaxTuples int
	// CheckpointInterval is how often a topology with [Stateful] bolts takes
	// a checkpoint (conf key "topology.state.checkpoint.interval.ms").
	CheckpointInterval time.Duration
}

// defaults returns FsShelter's defaults, and Storm's for the flush interval.
func defaults() Settings {
	return Settings{
		MaxSpoutPending:    128,
		AckerTasks:         4,
		AckerExecutors:     2,
		ReceiveBufferSize:  256,
		MessageTimeout:     30 * time.Second,
		SpoutWait:          100 * time.Millisecond,
		SubprocessTimeout:  30 * time.Second,
		BatchFlushInterval: time.Millisecond,
		AckerCapacity:      1 << 20,
		BatchSize:          64,
		WindowMaxTuples:    1 << 20,
		CheckpointInterval: time.Second,
	}
}

// maxTime bounds every time key: a day is more than any timeout wants, and
// far from overflowing a time.Duration.
const maxTime = 24 * time.Hour

type confField struct {
	unit     time.Duration // 0 for counts, otherwise the unit of a plain number
	min, max int64         // in the key's unit
	// least is the smallest duration the key takes when given as a
	// time.Duration (finer than its unit), if that is above one nanosecond.
	least time.Duration
	why   string // why least is the minimum
	set   func(s *Settings, v int64)
}

// minMessageTimeout is the shortest message timeout: the ackers rotate their
// buckets every half timeout (package acker), so a timeout of a nanosecond
// would never rotate (the period rounds to zero) and a few microseconds would
// post a rotation to every acker and spout faster than they can take it.
const minMessageTimeout = time.Millisecond

var confFields = map[string]confField{
	MaxSpoutPending:    {min: 1, max: math.MaxInt32, set: func(s *Settings, v int64) { s.MaxSpoutPending = int(v) }},
	AckerTasks:         {min: 0, max: 1024, set: func(s *Settings, v int64) { s.AckerTasks = int(v) }},
	AckerExecutors:     {min: 0, max: 1024, set: func(s *Settings, v int64) { s.AckerExecutors = int(v) }},
	ReceiveBufferSize:  {min: 2, max: 1 << 20, set: func(s *Settings, v int64) { s.ReceiveBufferSize = ceilPow2(int(v)) }},
	MessageTimeout:     messageTimeoutField(),
	SpoutWait:          timeField(time.Millisecond, 0, func(s *Settings, d time.Duration) { s.SpoutWait = d }),
	TickFrequency:      timeField(time.Second, 0, func(s *Settings, d time.Duration) { s.TickFrequency = d }),
	SubprocessTimeout:  timeField(time.Second, 1, func(s *Settings, d time.Duration) { s.SubprocessTimeout = d }),
	BatchFlushInterval: timeField(time.Millisecond, 0, func(s *Settings, d time.Duration) { s.BatchFlushInterval = d }),
	CheckpointInterval: timeField(time.Millisecond, 1, func(s *Settings, d time.Duration) { s.CheckpointInterval = d }),
	AckerCapacity:      {min: 1, max: math.MaxInt32, set: func(s *Settings, v int64) { s.AckerCapacity = int(v) }},
	BatchSize:          {min: 1, max: 1 << 16, set: func(s *Settings, v int64) { s.BatchSize = int(v) }},
	windowMaxTuples:    {min: 1, max: math.MaxInt32, set: func(s *Settings, v int64) { s.WindowMaxTuples = int(v) }},
	// multilang reads it from the conf; it is only checked here.
	shellBoltMaxPending: {min: 1, max: math.MaxInt32, set: func(*Settings, int64) {}},
	// Build checks it against each component's parallelism (taskCount).
	topologyTasks: {min: 1, max: maxParallelism, set: func(*Settings, int64) {}},
}

// topologyTasks is Storm's conf key for a component's task count (its
// TopologyBuilder's setNumTasks), with the parallelism hint as the count of
// executors running those tasks. goshelter runs every task on an executor of
// its own (an actor), so a component's task count is its parallelism
// ([Parallelism]): Build accepts the key only where it equals that.
const topologyTasks = "topology.tasks"

// shellBoltMaxPending is Storm's conf key for the inputs a shell bolt queues
// for its child (package multilang).
const shellBoltMaxPending = "topology.shellbolt.max.pending"

// timeField is a key counted in unit, from min units up to a day.
func timeField(unit time.Duration, min int64, set func(*Settings, time.Duration)) confField {
	return confField{unit: unit, min: min, max: int64(maxTime / unit), set: func(s *Settings, v int64) { set(s, time.Duration(v)) }}
}

func messageTimeoutField() confField {
	f := timeField(time.Second, 1, func(s *Settings, d time.Duration) { s.MessageTimeout = d })
	f.least, f.why = minMessageTimeout, "the ackers rotate their buckets every half timeout"
	return f
}

func ceilPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// resolve applies topology confs in order over the defaults. Unknown keys are
// kept for components that read them (Storm passes them through) and are not
// errors (Build warns of the ones that look like typos, see keys.go).
func resolve(confs ...Conf) (Settings, error) {
	s := defaults()
	var problems []string
	for _, c := range confs {
		problems = append(problems, c.applyTo(&s)...)
	}
	if len(problems) == 0 {
		problems = s.ackers(confs)
	}
	if len(problems) > 0 {
		return s, fmt.Errorf("dsl: bad conf: %v", problems)
	}
	return s, nil
}

// ackers relates the acker tasks and executors as Storm relates a
// component's tasks and executors: the tasks default to the executors (when
// only the executors are set), and executors beyond the tasks would have no
// task to run, so they are lowered to the tasks. Executors set to 0 with
// tasks set above 0 contradict each other: an error names both keys.
func (s *Settings) ackers(confs []Conf) []string {
	var tasksSet, executorsSet bool
	for _, c := range confs {
		_, t := c[AckerTasks]
		_, e := c[AckerExecutors]
		tasksSet, executorsSet = tasksSet || t, executorsSet || e
	}
	switch {
	case executorsSet && !tasksSet:
		s.AckerTasks = s.AckerExecutors
	case tasksSet && executorsSet && s.AckerExecutors == 0 && s.AckerTasks > 0:
		return []string{fmt.Sprintf("conf %q is 0 (no ackers) but %q is %d: set %q to 0 to turn acking off, or %q above 0",
			AckerExecutors, AckerTasks, s.AckerTasks, AckerTasks, AckerExecutors)}
	}
	s.AckerExecutors = min(s.AckerExecutors, s.AckerTasks)
	return nil
}

func (c Conf) applyTo(s *Settings) (problems []string) {
	for _, key := range sortedKeys(c) { // every problem, in a stable order
		raw := c[key]
		if key == Debug {
			b, ok := raw.(bool)
			if !ok {
				problems = append(problems, fmt.Sprintf("conf %q: want a bool, got %T", key, raw))
				continue
			}
			s.Debug = b
			continue
		}
		f, known := confFields[key]
		if !known {
			continue
		}
		v, err := f.number(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("conf %q: %v", key, err))
			continue
		}
		f.set(s, v)
	}
	return problems
}

// number converts raw into a count, or into nanoseconds for time keys, and
// checks it against the key's range.
func (f confField) number(raw any) (int64, error) {
	if d, ok := raw.(time.Duration); ok {
		if f.unit == 0 {
			return 0, fmt.Errorf("want a number, got a duration %v", d)
		}
		// A duration may be finer than the key's unit (tests use 250ms
		// timeouts); it must only be positive where the key's minimum is.
		switch hi := time.Duration(f.max) * f.unit; {
		case d < 0 || (f.min > 0 && d == 0):
			return 0, fmt.Errorf("duration %v is too small", d)
		case d < f.least:
			return 0, fmt.Errorf("duration %v is below the minimum %v (%s)", d, f.least, f.why)
		case d > hi:
			return 0, fmt.Errorf("duration %v is above the maximum %v", d, hi)
		}
		return int64(d), nil
	}
	var v int64
	switch x := raw.(type) {
	case int:
		v = int64(x)
	case int32:
		v = int64(x)
	case int64:
		v = x
	case float64:
		return f.float(x)
	default:
		return 0, fmt.Errorf("want a number, got %T", raw)
	}
	if err := f.check(v); err != nil {
		return 0, err
	}
	if f.unit != 0 {
		v *= int64(f.unit)
	}
	return v, nil
}

// float converts a JSON-style number: whole for counts, any finite value in
// range for time keys (0.5 seconds is half a second).
func (f confField) float(x float64) (int64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%v is not a number of %s", x, f.unitName())
	}
	if f.unit == 0 && x != math.Trunc(x) {
		return 0, fmt.Errorf("want a whole number, got %v", x)
	}
	switch {
	case x < float64(f.min):
		return 0, fmt.Errorf("%v is below the minimum %d", x, f.min)
	case x > float64(f.max):
		return 0, fmt.Errorf("%v is above the maximum %d", x, f.max)
	}
	if f.unit == 0 {
		return int64(x), nil
	}
	return int64(x * float64(f.unit)), nil
}

func (f confField) check(v int64) error {
	switch {
	case v < f.min:
		return fmt.Errorf("%d is below the minimum %d", v, f.min)
	case v > f.max:
		return fmt.Errorf("%d is above the maximum %d", v, f.max)
	}
	return nil
}

func (f confField) unitName() string {
	switch f.unit {
	case 0:
		return "items"
	case time.Second:
		return "seconds"
	}
	return "milliseconds"
}
