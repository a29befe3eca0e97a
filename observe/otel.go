package observe

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/goshelter/goshelter/supervision"
)

// Instrument names, documented in docs/OBSERVABILITY.md: dashboards and alerts
// depend on them. Counters restart from zero with each incarnation; exporters
// such as Prometheus treat that as a counter reset.
const (
	metricEmitted      = "goshelter.tuples.emitted"     // counter, per task
	metricTransferred  = "goshelter.tuples.transferred" // counter, per task
	metricExecuted     = "goshelter.tuples.executed"    // counter, per bolt task
	metricAcked        = "goshelter.tuples.acked"       // counter, per task
	metricFailed       = "goshelter.tuples.failed"      // counter, per task
	metricExpired      = "goshelter.tuples.expired"     // counter, per spout and acker task
	metricExecuteTime  = "goshelter.execute.time"       // counter in seconds, per bolt task: its rate is the capacity
	metricExecute      = "goshelter.latency.execute"    // gauge in seconds, mean over the incarnation
	metricProcess      = "goshelter.latency.process"    // gauge in seconds, sampled mean over the incarnation
	metricComplete     = "goshelter.latency.complete"   // gauge in seconds, sampled mean over the incarnation
	metricCapacity     = "goshelter.capacity"           // gauge, fraction of the time since the last collection spent executing
	metricPending      = "goshelter.pending"            // gauge, open trees per spout and acker task
	metricMailboxDepth = "goshelter.mailbox.depth"      // gauge, data batches waiting per task
	metricInFlight     = "goshelter.in_flight"          // gauge, per topology
	metricRestarts     = "goshelter.restarts"           // counter, per topology
	metricIncarnation  = "goshelter.incarnation"        // gauge, per topology
	// The last committed checkpoint, per spout and bolt task of a topology
	// with state, from the task's first commit in the incarnation on.
	metricCheckpoint         = "goshelter.checkpoint.id"       // gauge
	metricCheckpointDuration = "goshelter.checkpoint.duration" // gauge in seconds, from the checkpoint's start to the task's barrier
	metricCheckpointSize     = "goshelter.checkpoint.size"     // gauge in bytes, state or position stored
)

// Attribute keys of every instrument.
const (
	attrTopology  = "topology"
	attrComponent = "component"
	attrTask      = "task"
)

// Which kinds of task an instrument reports on.
const (
	spouts = 1 << iota
	bolts
	ackers
	emitters = spouts | bolts
	allKinds = spouts | bolts | ackers
)

var kindBits = map[string]int{"spout": spouts, "bolt": bolts, "acker": ackers}

type int64Counter struct {
	name, unit, desc string
	kinds            int
	value            func(figures) int64
}

var taskCounters = []int64Counter{
	{metricEmitted, "{tuple}", "Tuples emitted.", emitters, func(f figures) int64 { return f.Emitted }},
	{metricTransferred, "{tuple}", "Tuples handed to downstream tasks; an emit to n tasks counts n.", emitters, func(f figures) int64 { return f.Transferred }},
	{metricExecuted, "{tuple}", "Inputs executed by a bolt.", bolts, func(f figures) int64 { return f.Executed }},
	{metricAcked, "{tuple}", "Spouts: trees completed; bolts: inputs acked; ackers: trees completed.", allKinds, func(f figures) int64 { return f.Acked }},
	{metricFailed, "{tuple}", "Spouts: trees failed or timed out; bolts: inputs failed; ackers: trees failed.", allKinds, func(f figures) int64 { return f.Failed }},
	{metricExpired, "{tuple}", "Trees timed out.", spouts | ackers, func(f figures) int64 { return f.Expired }},
}

type float64Gauge struct {
	name, unit, desc string
	kinds            int
	value            func(figures) float64
	// checkpointed gauges are observed only for a task with a committed
	// checkpoint: a topology without state has no series of them.
	checkpointed bool
}

// taskGauges are the per-task gauges of [Instrument]. The three latency means
// come first: /metrics leaves them out (see withoutMeans) for its histograms,
// which OpenTelemetry cannot observe asynchronously.
var taskGauges = []float64Gauge{
	{metricExecute, "s", "Mean time a bolt spends executing an input.", bolts, func(f figures) float64 { return f.ExecuteLatencyMs / 1e3 }, false},
	{metricProcess, "s", "Mean time from a bolt taking an input from its mailbox to acking it (sampled).", bolts, func(f figures) float64 { return f.ProcessLatencyMs / 1e3 }, false},
	{metricComplete, "s", "Mean time from a spout's emit to its tree's ack (sampled).", spouts, func(f figures) float64 { return f.CompleteLatencyMs / 1e3 }, false},
	// withoutMeans starts here.
	{metricCapacity, "1", "Fraction of the time since the last collection a bolt task spent executing.", bolts, func(f figures) float64 { return f.Capacity }, false},
	{metricPending, "{tree}", "Open tuple trees.", spouts | ackers, func(f figures) float64 { return float64(f.Pending) }, false},
	{metricMailboxDepth, "{batch}", "Tuple batches waiting in a task's data mailbox.", bolts, func(f figures) float64 { return float64(f.MailboxDepth) }, false},
	{metricCheckpoint, "", "Id of the last checkpoint the task took part in that committed.", emitters, func(f figures) float64 { return float64(f.CheckpointID) }, true},
	{metricCheckpointDuration, "s", "Time from the last committed checkpoint's start until the task passed its barrier.", emitters, func(f figures) float64 { return f.CheckpointMs / 1e3 }, true},
	{metricCheckpointSize, "By", "Bytes of state or source position the task stored in the last committed checkpoint.", emitters, func(f figures) float64 { return float64(f.CheckpointBytes) }, true},
}

