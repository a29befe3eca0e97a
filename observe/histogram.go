package observe

import (
	"math"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/goshelter/goshelter/supervision"
)

// latencyHistograms serves the runtime's latency distributions on /metrics as
// classic Prometheus histograms, per component: a mean since start hides the
// slow inputs a status page is opened to find, and histograms can be summed
// and turned into quantiles over any range (histogram_quantile). The runtime
// counts in power-of-two buckets of microseconds; every other bound is
// exported (1µs, 4µs, 16µs ... about 16.8 s, and +Inf), which keeps a
// histogram to 16 series per component, hundreds of tasks or not.
//
// OpenTelemetry has no asynchronous histogram to observe counts kept
// elsewhere, so these are a client_golang collector on the handler's registry
// next to the OpenTelemetry exporter, not instruments of [Instrument].
type latencyHistograms struct {
	stats                      func() supervision.Stats
	execute, process, complete *prometheus.Desc
}

// Histogram names: the Prometheus spelling of the latency gauges of
// [Instrument], which /metrics serves as histograms instead.
const (
	histExecute  = "goshelter_latency_execute_seconds"
	histProcess  = "goshelter_latency_process_seconds"
	histComplete = "goshelter_latency_complete_seconds"
)

func newLatencyHistograms(stats func() supervision.Stats) *latencyHistograms {
	labels := []string{attrTopology, attrComponent}
	return &latencyHistograms{
		stats: stats,
		execute: prometheus.NewDesc(histExecute,
			"Time a bolt spends executing an input; the inputs of a batch count at the batch's mean.", labels, nil),
		process: prometheus.NewDesc(histProcess,
			"Time from a bolt taking an input from its mailbox to acking it (sampled, one input in 31).", labels, nil),
		complete: prometheus.NewDesc(histComplete,
			"Time from a spout's emit to its tree's ack (sampled, one tree in 31).", labels, nil),
	}
}

// Describe implements prometheus.Collector.
func (h *latencyHistograms) Describe(ch chan<- *prometheus.Desc) {
	ch <- h.execute
	ch <- h.process
	ch <- h.complete
}

// Collect implements prometheus.Collector. Components that have seen nothing
// yet still get their (empty) histograms, so that rate() has a start.
func (h *latencyHistograms) Collect(ch chan<- prometheus.Metric) {
	s := h.stats()
	ids := make([]string, 0, len(s.Components))
	for id := range s.Components {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := s.Components[id]
		switch c.Kind {
		case "bolt":
			ch <- constHistogram(h.execute, c.ExecuteHistogram, c.ExecuteTime.Seconds(), s.Topology, id)
			ch <- constHistogram(h.process, c.ProcessHistogram, c.ProcessTime.Seconds(), s.Topology, id)
		case "spout":
			ch <- constHistogram(h.complete, c.CompleteHistogram, c.CompleteTime.Seconds(), s.Topology, id)
		}
	}
}

// histogramBounds are the exported upper bounds in seconds, and for each the
// index of the runtime's bucket (bucket i ends at 2^i µs) it ends at.
var histogramBounds, histogramIndexes = func() ([]float64, []int) {
	var bounds []float64
	var indexes []int
	for i := 0; i <= 24; i += 2 {
		bounds = append(bounds, math.Ldexp(1e-6, i))
		indexes = append(indexes, i)
	}
	return bounds, indexes
}()

// constHistogram turns the runtime's bucket counts into a Prometheus histogram
// with cumulative buckets.
func constHistogram(desc *prometheus.Desc, counts []int64, sum float64, labels ...string) prometheus.Metric {
	var total uint64
	cumulative := make([]uint64, len(counts))
	for i, n := range counts {
		total += uint64(max(n, 0))
		cumulative[i] = total
	}
	buckets := make(map[float64]uint64, len(histogramBounds))
	for i, bound := range histogramBounds {
		if j := histogramIndexes[i]; j < len(cumulative) {
			buckets[bound] = cumulative[j]
		} else {
			buckets[bound] = total
		}
	}
	return prometheus.MustNewConstHistogram(desc, total, sum, buckets, labels...)
}
