package dsl

import (
	"fmt"
	"math/bits"
	"time"
)

// Conf holds configuration under Storm's key names. Numbers are in the unit the key
// names (seconds or milliseconds); a [time.Duration] is accepted for any time key,
// which lets tests use short timeouts. Component conf overrides topology conf.
type Conf map[string]any

// Storm configuration keys understood by goshelter. Windowed bolts also read
// "topology.bolts.window.max.tuples" (see [Settings]).
const (
	MaxSpoutPending   = "topology.max.spout.pending"                 // tuples in flight per spout task (default 128)
	AckerTasks        = "topology.acker.executors"                   // acker tasks (default 4)
	ReceiveBufferSize = "topology.executor.receive.buffer.size"      // data mailbox slots, rounded up to a power of two (default 256)
	MessageTimeout    = "topology.message.timeout.secs"              // tuple tree timeout (default 30 s)
	SpoutWait         = "topology.sleep.spout.wait.strategy.time.ms" // back-off when a spout has nothing (default 100 ms)
	Debug             = "topology.debug"                             // trace every message (default false)
	TickFrequency     = "topology.tick.tuple.freq.secs"              // tick tuples to bolts (default none)
	SubprocessTimeout = "topology.subprocess.timeout.secs"           // silence allowed from a shell child (default 30 s)
	AckerCapacity     = "goshelter.acker.capacity"                   // open trees per acker before new ones are nacked (default 1<<20)
	BatchSize         = "goshelter.batch.size"                       // tuples carried per mailbox message (default 64)
)

// Settings is a resolved configuration: defaults, then topology conf, then component conf.
type Settings struct {
	MaxSpoutPending   int
	AckerTasks        int
	ReceiveBufferSize int
	MessageTimeout    time.Duration
	SpoutWait         time.Duration
	Debug             bool
	TickFrequency     time.Duration // zero means no tick tuples
	SubprocessTimeout time.Duration
	AckerCapacity     int
	BatchSize         int
	// WindowMaxTuples is how many tuples a windowed bolt's task holds before
	// it fails new inputs (conf key "topology.bolts.window.max.tuples",
	// default 1<<20); see [Windowed].
	WindowMaxTuples int
}

// defaults returns FsShelter's defaults.
func defaults() Settings {
	return Settings{
		MaxSpoutPending:   128,
		AckerTasks:        4,
		ReceiveBufferSize: 256,
		MessageTimeout:    30 * time.Second,
		SpoutWait:         100 * time.Millisecond,
		SubprocessTimeout: 30 * time.Second,
		AckerCapacity:     1 << 20,
		BatchSize:         64,
		WindowMaxTuples:   1 << 20,
	}
}

type confField struct {
	unit time.Duration // 0 for counts, otherwise the unit of a plain number
	min  int64
	set  func(s *Settings, v int64)
}

var confFields = map[string]confField{
	MaxSpoutPending:   {min: 1, set: func(s *Settings, v int64) { s.MaxSpoutPending = int(v) }},
	AckerTasks:        {min: 0, set: func(s *Settings, v int64) { s.AckerTasks = int(v) }},
	ReceiveBufferSize: {min: 2, set: func(s *Settings, v int64) { s.ReceiveBufferSize = ceilPow2(int(v)) }},
	MessageTimeout:    {unit: time.Second, min: 1, set: func(s *Settings, v int64) { s.MessageTimeout = time.Duration(v) }},
	SpoutWait:         {unit: time.Millisecond, min: 0, set: func(s *Settings, v int64) { s.SpoutWait = time.Duration(v) }},
	TickFrequency:     {unit: time.Second, min: 0, set: func(s *Settings, v int64) { s.TickFrequency = time.Duration(v) }},
	SubprocessTimeout: {unit: time.Second, min: 1, set: func(s *Settings, v int64) { s.SubprocessTimeout = time.Duration(v) }},
	AckerCapacity:     {min: 1, set: func(s *Settings, v int64) { s.AckerCapacity = int(v) }},
	BatchSize:         {min: 1, set: func(s *Settings, v int64) { s.BatchSize = int(v) }},
	windowMaxTuples:   {min: 1, set: func(s *Settings, v int64) { s.WindowMaxTuples = int(v) }},
}

func ceilPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// resolve applies confs in order over the defaults. Unknown keys are kept for
// components that read them (Storm passes them through) and are not errors.
func resolve(confs ...Conf) (Settings, error) {
	s := defaults()
	var problems []string
	for _, c := range confs {
		problems = append(problems, c.applyTo(&s)...)
	}
	if len(problems) > 0 {
		return s, fmt.Errorf("dsl: bad conf: %v", problems)
	}
	return s, nil
}

func (c Conf) applyTo(s *Settings) (problems []string) {
	for key, raw := range c {
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

// number converts raw into a count, or into nanoseconds for time keys.
func (f confField) number(raw any) (int64, error) {
	var v int64
	switch x := raw.(type) {
	case time.Duration:
		if f.unit == 0 {
			return 0, fmt.Errorf("want a number, got a duration %v", x)
		}
		if x < time.Duration(f.min)*time.Nanosecond || (f.min > 0 && x <= 0) {
			return 0, fmt.Errorf("duration %v is too small", x)
		}
		return int64(x), nil
	case int:
		v = int64(x)
	case int32:
		v = int64(x)
	case int64:
		v = x
	case float64:
		if f.unit == 0 && x != float64(int64(x)) {
			return 0, fmt.Errorf("want a whole number, got %v", x)
		}
		if f.unit != 0 {
			return int64(x * float64(f.unit)), checkMin(int64(x*float64(f.unit)), f.min*int64(f.unit))
		}
		v = int64(x)
	default:
		return 0, fmt.Errorf("want a number, got %T", raw)
	}
	if err := checkMin(v, f.min); err != nil {
		return 0, err
	}
	if f.unit != 0 {
		v *= int64(f.unit)
	}
	return v, nil
}

func checkMin(v, min int64) error {
	if v < min {
		return fmt.Errorf("%d is below the minimum %d", v, min)
	}
	return nil
}
