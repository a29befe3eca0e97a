package dsl_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
)

// TestMain fails the package's tests if any goroutine outlives them (the
// runnable examples start and stop topologies).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions...) }

// leakOptions ignore protoactor-go's dead-letter throttle goroutine: the first
// dead letter of a period (a late message to a task that has just stopped)
// starts one that waits 1 s and then ends on its own. Its name depends on
// whether the compiler inlined NewThrottle into NewDeadLetter.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewThrottle.func1"),
}

func TestDefaults(t *testing.T) {
	want := dsl.Settings{
		MaxSpoutPending:   128,
		AckerTasks:        4,
		ReceiveBufferSize: 256,
		MessageTimeout:    30 * time.Second,
		SpoutWait:         100 * time.Millisecond,
		Debug:             false,
		TickFrequency:     0, // no tick tuples unless asked for
	}
	got, err := dsl.Resolve()
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
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
	if got != dsl.Defaults() {
		t.Errorf("Resolve() = %+v, want Defaults() %+v", got, dsl.Defaults())
	}
	if nilConf, _ := dsl.Resolve(nil); nilConf != got {
		t.Errorf("Resolve(nil) = %+v, want the defaults", nilConf)
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name  string
		confs []dsl.Conf
		want  func(s *dsl.Settings) // changes from the defaults
	}{
		{"max spout pending", []dsl.Conf{{dsl.MaxSpoutPending: 1024}}, func(s *dsl.Settings) { s.MaxSpoutPending = 1024 }},
		{"a whole float from JSON counts as a number", []dsl.Conf{{dsl.MaxSpoutPending: 3.0}}, func(s *dsl.Settings) { s.MaxSpoutPending = 3 }},
		{"int64 and int32", []dsl.Conf{{dsl.AckerTasks: int64(2), dsl.MaxSpoutPending: int32(7)}}, func(s *dsl.Settings) { s.AckerTasks, s.MaxSpoutPending = 2, 7 }},
		{"no ackers", []dsl.Conf{{dsl.AckerTasks: 0}}, func(s *dsl.Settings) { s.AckerTasks = 0 }},
		{"receive buffer already a power of two", []dsl.Conf{{dsl.ReceiveBufferSize: 1024}}, func(s *dsl.Settings) { s.ReceiveBufferSize = 1024 }},
		{"receive buffer 100 rounds up to 128", []dsl.Conf{{dsl.ReceiveBufferSize: 100}}, func(s *dsl.Settings) { s.ReceiveBufferSize = 128 }},
		{"receive buffer 257 rounds up to 512", []dsl.Conf{{dsl.ReceiveBufferSize: 257}}, func(s *dsl.Settings) { s.ReceiveBufferSize = 512 }},
		{"receive buffer 3 rounds up to 4", []dsl.Conf{{dsl.ReceiveBufferSize: 3}}, func(s *dsl.Settings) { s.ReceiveBufferSize = 4 }},
		{"receive buffer minimum 2", []dsl.Conf{{dsl.ReceiveBufferSize: 2}}, func(s *dsl.Settings) { s.ReceiveBufferSize = 2 }},
		{"message timeout in seconds", []dsl.Conf{{dsl.MessageTimeout: 10}}, func(s *dsl.Settings) { s.MessageTimeout = 10 * time.Second }},
		{"message timeout as fractional seconds", []dsl.Conf{{dsl.MessageTimeout: 1.5}}, func(s *dsl.Settings) { s.MessageTimeout = 1500 * time.Millisecond }},
		{"message timeout as a duration", []dsl.Conf{{dsl.MessageTimeout: 250 * time.Millisecond}}, func(s *dsl.Settings) { s.MessageTimeout = 250 * time.Millisecond }},
		{"spout wait in milliseconds", []dsl.Conf{{dsl.SpoutWait: 5}}, func(s *dsl.Settings) { s.SpoutWait = 5 * time.Millisecond }},
		{"spout wait zero", []dsl.Conf{{dsl.SpoutWait: 0}}, func(s *dsl.Settings) { s.SpoutWait = 0 }},
		{"spout wait as a duration", []dsl.Conf{{dsl.SpoutWait: 2 * time.Second}}, func(s *dsl.Settings) { s.SpoutWait = 2 * time.Second }},
		{"tick frequency in seconds", []dsl.Conf{{dsl.TickFrequency: 3}}, func(s *dsl.Settings) { s.TickFrequency = 3 * time.Second }},
		{"debug on", []dsl.Conf{{dsl.Debug: true}}, func(s *dsl.Settings) { s.Debug = true }},
		{"unknown keys are kept for components and ignored here", []dsl.Conf{{"my.own.key": "x"}}, func(*dsl.Settings) {}},
		{"later confs override earlier ones", []dsl.Conf{{dsl.MaxSpoutPending: 10, dsl.TickFrequency: 5}, {dsl.MaxSpoutPending: 20}},
			func(s *dsl.Settings) { s.MaxSpoutPending, s.TickFrequency = 20, 5*time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := dsl.Defaults()
			tt.want(&want)
			got, err := dsl.Resolve(tt.confs...)
			if err != nil {
				t.Fatalf("Resolve(%v) error: %v", tt.confs, err)
			}
			if got != want {
				t.Errorf("Resolve(%v)\n got %+v\nwant %+v", tt.confs, got, want)
			}
		})
	}
}

