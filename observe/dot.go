package observe

import (
	"fmt"
	"math"
	"strings"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// DOT returns topo as a Graphviz digraph: spouts and bolts with their
// parallelism, one edge per subscription labelled with its stream and grouping,
// anchored edges solid and unanchored ones dashed. Components and edges appear
// in definition order, so the text can be diffed and kept under version control.
//
// With stats, the graph carries its figures, as Storm's UI draws them: tuples
// per second on edges (wider for more), rates and latencies on components, and
// bolts filled by capacity from green (idle) through yellow to red (busy all the
// time), so the bottleneck stands out. Rates cover the incarnation's uptime;
// the /graph page of [Handler] draws rates over the last second or so instead.
// Two edges between the same components (two streams) both show the pair's
// traffic, because the runtime counts tuples by destination task, not by stream.
//
//	go run ./samples/wordcount -graph | dot -Tsvg > wordcount.svg
func DOT(topo *dsl.Topology, stats *supervision.Stats) string {
	if stats == nil {
		return writeDOT(topo, graphFigures{})
	}
	return liveDOT(topo, newReport(nil, *stats))
}

// graphFigures are the live numbers drawn on a graph: a line added under a
// component's or an edge's label, a fill colour for a component, a pen width
// for an edge. The zero value draws the plain graph.
type graphFigures struct {
	components map[string]nodeFigures // by component id
	edges      map[*dsl.Edge]edgeFigures
}

// nodeFigures decorate one component: note is added to its label and fill, a
// Graphviz colour such as "#ffcc00", replaces its fill colour when set.
type nodeFigures struct {
	note string
	fill string
}

// edgeFigures decorate one edge: note is added to its label and width, when
// positive, sets its pen width.
type edgeFigures struct {
	note  string
	width float64
}

// liveDOT draws topo with r's figures.
func liveDOT(topo *dsl.Topology, r report) string {
	g := graphFigures{components: map[string]nodeFigures{}, edges: map[*dsl.Edge]edgeFigures{}}
	for _, c := range topo.Components {
		if f, ok := r.component(c.ID); ok {
			g.components[c.ID] = componentFigures(c, f)
		}
	}
	pairs := map[[2]string]int{}
	for _, e := range topo.Edges {
		pairs[[2]string{e.From.ID, e.To.ID}]++
	}
	for _, e := range topo.Edges {
		traffic := r.flow(e.From.ID, e.To.ID)
		note := rateText(traffic.Rate)
		if pairs[[2]string{e.From.ID, e.To.ID}] > 1 {
			note += " (all streams)"
		}
		g.edges[e] = edgeFigures{note: note, width: 1 + min(4, math.Log10(1+traffic.Rate)/2)}
	}
	return writeDOT(topo, g)
}

func componentFigures(c *dsl.Component, f figures) nodeFigures {
	if c.Spout != nil {
		note := fmt.Sprintf("emit %s", rateText(f.EmitRate))
		if f.Acked > 0 || f.Failed > 0 {
			note += fmt.Sprintf("\nack %s, fail %s\ncomplete %s", rateText(f.AckRate), rateText(f.FailRate), msText(f.CompleteLatencyMs))
		}
		return nodeFigures{note: note}
	}
	note := fmt.Sprintf("capacity %.2f\nexecute %s, %s", f.Capacity, rateText(f.ExecuteRate), msText(f.ExecuteLatencyMs))
	if f.FailRate > 0 {
		note += fmt.Sprintf("\nfail %s", rateText(f.FailRate))
	}
	return nodeFigures{note: note, fill: capacityColour(f.Capacity)}
}

// writeDOT draws topo decorated with g.
func writeDOT(topo *dsl.Topology, g graphFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(topo.Name))
	b.WriteString("  rankdir=LR;\n")
	fmt.Fprintf(&b, "  label=%s; labelloc=t; fontname=\"Helvetica\";\n", dotQuote("topology "+topo.Name))
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=11, style=filled];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, c := range topo.Components {
		writeDOTNode(&b, c, g.components[c.ID])
	}
	for _, e := range topo.Edges {
		writeDOTEdge(&b, e, g.edges[e])
	}
	b.WriteString("}\n")
	return b.String()
}

func writeDOTNode(b *strings.Builder, c *dsl.Component, f nodeFigures) {
	kind, shape, fill, style := "bolt", "box", "#ffffff", "filled,rounded"
	if c.Spout != nil {
		kind, shape, fill, style = "spout", "invhouse", "#dbe9f6", "filled"
	}
	if f.fill != "" {
		fill = f.fill
	}
	label := fmt.Sprintf("%s\n%s, parallelism %d", c.ID, kind, c.Parallelism)
	if f.note != "" {
		label += "\n" + f.note
	}
	fmt.Fprintf(b, "  %s [shape=%s, style=%q, fillcolor=%s, label=%s];\n",
		dotQuote(c.ID), shape, style, dotQuote(fill), dotQuote(label))
}

func writeDOTEdge(b *strings.Builder, e *dsl.Edge, f edgeFigures) {
	label := fmt.Sprintf("%s\n%v", e.Stream.Name, e.Grouping)
	if f.note != "" {
		label += "\n" + f.note
	}
	style := "solid"
	if !e.Anchored {
		style = "dashed"
	}
	attrs := fmt.Sprintf("label=%s, style=%s", dotQuote(label), style)
	if f.width > 0 {
		attrs += fmt.Sprintf(", penwidth=%.2f", f.width)
	}
	fmt.Fprintf(b, "  %s -> %s [%s];\n", dotQuote(e.From.ID), dotQuote(e.To.ID), attrs)
}

// dotQuote makes s a DOT quoted string; newlines become centred line breaks.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

// capacityColour maps capacity 0..1 to a pale colour from green to red, pale
// so that the black label stays readable on it.
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
