package specs_test

// Shared helpers for every spec file of this package. They are generic on purpose:
//
//   - Build(b) builds a topology, failing the spec with the validation error.
//   - Run(topo, opts...) starts a topology under supervision (warnings and errors
//     logged to GinkgoWriter) and returns once it is active. The suite stops any
//     topology a spec leaves running, then checks for leaked goroutines, after
//     the spec's own cleanups; Stop(r) stops one explicitly and expects success.
//   - Trace records every supervision.TraceEvent of a run (pass trace.Option()
//     to Run) and filters them: FromComponent, KindIs("Next"), Inbound,
//     Outbound; Step renders an event as "component <- Next" for readable order
//     assertions.
//   - Deliveries[T] records what bolt tasks received; CaptureBolt[T] is a bolt
//     that records each input with its task and acks it.
//   - CountTo(n) is an unreliable spout emitting Num{1..n} per task, then nothing;
//     sheltertest.Source[T] (the kit's recording source) is the reliable one, and
//     AckedIDs/NackedIDs list its outcomes.
//   - ObserveLogs() captures the runtime's logs for assertions on error messages.
//   - NewManualClock() is the kit's manual clock at a fixed instant; inject it
//     with clk.Option() so spout waits, ticks and timeouts move only on Advance.
//   - Sequence(start, step) gives every task the ids start, start+step, ...
//   - Scaled(d) stretches a timeout by GOSHELTER_TEST_TIMEOUT_SCALE on slow machines.
//
// Specs run one at a time within a process (ginkgo -p uses processes), so the
// registry of running topologies needs no more than a mutex.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
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
// (a positive number, default 1), for slow or loaded CI machines.
func Scaled(d time.Duration) time.Duration {
	if s, err := strconv.ParseFloat(os.Getenv("GOSHELTER_TEST_TIMEOUT_SCALE"), 64); err == nil && s > 0 {
		return time.Duration(float64(d) * s)
	}
	return d
}

// NewManualClock returns a manual clock reading a fixed instant.
func NewManualClock() *sheltertest.Clock {
	return sheltertest.NewClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
}

// Sequence is a supervision.WithIDs option: every task's ids are start,
// start+step, ... (zero skipped), so specs can replay tables with known ids.
func Sequence(start, step uint64) supervision.Option {
	return supervision.WithIDs(func(int) func() uint64 {
		next := start
		return func() uint64 {
			if next == 0 {
				next += step
			}
			v := next
			next += step
			return v
		}
	})
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

// registry holds the topologies started by Run that may still be running.
var registry struct {
	mu      sync.Mutex // mu guards running
	running []*supervision.Running
}

// Run starts topo under supervision and returns once it is active. Its logs at
// warn and above go to GinkgoWriter (shown when a spec fails); opts come after
// that default, so a WithLogger in opts replaces it. The suite stops the topology
// after the spec if the spec did not. Run's ctx is the topology's lifetime (as
// exec.CommandContext's), so it is not bounded here.
func Run(topo *dsl.Topology, opts ...supervision.Option) *supervision.Running {
	GinkgoHelper()
	all := append([]supervision.Option{supervision.WithLogger(ginkgoLogger())}, opts...)
	r, err := supervision.Run(context.Background(), topo, all...)
	Expect(err).NotTo(HaveOccurred(), "starting topology %q", topo.Name)
	registry.mu.Lock()
	registry.running = append(registry.running, r)
	registry.mu.Unlock()
	return r
}

// Stop stops r and expects a clean stop within a scaled 10 s.
func Stop(r *supervision.Running) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(10*time.Second))
	defer cancel()
	Expect(r.Stop(ctx)).To(Succeed())
}

// stopLeftovers stops every topology Run started that is still up.
func stopLeftovers() {
	registry.mu.Lock()
	running := registry.running
	registry.running = nil
	registry.mu.Unlock()
	for _, r := range running {
		ctx, cancel := context.WithTimeout(context.Background(), Scaled(10*time.Second))
		err := r.Stop(ctx)
		cancel()
		if err != nil && !errors.Is(err, supervision.ErrStopped) {
			Fail(fmt.Sprintf("stopping a leftover topology: %v", err))
		}
	}
}

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

// FromTask keeps events of one task.
func FromTask(task int) func(Event) bool {
	return func(e Event) bool { return e.Task == task }
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

// Delivery is one input a bolt task received.
type Delivery[T any] struct {
	Task  int // topology-wide task id
	Index int // index within the component
	Value T
}

// Deliveries records bolt inputs from every task; safe for concurrent use.
type Deliveries[T any] struct {
	mu   sync.Mutex // mu guards list and seen
	list []Delivery[T]
	seen map[int]int // task id -> index, for every task created
}

// NewDeliveries returns an empty record.
func NewDeliveries[T any]() *Deliveries[T] { return &Deliveries[T]{seen: map[int]int{}} }

// Created notes that a task of the recording bolt exists (CaptureBolt calls it).
func (d *Deliveries[T]) Created(info dsl.TaskInfo) {
	d.mu.Lock()
	d.seen[info.Task] = info.Index
	d.mu.Unlock()
}

// Add records that task info received v.
func (d *Deliveries[T]) Add(info dsl.TaskInfo, v T) {
	d.mu.Lock()
	d.list = append(d.list, Delivery[T]{Task: info.Task, Index: info.Index, Value: v})
	d.mu.Unlock()
}

// All returns a copy of every delivery in arrival order.
func (d *Deliveries[T]) All() []Delivery[T] {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Delivery[T](nil), d.list...)
}

// Len returns how many inputs were recorded (a func value for Eventually).
func (d *Deliveries[T]) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.list)
}

// ByTask groups the delivered values by task id.
func (d *Deliveries[T]) ByTask() map[int][]T {
	out := map[int][]T{}
	for _, x := range d.All() {
		out[x.Task] = append(out[x.Task], x.Value)
	}
	return out
}

// CreatedTasks returns the ids of every task the recording bolt created, sorted.
func (d *Deliveries[T]) CreatedTasks() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := make([]int, 0, len(d.seen))
	for id := range d.seen {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// CaptureBolt is an auto-ack bolt that records every input in d with its task.
func CaptureBolt[T any](d *Deliveries[T]) *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[T] {
		d.Created(info)
		return HandlerFunc[T](func(in T, _ dsl.Emitter) error {
			d.Add(info, in)
			return nil
		})
	})
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

// AckedIDs returns the ids src acked, in order.
func AckedIDs[T any](src *sheltertest.Source[T]) []int { return outcomeIDs(src, true) }

// NackedIDs returns the ids src nacked, in order.
func NackedIDs[T any](src *sheltertest.Source[T]) []int { return outcomeIDs(src, false) }

func outcomeIDs[T any](src *sheltertest.Source[T], acked bool) []int {
	var ids []int
	for _, o := range src.Outcomes() {
		if o.Acked == acked {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// ManualFunc adapts a function to a dsl.ManualHandler.
type ManualFunc[In any] func(in In, input dsl.Tuple, c dsl.Collector) error

// Execute calls f.
func (f ManualFunc[In]) Execute(in In, input dsl.Tuple, c dsl.Collector) error {
	return f(in, input, c)
}

// HandlerFunc adapts a function to a dsl.Handler.
type HandlerFunc[In any] func(in In, out dsl.Emitter) error

// Execute calls f.
func (f HandlerFunc[In]) Execute(in In, out dsl.Emitter) error { return f(in, out) }