func TestResolveRejectsBadValues(t *testing.T) {
	tests := []struct {
		name string
		conf dsl.Conf
		want string // in the error, with the key
	}{
		{"count of the wrong type", dsl.Conf{dsl.MaxSpoutPending: "many"}, `conf "topology.max.spout.pending": want a number, got string`},
		{"count below its minimum", dsl.Conf{dsl.MaxSpoutPending: 0}, `conf "topology.max.spout.pending": 0 is below the minimum 1`},
		{"fractional count", dsl.Conf{dsl.AckerTasks: 1.5}, `conf "topology.acker.executors": want a whole number, got 1.5`},
		{"duration for a count", dsl.Conf{dsl.AckerTasks: time.Second}, `conf "topology.acker.executors": want a number, got a duration 1s`},
		{"receive buffer of one slot", dsl.Conf{dsl.ReceiveBufferSize: 1}, `conf "topology.executor.receive.buffer.size": 1 is below the minimum 2`},
		{"negative timeout", dsl.Conf{dsl.MessageTimeout: -5}, `conf "topology.message.timeout.secs": -5 is below the minimum 1`},
		{"zero duration timeout", dsl.Conf{dsl.MessageTimeout: time.Duration(0)}, `conf "topology.message.timeout.secs": duration 0s is too small`},
		{"negative spout wait", dsl.Conf{dsl.SpoutWait: -time.Millisecond}, `conf "topology.sleep.spout.wait.strategy.time.ms": duration -1ms is too small`},
		{"debug not a bool", dsl.Conf{dsl.Debug: 1}, `conf "topology.debug": want a bool, got int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Resolve(tt.conf)
			if err == nil {
				t.Fatalf("Resolve(%v) = nil error, want one containing %q", tt.conf, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Resolve(%v) error %q, want it to contain %q", tt.conf, err, tt.want)
			}
		})
	}
}

type confIn struct{ N int }

func TestBuildResolvesComponentConfOverTopologyConf(t *testing.T) {
	b := dsl.New("conf", dsl.Conf{dsl.MaxSpoutPending: 10, dsl.TickFrequency: 5, dsl.ReceiveBufferSize: 64})
	spout := b.Spout("spout", dsl.Unreliable(func() (confIn, bool) { return confIn{}, false }))
	own := b.Bolt("own", dsl.AutoAck(func(confIn, dsl.Emitter) error { return nil }),
		dsl.WithConf(dsl.Conf{dsl.TickFrequency: 1, dsl.ReceiveBufferSize: 300}))
	inherits := b.Bolt("inherits", dsl.AutoAck(func(confIn, dsl.Emitter) error { return nil }))
	b.Anchored(spout, own, dsl.Shuffle[confIn]())
	b.Anchored(spout, inherits, dsl.Shuffle[confIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Settings.MaxSpoutPending; got != 10 {
		t.Errorf("topology max spout pending = %d, want 10", got)
	}
	tests := []struct {
		component string
		tick      time.Duration
		buffer    int
	}{
		{"own", time.Second, 512},
		{"inherits", 5 * time.Second, 64},
		{"spout", 5 * time.Second, 64},
	}
	for _, tt := range tests {
		s := topo.Component(tt.component).Settings
		if s.TickFrequency != tt.tick || s.ReceiveBufferSize != tt.buffer || s.MaxSpoutPending != 10 {
			t.Errorf("%s settings: tick %v, buffer %d, max pending %d; want tick %v, buffer %d, max pending 10",
				tt.component, s.TickFrequency, s.ReceiveBufferSize, s.MaxSpoutPending, tt.tick, tt.buffer)
		}
	}
}

type (
	hashWord  string
	hashSmall int8
	hashByte  uint8
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
		{`""`, dsl.HashKey(""), 0xcbf29ce484222325},
		{`"a"`, dsl.HashKey("a"), 0xaf63dc4c8601ec8c},
		{`"foobar"`, dsl.HashKey("foobar"), 0x85944171f73967e8},
		// The splitmix64 finaliser: its first output for seed 0 mixes the golden gamma.
		{"uint64 golden gamma", dsl.HashKey(uint64(0x9e3779b97f4a7c15)), 0xe220a8397b1dcdaf},
		{"zero", dsl.HashKey(0), 0},
		// Values pinned from this implementation.
		{`"apple"`, dsl.HashKey("apple"), 0xf74a62a458befdbf},
		{"42", dsl.HashKey(42), 0xa759ea27d4727622},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("HashKey(%s) = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}

func TestHashKeyAgreesAcrossTypesOfTheSameValue(t *testing.T) {
	tests := []struct {
		name string
		a, b uint64
	}{
		{"named string", dsl.HashKey(hashWord("foobar")), dsl.HashKey("foobar")},
		{"int and int64", dsl.HashKey(42), dsl.HashKey(int64(42))},
		{"int32 and int64, negative", dsl.HashKey(int32(-7)), dsl.HashKey(int64(-7))},
		{"named int8 and int64", dsl.HashKey(hashSmall(-7)), dsl.HashKey(int64(-7))},
		{"uint8 and uint64", dsl.HashKey(uint8(200)), dsl.HashKey(uint64(200))},
		{"named uint8 and uint", dsl.HashKey(hashByte(200)), dsl.HashKey(uint(200))},
		{"uint32 and uint64", dsl.HashKey(uint32(math.MaxUint32)), dsl.HashKey(uint64(math.MaxUint32))},
		{"float64 bits", dsl.HashKey(1.5), dsl.HashKey(math.Float64bits(1.5))},
		{"true", dsl.HashKey(true), dsl.HashKey(1)},
	}
	for _, tt := range tests {
		if tt.a != tt.b {
			t.Errorf("%s: %#x != %#x", tt.name, tt.a, tt.b)
		}
	}
}

type hashed struct{ Word string }

func TestFieldsGroupingHashesItsKeyWithHashKey(t *testing.T) {
	g := dsl.Fields(func(h hashed) string { return h.Word }, "Word")
	if got := g.Key(hashed{"foobar"}); got != 0x85944171f73967e8 {
		t.Errorf("Fields key of %q = %#x, want HashKey's %#x", "foobar", got, uint64(0x85944171f73967e8))
	}
	if g.String() != "fields[Word]" {
		t.Errorf("String() = %q, want %q", g.String(), "fields[Word]")
	}
}
