package dsl

import (
	"fmt"
	"io"
	"strings"
)

// GraphFigures are live numbers drawn on a topology graph by [Topology.WriteDOT]:
// a line added under a component's or an edge's label, a fill colour for a
// component, a pen width for an edge. Package observe fills them from a running
// topology's stats.
type GraphFigures struct {
	Components map[string]NodeFigures // by component id
	Edges      map[*Edge]EdgeFigures  // by edge of Topology.Edges
}

// NodeFigures decorate one component: Note is added to its label and Fill, a
// Graphviz colour such as "#ffcc00", replaces its fill colour when set.
type NodeFigures struct {
	Note string
	Fill string
}

// EdgeFigures decorate one edge: Note is added to its label and Width, when
// positive, sets its pen width.
type EdgeFigures struct {
	Note  string
	Width float64
}

// DOT returns the topology as a Graphviz digraph: spouts and bolts with their
// parallelism, one edge per subscription labelled with its stream and grouping,
// anchored edges solid and unanchored ones dashed. Render it with
//
//	dot -Tsvg topology.dot > topology.svg
func (t *Topology) DOT() string {
	var b strings.Builder
	_ = t.WriteDOT(&b, nil) // a strings.Builder does not fail
	return b.String()
}

// WriteDOT writes the graph [Topology.DOT] describes to w, decorated with
// figures when figures is not nil. The output is deterministic: components and
// edges appear in definition order.
func (t *Topology) WriteDOT(w io.Writer, figures *GraphFigures) error {
	if figures == nil {
		figures = &GraphFigures{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(t.Name))
	b.WriteString("  rankdir=LR;\n")
	fmt.Fprintf(&b, "  label=%s; labelloc=t; fontname=\"Helvetica\";\n", dotQuote("topology "+t.Name))
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=11, style=filled];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, c := range t.Components {
		writeDOTNode(&b, c, figures.Components[c.ID])
	}
	for _, e := range t.Edges {
		writeDOTEdge(&b, e, figures.Edges[e])
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDOTNode(b *strings.Builder, c *Component, f NodeFigures) {
	shape, fill := "box", "#ffffff"
	style := "filled,rounded"
	if c.Spout != nil {
		shape, fill, style = "invhouse", "#dbe9f6", "filled"
	}
	if f.Fill != "" {
		fill = f.Fill
	}
	label := fmt.Sprintf("%s\n%v, parallelism %d", c.ID, kindOf(c), c.Parallelism)
	if f.Note != "" {
		label += "\n" + f.Note
	}
	fmt.Fprintf(b, "  %s [shape=%s, style=%q, fillcolor=%s, label=%s];\n",
		dotQuote(c.ID), shape, style, dotQuote(fill), dotQuote(label))
}

func writeDOTEdge(b *strings.Builder, e *Edge, f EdgeFigures) {
	label := fmt.Sprintf("%s\n%v", e.Stream.Name, e.Grouping)
	if f.Note != "" {
		label += "\n" + f.Note
	}
	style := "solid"
	if !e.Anchored {
		style = "dashed"
	}
	attrs := fmt.Sprintf("label=%s, style=%s", dotQuote(label), style)
	if f.Width > 0 {
		attrs += fmt.Sprintf(", penwidth=%.2f", f.Width)
	}
	fmt.Fprintf(b, "  %s -> %s [%s];\n", dotQuote(e.From.ID), dotQuote(e.To.ID), attrs)
}

// dotQuote makes s a DOT quoted string; newlines become centred line breaks.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}
