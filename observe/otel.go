package observe

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Instrument names. Counters restart from zero with each incarnation; exporters
// such as Prometheus treat that as a counter reset.
const (
	MetricEmitted      = "goshelter.tuples.emitted"     // counter, per task
	MetricTransferred  = "goshelter.tuples.transferred" // counter, per task
	MetricExecuted     = "goshelter.tuples.executed"    // counter, per bolt task
	MetricAcked        = "goshelter.tuples.acked"       // counter, per task
	MetricFailed       = "goshelter.tuples.failed"      // counter, per task
	MetricExpired      = "goshelter.tuples.expired"     // counter, per spout and acker task
	MetricExecuteTime  = "goshelter.execute.time"       // counter in seconds, per bolt task: its rate is the capacity
	MetricExecute      = "goshelter.latency.execute"    // gauge in seconds, mean over the incarnation
	MetricProcess      = "goshelter.latency.process"    // gauge in seconds, sampled mean over the incarnation
	MetricComplete     = "goshelter.latency.complete"   // gauge in seconds, sampled mean over the incarnation
	MetricCapacity     = "goshelter.capacity"           // gauge, fraction of the time since the last collection spent executing
	MetricPending      = "goshelter.pending"            // gauge, open trees per spout and acker task
	MetricMailboxDepth = "goshelter.mailbox.depth"      // gauge, data batches waiting per task
	MetricInFlight     = "goshelter.in_flight"          // gauge, per topology
	MetricRestarts     = "goshelter.restarts"           // counter, per topology
	MetricIncarnation  = "goshelter.incarnation"        // gauge, per topology
)

// Attribute keys of every instrument.
const (
	AttrTopology  = "topology"
	AttrComponent = "component"
	AttrTask      = "task"
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
	value            func(Figures) int64
}

var taskCounters = []int64Counter{
	{MetricEmitted, "{tuple}", "Tuples emitted.", emitters, func(f Figures) int64 { return f.Emitted }},
	{MetricTransferred, "{tuple}", "Tuples handed to downstream tasks; an emit to n tasks counts n.", emitters, func(f Figures) int64 { return f.Transferred }},
	{MetricExecuted, "{tuple}", "Inputs executed by a bolt.", bolts, func(f Figures) int64 { return f.Executed }},
	{MetricAcked, "{tuple}", "Spouts: trees completed; bolts: inputs acked; ackers: trees completed.", allKinds, func(f Figures) int64 { return f.Acked }},
	{MetricFailed, "{tuple}", "Spouts: trees failed or timed out; bolts: inputs failed; ackers: trees failed.", allKinds, func(f Figures) int64 { return f.Failed }},
	{MetricExpired, "{tuple}", "Trees timed out.", spouts | ackers, func(f Figures) int64 { return f.Expired }},
}

type float64Gauge struct {
	name, unit, desc string
	kinds            int
	value            func(Figures) float64
}

var taskGauges = []float64Gauge{
	{MetricExecute, "s", "Mean time a bolt spends executing an input.", bolts, func(f Figures) float64 { return f.ExecuteLatencyMs / 1e3 }},
	{MetricProcess, "s", "Mean time from a bolt taking an input from its mailbox to acking it (sampled).", bolts, func(f Figures) float64 { return f.ProcessLatencyMs / 1e3 }},
	{MetricComplete, "s", "Mean time from a spout's emit to its tree's ack (sampled).", spouts, func(f Figures) float64 { return f.CompleteLatencyMs / 1e3 }},
	{MetricCapacity, "1", "Fraction of the time since the last collection a bolt task spent executing.", bolts, func(f Figures) float64 { return f.Capacity }},
	{MetricPending, "{tree}", "Open tuple trees.", spouts | ackers, func(f Figures) float64 { return float64(f.Pending) }},
	{MetricMailboxDepth, "{batch}", "Tuple batches waiting in a task's data mailbox.", bolts, func(f Figures) float64 { return float64(f.MailboxDepth) }},
}

// Instrument creates OpenTelemetry instruments on meter that read src at every
// collection: per-task counters and gauges with topology, component and task
// attributes, and per-topology restarts, incarnation and in-flight tuples (see
// the Metric constants). Unregister the returned registration to stop reading
// src. Nothing is measured between collections.
func Instrument(meter metric.Meter, src Source) (metric.Registration, error) {
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
	for _, g := range taskGauges {
		inst, err := meter.Float64ObservableGauge(g.name, metric.WithUnit(g.unit), metric.WithDescription(g.desc))
		gauges, observables, errs = append(gauges, inst), append(observables, inst), append(errs, err)
	}
	execTime, err := meter.Float64ObservableCounter(MetricExecuteTime, metric.WithUnit("s"), metric.WithDescription("Time a bolt task spent executing inputs."))
	errs = append(errs, err)
	restarts, err := meter.Int64ObservableCounter(MetricRestarts, metric.WithUnit("{restart}"), metric.WithDescription("Incarnations replaced after a failure."))
	errs = append(errs, err)
	incarnation, err := meter.Int64ObservableGauge(MetricIncarnation, metric.WithDescription("Number of the current incarnation, from 1."))
	errs = append(errs, err)
	inFlight, err := meter.Int64ObservableGauge(MetricInFlight, metric.WithUnit("{tuple}"), metric.WithDescription("Tuples sent and not executed plus open trees."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("observe: creating instruments: %w", err)
	}
	observables = append(observables, execTime, restarts, incarnation, inFlight)
	window := NewWindow(src, 0)
	attrs := newAttrCache()
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		r := window.Report()
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
			for i, g := range taskGauges {
				if g.kinds&kind != 0 {
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
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrTopology, name)))
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
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrTopology, topology),
		attribute.String(AttrComponent, component), attribute.Int(AttrTask, task)))
	c.tasks[k] = o
	return o
}