// withoutMeans are taskGauges without the latency means.
var withoutMeans = taskGauges[3:]

// Instrument creates OpenTelemetry instruments on meter that read r at every
// collection: per-task counters and gauges with topology, component and task
// attributes, and per-topology restarts, incarnation and in-flight tuples
// (docs/OBSERVABILITY.md lists them). It is for sending the figures through an
// OpenTelemetry pipeline of your own (OTLP, a shared Prometheus registry);
// [Handler] serves them without one. Nothing is measured between collections:
// the runtime keeps its counters anyway, so a collection only reads them.
// Unregister the returned registration to stop reading r.
func Instrument(meter metric.Meter, r *supervision.Running) (metric.Registration, error) {
	return instrument(meter, r.Stats, taskGauges)
}

// instrument creates the instruments of [Instrument], with perTask the
// per-task gauges (taskGauges or withoutMeans).
func instrument(meter metric.Meter, stats func() supervision.Stats, perTask []float64Gauge) (metric.Registration, error) {
	var (
		observables []metric.Observable
		counters    []metric.Int64ObservableCounter
		gauges      []metric.Float64ObservableGauge
		errs        []error
	)
	for _, c := range taskCounters {
		inst, err := meter.Int64ObservableCounter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.desc))
		counters, observables, errs = append(counters, inst), append(observables, inst), append(errs, err)
	}
	for _, g := range perTask {
		inst, err := meter.Float64ObservableGauge(g.name, metric.WithUnit(g.unit), metric.WithDescription(g.desc))
		gauges, observables, errs = append(gauges, inst), append(observables, inst), append(errs, err)
	}
	execTime, err := meter.Float64ObservableCounter(metricExecuteTime, metric.WithUnit("s"), metric.WithDescription("Time a bolt task spent executing inputs."))
	errs = append(errs, err)
	restarts, err := meter.Int64ObservableCounter(metricRestarts, metric.WithUnit("{restart}"), metric.WithDescription("Incarnations replaced after a failure."))
	errs = append(errs, err)
	incarnation, err := meter.Int64ObservableGauge(metricIncarnation, metric.WithDescription("Number of the current incarnation, from 1."))
	errs = append(errs, err)
	inFlight, err := meter.Int64ObservableGauge(metricInFlight, metric.WithUnit("{tuple}"), metric.WithDescription("Tuples sent and not executed plus open trees."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("observe: creating instruments: %w", err)
	}
	observables = append(observables, execTime, restarts, incarnation, inFlight)
	// Capacity covers the time since the previous collection: the scrape
	// interval is the window a dashboard expects.
	window := newWindow(stats, 0)
	attrs := newAttrCache()
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		r := window.read()
		topo := attrs.topology(r.Topology)
		o.ObserveInt64(restarts, int64(r.Restarts), topo)
		o.ObserveInt64(incarnation, int64(r.Incarnation), topo)
		o.ObserveInt64(inFlight, r.InFlight, topo)
		for _, f := range r.Tasks {
			set, kind := attrs.task(r.Topology, f.Component, f.Task), kindBits[f.Kind]
			for i, c := range taskCounters {
				if c.kinds&kind != 0 {
					o.ObserveInt64(counters[i], c.value(f), set)
				}
			}
			for i, g := range perTask {
				if g.kinds&kind != 0 && (!g.checkpointed || f.CheckpointID > 0) {
					o.ObserveFloat64(gauges[i], g.value(f), set)
				}
			}
			if kind == bolts {
				o.ObserveFloat64(execTime, f.ExecuteSecs, set)
			}
		}
		return nil
	}, observables...)
}

// attrCache keeps attribute sets across collections (they are immutable).
// Readers may collect concurrently.
type attrCache struct {
	mu    sync.Mutex // mu guards topo and tasks
	topo  map[string]metric.MeasurementOption
	tasks map[taskKey]metric.MeasurementOption
}

type taskKey struct {
	topology, component string
	task                int
}

func newAttrCache() *attrCache {
	return &attrCache{topo: map[string]metric.MeasurementOption{}, tasks: map[taskKey]metric.MeasurementOption{}}
}

func (c *attrCache) topology(name string) metric.MeasurementOption {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.topo[name]; ok {
		return o
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(attrTopology, name)))
	c.topo[name] = o
	return o
}

func (c *attrCache) task(topology, component string, task int) metric.MeasurementOption {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := taskKey{topology, component, task}
	if o, ok := c.tasks[k]; ok {
		return o
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(attrTopology, topology),
		attribute.String(attrComponent, component), attribute.Int(attrTask, task)))
	c.tasks[k] = o
	return o
}
