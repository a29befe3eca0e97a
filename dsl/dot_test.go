package dsl_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/dsl"
)

type dotLine struct{ Text string }
type dotWord struct {
	Word string `storm:"word"`
}

// dotTopology is lines -> split (anchored, shuffle) -> count (anchored, fields)
// and split -> audit (unanchored, all), with an id that needs quoting.
func dotTopology(t *testing.T) *dsl.Topology {
	t.Helper()
	b := dsl.New("dot \"test\"", nil)
	b.Streams(dotWord{})
	lines := b.Spout("lines", dsl.Unreliable(func() (dotLine, bool) { return dotLine{}, false }), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(dotLine, dsl.Emitter) error { return nil }), dsl.Parallelism(3))
	count := b.Bolt("count", dsl.AutoAck(func(dotWord, dsl.Emitter) error { return nil }))
	audit := b.Bolt(`audit\log`, dsl.Terminator(func(dotWord) {}))
	b.Anchored(lines, split, dsl.Shuffle[dotLine]())
	b.Anchored(split, count, dsl.Fields(func(w dotWord) string { return w.Word }, "word"))
	b.Unanchored(split, audit, dsl.All[dotWord]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestDOT(t *testing.T) {
	got := dotTopology(t).DOT()
	want := `digraph "dot \"test\"" {
  rankdir=LR;
  label="topology dot \"test\""; labelloc=t; fontname="Helvetica";
  node [fontname="Helvetica", fontsize=11, style=filled];
  edge [fontname="Helvetica", fontsize=9];
  "lines" [shape=invhouse, style="filled", fillcolor="#dbe9f6", label="lines\nspout, parallelism 2"];
  "split" [shape=box, style="filled,rounded", fillcolor="#ffffff", label="split\nbolt, parallelism 3"];
  "count" [shape=box, style="filled,rounded", fillcolor="#ffffff", label="count\nbolt, parallelism 1"];
  "audit\\log" [shape=box, style="filled,rounded", fillcolor="#ffffff", label="audit\\log\nbolt, parallelism 1"];
  "lines" -> "split" [label="dotLine\nshuffle", style=solid];
  "split" -> "count" [label="dotWord\nfields[word]", style=solid];
  "split" -> "audit\\log" [label="dotWord\nall", style=dashed];
}
`
	if got != want {
		t.Errorf("DOT() =\n%s\nwant\n%s", got, want)
	}
	checkWithGraphviz(t, got)
}

func TestWriteDOTFigures(t *testing.T) {
	topo := dotTopology(t)
	figures := &dsl.GraphFigures{
		Components: map[string]dsl.NodeFigures{"split": {Note: "capacity 0.93", Fill: "#ff8c8c"}},
		Edges:      map[*dsl.Edge]dsl.EdgeFigures{topo.Edges[1]: {Note: "12.0k/s", Width: 3}},
	}
	var buf bytes.Buffer
	if err := topo.WriteDOT(&buf, figures); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{
		`"split" [shape=box, style="filled,rounded", fillcolor="#ff8c8c", label="split\nbolt, parallelism 3\ncapacity 0.93"];`,
		`"split" -> "count" [label="dotWord\nfields[word]\n12.0k/s", style=solid, penwidth=3.00];`,
		`"lines" -> "split" [label="dotLine\nshuffle", style=solid];`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteDOT output lacks %s:\n%s", want, got)
		}
	}
	checkWithGraphviz(t, got)
}

// checkWithGraphviz renders graph with Graphviz's dot when it is installed.
func checkWithGraphviz(t *testing.T, graph string) {
	t.Helper()
	path, err := exec.LookPath("dot")
	if err != nil {
		t.Log("Graphviz dot is not installed: the DOT output was not rendered")
		return
	}
	cmd := exec.Command(path, "-Tsvg")
	cmd.Stdin = strings.NewReader(graph)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("dot rejected the graph: %v\n%s\n%s", err, stderr.String(), graph)
	}
	if !bytes.Contains(out, []byte("<svg")) {
		t.Fatalf("dot produced no SVG:\n%s", out)
	}
}
