package dsl

// In-package tests of the conf resolution and the key hash, which Build and
// Fields use and which are not exported.

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	want := Settings{
		MaxSpoutPending:   128,
		AckerTasks:        4,
		ReceiveBufferSize: 256,
		MessageTimeout:    30 * time.Second,
		SpoutWait:         100 * time.Millisecond,
		Debug:             false,
		TickFrequency:     0, // no tick tuples unless asked for
	}
	got, err := resolve()
	if err != nil {
		t.Fatalf("resolve() error: %v", err)
	}
	check := []struct {
		name      string
		got, want any
	}{
		{"max spout pending", got.MaxSpoutPending, want.MaxSpoutPending},
		{"acker tasks", got.AckerTasks, want.AckerTasks},
		{"receive buffer", got.ReceiveBufferSize, want.ReceiveBufferSize},
		{"message timeout", got.MessageTimeout, want.MessageTimeout},
		{"spout wait", got.SpoutWait, want.SpoutWait},
		{"debug", got.Debug, want.Debug},
		{"tick frequency", got.TickFrequency, want.TickFrequency},
	}
	for _, c := range check {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got != defaults() {
		t.Errorf("resolve() = %+v, want defaults() %+v", got, defaults())
	}
	if nilConf, _ := resolve(nil); nilConf != got {
		t.Errorf("resolve(nil) = %+v, want the defaults", nilConf)
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name  string
		confs []Conf
		want  func(s *Settings) // changes from the defaults
	}{
		{"max spout pending", []Conf{{MaxSpoutPending: 1024}}, func(s *Settings) { s.MaxSpoutPending = 1024 }},
		{"a whole float from JSON counts as a number", []Conf{{MaxSpoutPending: 3.0}}, func(s *Settings) { s.MaxSpoutPending = 3 }},
		{"int64 and int32", []Conf{{AckerTasks: int64(2), MaxSpoutPending: int32(7)}}, func(s *Settings) { s.AckerTasks, s.MaxSpoutPending = 2, 7 }},
		{"no ackers", []Conf{{AckerTasks: 0}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 0, 0 }},
		{"acker tasks alone keep the default executors", []Conf{{AckerTasks: 6}}, func(s *Settings) { s.AckerTasks = 6 }},
		{"acker tasks below the default executors lower them", []Conf{{AckerTasks: 1}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 1, 1 }},
		{"acker executors alone set the tasks too", []Conf{{AckerExecutors: 3}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 3, 3 }},
		{"acker executors 0 alone turn acking off", []Conf{{AckerExecutors: 0}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 0, 0 }},
		{"acker executors above the tasks are lowered", []Conf{{AckerTasks: 2, AckerExecutors: 5}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 2, 2 }},
		{"acker executors below the tasks", []Conf{{AckerTasks: 8, AckerExecutors: 3}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 8, 3 }},
		{"acker keys from different confs", []Conf{{AckerExecutors: 3}, {AckerTasks: 6}}, func(s *Settings) { s.AckerTasks, s.AckerExecutors = 6, 3 }},
		{"receive buffer already a power of two", []Conf{{ReceiveBufferSize: 1024}}, func(s *Settings) { s.ReceiveBufferSize = 1024 }},
		{"receive buffer 100 rounds up to 128", []Conf{{ReceiveBufferSize: 100}}, func(s *Settings) { s.ReceiveBufferSize = 128 }},
		{"receive buffer 257 rounds up to 512", []Conf{{ReceiveBufferSize: 257}}, func(s *Settings) { s.ReceiveBufferSize = 512 }},
		{"receive buffer 3 rounds up to 4", []Conf{{ReceiveBufferSize: 3}}, func(s *Settings) { s.ReceiveBufferSize = 4 }},
		{"receive buffer minimum 2", []Conf{{ReceiveBufferSize: 2}}, func(s *Settings) { s.ReceiveBufferSize = 2 }},
		{"message timeout in seconds", []Conf{{MessageTimeout: 10}}, func(s *Settings) { s.MessageTimeout = 10 * time.Second }},
		{"message timeout as fractional seconds", []Conf{{MessageTimeout: 1.5}}, func(s *Settings) { s.MessageTimeout = 1500 * time.Millisecond }},
		{"message timeout as a duration", []Conf{{MessageTimeout: 250 * time.Millisecond}}, func(s *Settings) { s.MessageTimeout = 250 * time.Millisecond }},
		{"message timeout at its minimum", []Conf{{MessageTimeout: time.Millisecond}}, func(s *Settings) { s.MessageTimeout = time.Millisecond }},
		{"spout wait in milliseconds", []Conf{{SpoutWait: 5}}, func(s *Settings) { s.SpoutWait = 5 * time.Millisecond }},
		{"spout wait zero", []Conf{{SpoutWait: 0}}, func(s *Settings) { s.SpoutWait = 0 }},
		{"spout wait as a duration", []Conf{{SpoutWait: 2 * time.Second}}, func(s *Settings) { s.SpoutWait = 2 * time.Second }},
		{"tick frequency in seconds", []Conf{{TickFrequency: 3}}, func(s *Settings) { s.TickFrequency = 3 * time.Second }},
		{"debug on", []Conf{{Debug: true}}, func(s *Settings) { s.Debug = true }},
		{"unknown keys are kept for components and ignored here", []Conf{{"my.own.key": "x"}}, func(*Settings) {}},
		{"later confs override earlier ones", []Conf{{MaxSpoutPending: 10, TickFrequency: 5}, {MaxSpoutPending: 20}},
			func(s *Settings) { s.MaxSpoutPending, s.TickFrequency = 20, 5*time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := defaults()
			tt.want(&want)
			got, err := resolve(tt.confs...)
			if err != nil {
				t.Fatalf("resolve(%v) error: %v", tt.confs, err)
			}
			if got != want {
				t.Errorf("resolve(%v)\n got %+v\nwant %+v", tt.confs, got, want)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	got := unknownKeys(Conf{
		"topology.max.spout.pendng": 1, "goshelter.batch.sise": 2, // typos
		"topology.workers": 3, "topology.kryo.register": nil, "topology.tasks": 4, "topology.name": "x", // Storm's
		MaxSpoutPending: 5, AckerTasks: 1, windowMaxTuples: 2, "goshelter.multilang.metrics": true, // goshelter's
		"my.own.key": 1, "topologyish": 2, // the application's
		"topology.backpressure.wait.progressive.levelx.count": 1, // as close to level1, level2 and level3
		"topology.workersz": 1, // after every known key
	})
	want := []string{
		`conf "goshelter.batch.sise" is not a key goshelter or Storm knows; the closest known key is "goshelter.batch.size"`,
		`conf "topology.backpressure.wait.progressive.levelx.count" is not a key goshelter or Storm knows; the closest known key is "topology.backpressure.wait.progressive.level1.count"`,
		`conf "topology.max.spout.pendng" is not a key goshelter or Storm knows; the closest known key is "topology.max.spout.pending"`,
		`conf "topology.workersz" is not a key goshelter or Storm knows; the closest known key is "topology.workers"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("unknownKeys:\n got %q\nwant %q", got, want)
	}
	for i := 1; i < len(knownKeys); i++ {
		if knownKeys[i-1] == knownKeys[i] {
			t.Errorf("%q is known twice: a key goshelter reads must not be in stormOnly too", knownKeys[i])
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"pending", "pendng", 1}, {"ab", "ba", 2}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestResolveRejectsBadValues(t *testing.T) {
	tests := []struct {
		name string
		conf Conf
		want string // in the error, with the key
	}{
		{"count of the wrong type", Conf{MaxSpoutPending: "many"}, `conf "topology.max.spout.pending": want a number, got string`},
		{"count below its minimum", Conf{MaxSpoutPending: 0}, `conf "topology.max.spout.pending": 0 is below the minimum 1`},
		{"fractional count", Conf{AckerTasks: 1.5}, `conf "topology.acker.tasks": want a whole number, got 1.5`},
		{"duration for a count", Conf{AckerExecutors: time.Second}, `conf "topology.acker.executors": want a number, got a duration 1s`},
		{"acker executors above the maximum", Conf{AckerExecutors: 1025}, `conf "topology.acker.executors": 1025 is above the maximum 1024`},
		{"acker executors below the minimum", Conf{AckerExecutors: -1}, `conf "topology.acker.executors": -1 is below the minimum 0`},
		{"acker tasks with no executors", Conf{AckerTasks: 4, AckerExecutors: 0},
			`conf "topology.acker.executors" is 0 (no ackers) but "topology.acker.tasks" is 4: set "topology.acker.tasks" to 0 to turn acking off, or "topology.acker.executors" above 0`},
		{"receive buffer of one slot", Conf{ReceiveBufferSize: 1}, `conf "topology.executor.receive.buffer.size": 1 is below the minimum 2`},
		{"negative timeout", Conf{MessageTimeout: -5}, `conf "topology.message.timeout.secs": -5 is below the minimum 1`},
		{"zero duration timeout", Conf{MessageTimeout: time.Duration(0)}, `conf "topology.message.timeout.secs": duration 0s is too small`},
		{"timeout too short to rotate", Conf{MessageTimeout: time.Nanosecond}, `conf "topology.message.timeout.secs": duration 1ns is below the minimum 1ms`},
		{"timeout just short of the minimum", Conf{MessageTimeout: time.Millisecond - 1}, `duration 999.999µs is below the minimum 1ms`},
		{"negative spout wait", Conf{SpoutWait: -time.Millisecond}, `conf "topology.sleep.spout.wait.strategy.time.ms": duration -1ms is too small`},
		{"debug not a bool", Conf{Debug: 1}, `conf "topology.debug": want a bool, got int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolve(tt.conf)
			if err == nil {
				t.Fatalf("resolve(%v) = nil error, want one containing %q", tt.conf, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("resolve(%v) error %q, want it to contain %q", tt.conf, err, tt.want)
			}
		})
	}
}

type (
	hashWord  string
	hashSmall int8
	hashByte  uint8
	hashFloat float32
)

// TestHashKey pins the key hash: fields groupings must send a key to the same
// task in every process and every run, so these values may never change.
func TestHashKey(t *testing.T) {
	tests := []struct {
		name string
		got  uint64
		want uint64
	}{
		// Published FNV-1a 64-bit test vectors.
		{`""`, hashKey(""), 0xcbf29ce484222325},
		{`"a"`, hashKey("a"), 0xaf63dc4c8601ec8c},
		{`"foobar"`, hashKey("foobar"), 0x85944171f73967e8},
		// The splitmix64 finaliser: its first output for seed 0 mixes the golden gamma.
		{"uint64 golden gamma", hashKey(uint64(0x9e3779b97f4a7c15)), 0xe220a8397b1dcdaf},
		{"zero", hashKey(0), 0},
		// Values pinned from this implementation.
		{`"apple"`, hashKey("apple"), 0xf74a62a458befdbf},
		{"42", hashKey(42), 0xa759ea27d4727622},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("hashKey(%s) = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}

func TestHashKeyAgreesAcrossTypesOfTheSameValue(t *testing.T) {
	tests := []struct {
		name string
		a, b uint64
	}{
		{"named string", hashKey(hashWord("foobar")), hashKey("foobar")},
		{"int and int64", hashKey(42), hashKey(int64(42))},
		{"int32 and int64, negative", hashKey(int32(-7)), hashKey(int64(-7))},
		{"named int8 and int64", hashKey(hashSmall(-7)), hashKey(int64(-7))},
		{"uint8 and uint64", hashKey(uint8(200)), hashKey(uint64(200))},
		{"named uint8 and uint", hashKey(hashByte(200)), hashKey(uint(200))},
		{"uint32 and uint64", hashKey(uint32(math.MaxUint32)), hashKey(uint64(math.MaxUint32))},
		{"float64 bits", hashKey(1.5), hashKey(math.Float64bits(1.5))},
		{"true", hashKey(true), hashKey(1)},
		{"0 and -0", hashKey(0.0), hashKey(math.Copysign(0, -1))},
		{"float32 0 and -0", hashKey(float32(0)), hashKey(float32(math.Copysign(0, -1)))},
		{"named float -0 and 0", hashKey(hashFloat(math.Copysign(0, -1))), hashKey(0.0)},
		{"NaN and negative NaN", hashKey(math.NaN()), hashKey(math.Copysign(math.NaN(), -1))},
		{"NaN and a NaN with another payload", hashKey(math.NaN()), hashKey(math.Float64frombits(0x7ff0000000000bad))},
		{"float32 NaN and float64 NaN", hashKey(float32(math.NaN())), hashKey(math.NaN())},
		{"named float NaN and NaN", hashKey(hashFloat(math.NaN())), hashKey(math.NaN())},
	}
	for _, tt := range tests {
		if tt.a != tt.b {
			t.Errorf("%s: %#x != %#x", tt.name, tt.a, tt.b)
		}
	}
}
