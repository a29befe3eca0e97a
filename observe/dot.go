package observe

import (
	"fmt"
	"math"
	"strings"

	"github.com/goshelter/goshelter/dsl"
)

// DOT returns t's graph (see [dsl.Topology.DOT]) with a report's figures on it:
// tuples per second on the edges, and on each component its rates and
// latencies. Bolts are filled by capacity, from green (idle) through yellow to
// red (busy all the time); an edge's width grows with its rate. Two edges between
// the same components (two streams) both show the traffic of the pair.
func DOT(t *dsl.Topology, r Report) string {
	figures := &dsl.GraphFigures{Components: map[string]dsl.NodeFigures{}, Edges: map[*dsl.Edge]dsl.EdgeFigures{}}
	for _, c := range t.Components {
		f, ok := r.Component(c.ID)
		if !ok {
			continue
		}
		figures.Components[c.ID] = nodeFigures(c.Kind, f)
	}
	pairs := map[[2]string]int{}
	for _, e := range t.Edges {
		pairs[[2]string{e.From.ID, e.To.ID}]++
	}
	for _, e := range t.Edges {
		flow := r.flow(e.From.ID, e.To.ID)
		note := rateText(flow.Rate)
		if pairs[[2]string{e.From.ID, e.To.ID}] > 1 {
			note += " (all streams)"
		}
		figures.Edges[e] = dsl.EdgeFigures{Note: note, Width: 1 + min(4, math.Log10(1+flow.Rate)/2)}
	}
	var b strings.Builder
	_ = t.WriteDOT(&b, figures) // a strings.Builder does not fail
	return b.String()
}

func nodeFigures(kind dsl.Kind, f Figures) dsl.NodeFigures {
	if kind == dsl.SpoutKind {
		note := fmt.Sprintf("emit %s", rateText(f.EmitRate))
		if f.Acked > 0 || f.Failed > 0 {
			note += fmt.Sprintf("\nack %s, fail %s\ncomplete %s", rateText(f.AckRate), rateText(f.FailRate), msText(f.CompleteLatencyMs))
		}
		return dsl.NodeFigures{Note: note}
	}
	note := fmt.Sprintf("capacity %.2f\nexecute %s, %s", f.Capacity, rateText(f.ExecuteRate), msText(f.ExecuteLatencyMs))
	if f.FailRate > 0 {
		note += fmt.Sprintf("\nfail %s", rateText(f.FailRate))
	}
	return dsl.NodeFigures{Note: note, Fill: capacityColour(f.Capacity)}
}

func (r Report) flow(from, to string) Flow {
	for _, f := range r.Flows {
		if f.From == from && f.To == to {
			return f
		}
	}
	return Flow{From: from, To: to}
}

// capacityColour maps capacity 0..1 to a pale colour from green to red.
func capacityColour(c float64) string {
	c = min(1, max(0, c))
	return hsv(120*(1-c), 0.45, 1)
}

// hsv converts a colour with hue h (degrees), saturation s and value v to "#rrggbb".
func hsv(h, s, v float64) string {
	f := func(n float64) uint8 {
		k := math.Mod(n+h/60, 6)
		return uint8(math.Round(255 * (v - v*s*max(0, min(k, 4-k, 1)))))
	}
	return fmt.Sprintf("#%02x%02x%02x", f(5), f(3), f(1))
}

// rateText formats tuples per second compactly: "0/s", "950/s", "12.3k/s", "4.1M/s".
func rateText(perSec float64) string {
	switch {
	case perSec >= 1e6:
		return fmt.Sprintf("%.1fM/s", perSec/1e6)
	case perSec >= 1e4:
		return fmt.Sprintf("%.1fk/s", perSec/1e3)
	default:
		return fmt.Sprintf("%.0f/s", perSec)
	}
}

func msText(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	case ms >= 0.01:
		return fmt.Sprintf("%.0f µs", ms*1e3)
	case ms >= 0.001:
		return fmt.Sprintf("%.1f µs", ms*1e3)
	default:
		return fmt.Sprintf("%.0f ns", ms*1e6)
	}
}
