package specs_test

// Shared helpers for every spec file of this package. The specs run on the test
// kit, package sheltertest, as a user's tests would: sheltertest.Start(GinkgoTB(),
// topo, opts...) runs a topology for the length of a spec (stopped at cleanup,
// failing the spec on a leftover goroutine, fd or child), sheltertest.Source is
// the reliable source, sheltertest.Recorder the recording bolt,
// sheltertest.Clock the manual clock, and sheltertest.HandlerFunc and
// ManualFunc the handler adapters. What is left here is what the kit does not
// offer:
//
//   - Build(b) builds a topology, failing the spec with the validation error.
//   - Stop(r) stops a topology mid-spec and expects a clean stop.
//   - Trace records every supervision.TraceEvent of a run (pass trace.Option()
//     to Start) and filters them: FromComponent, KindIs("Next"), Inbound,
//     Outbound; Step renders an event as "component <- Next" for readable order
//     assertions.
//   - CountTo(n) is an unreliable spout emitting Num{1..n} per task, then nothing.
//   - ObserveLogs() captures the runtime's logs for assertions on error messages.
//   - NewManualClock() is the kit's manual clock at a fixed instant; inject it
//     with clk.Option() so spout waits, ticks and timeouts move only on Advance.
//   - Scaled(d) stretches a timeout by GOSHELTER_TEST_TIMEOUT_SCALE on slow machines.

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Num is the stream of most small topologies in these specs.
type Num struct{ N int }

// KeyedNum is a stream with a key, for fields groupings.
type KeyedNum struct {
	Key string
	N   int
}

// Scaled multiplies d by the GOSHELTER_TEST_TIMEOUT_SCALE environment variable
// (a positive number, default 1), for slow or loaded CI machines: the one
// scale of every goshelter suite, read by testsupport.Scaled.
func Scaled(d time.Duration) time.Duration { return testsupport.Scaled(d) }

// NewManualClock returns a manual clock reading a fixed instant.
func NewManualClock() *sheltertest.Clock {
	return sheltertest.NewClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
}

// Restarts is a supervision.WithRestarts option with the back-off base and
// cap and the restart limit (0 keeps the default of 5).
func Restarts(base, cap time.Duration, max int) supervision.Option {
	return supervision.WithRestarts(supervision.Restarts{Base: base, Cap: cap, Max: max})
}

// Build builds the topology or fails the spec with every validation problem.
func Build(b *dsl.Builder) *dsl.Topology {
	GinkgoHelper()
	topo, err := b.Build()
	Expect(err).NotTo(HaveOccurred())
	return topo
}

// Stop stops r and expects a clean stop within a scaled 10 s.
func Stop(r *supervision.Running) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(10*time.Second))
	defer cancel()
	Expect(r.Stop(ctx)).To(Succeed())
}

// ginkgoLogger sends the runtime's warnings and errors to GinkgoWriter, for the
// few specs that call supervision.Run themselves (to see its error or its ctx
// at work) rather than sheltertest.Start.
func ginkgoLogger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(GinkgoWriter), zap.WarnLevel))
}

// ObserveLogs returns an option that sends the runtime's logs (debug and above)
// to the returned observer, for assertions on what was logged.
func ObserveLogs() (supervision.Option, *observer.ObservedLogs) {
	core, logs := observer.New(zap.DebugLevel)
	return supervision.WithLogger(zap.New(core)), logs
}

// Trace collects the events of supervision.WithTrace. It is safe for concurrent
// use: every task calls Record from its own goroutine. Events are kept in the
// order Record was called, which respects causality: an emit is recorded before
// the delivery it causes.
type Trace struct {
	mu     sync.Mutex // mu guards events
	events []Event
}

// Event is one traced message.
type Event = supervision.TraceEvent

// NewTrace returns an empty trace.
func NewTrace() *Trace { return &Trace{} }

// Record appends e.
func (t *Trace) Record(e Event) {
	t.mu.Lock()
	t.events = append(t.events, e)
	t.mu.Unlock()
}

// Option returns the supervision option that feeds this trace.
func (t *Trace) Option() supervision.Option { return supervision.WithTrace(t.Record) }

// Events returns a copy of the events for which every filter holds.
func (t *Trace) Events(filters ...func(Event) bool) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Event
	for _, e := range t.events {
		if matches(e, filters) {
			out = append(out, e)
		}
	}
	return out
}

// Count returns how many events pass every filter.
func (t *Trace) Count(filters ...func(Event) bool) int { return len(t.Events(filters...)) }

// Steps renders the events passing every filter with Step.
func (t *Trace) Steps(filters ...func(Event) bool) []string {
	events := t.Events(filters...)
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = Step(e)
	}
	return out
}

func matches(e Event, filters []func(Event) bool) bool {
	for _, f := range filters {
		if !f(e) {
			return false
		}
	}
	return true
}

// Step renders e as "component <- Kind" (received) or "component -> Kind" (sent).
func Step(e Event) string {
	dir := "<-"
	if e.Out {
		dir = "->"
	}
	return fmt.Sprintf("%s %s %s", e.Component, dir, e.Kind)
}

// FromComponent keeps events of the given components ("__acker" and "__system"
// name those tasks).
func FromComponent(ids ...string) func(Event) bool {
	return func(e Event) bool {
		for _, id := range ids {
			if e.Component == id {
				return true
			}
		}
		return false
	}
}

// KindIs keeps events of the given kinds ("Next", "Emit", "AckerStep", ...).
func KindIs(kinds ...string) func(Event) bool {
	return func(e Event) bool {
		for _, k := range kinds {
			if e.Kind == k {
				return true
			}
		}
		return false
	}
}

// Inbound keeps messages a task received; Outbound those it sent.
func Inbound(e Event) bool  { return !e.Out }
func Outbound(e Event) bool { return e.Out }

// IndexOf returns the position of the first event for which every filter holds,
// or -1.
func IndexOf(events []Event, filters ...func(Event) bool) int {
	for i, e := range events {
		if matches(e, filters) {
			return i
		}
	}
	return -1
}

// CountTo is an unreliable spout: each of its tasks emits Num{1}..Num{n} and then
// has nothing more, so it backs off by the spout wait.
func CountTo(n int) *dsl.SpoutSpec {
	return dsl.UnreliableFrom(func(dsl.TaskInfo) func() (Num, bool) {
		i := 0
		return func() (Num, bool) {
			if i >= n {
				return Num{}, false
			}
			i++
			return Num{N: i}, true
		}
	})
}
