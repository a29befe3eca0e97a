package observe

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

type line struct{ Text string }
type word struct{ Text string }

// sampleTopology matches sampleStats: src -> bolt (anchored) -> sink (unanchored).
func sampleTopology(t *testing.T) *dsl.Topology {
	t.Helper()
	b := dsl.New("t", nil)
	b.Streams(word{})
	src := b.Spout("src", dsl.Unreliable(func() (line, bool) { return line{}, false }))
	bolt := b.Bolt("bolt", dsl.AutoAck(func(line, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
	sink := b.Bolt("sink", dsl.AutoAck(func(word, dsl.Emitter) error { return nil }))
	b.Anchored(src, bolt, dsl.Shuffle[line]())
	b.Unanchored(bolt, sink, dsl.Shuffle[word]())
	return build(t, b)
}

func build(t *testing.T, b *dsl.Builder) *dsl.Topology {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

type dotLine struct{ Text string }
type dotWord struct {
	Word string `storm:"word"`
}

// dotTopology is lines -> split (anchored, shuffle) -> count (anchored, fields)
// and split -> audit (unanchored, all), with ids that need quoting.
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
	return build(t, b)
}

func TestDOTWithoutStatsDrawsThePlainGraph(t *testing.T) {
	got := DOT(dotTopology(t), nil)
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
		t.Errorf("DOT(topo, nil) =\n%s\nwant\n%s", got, want)
	}
	checkWithGraphviz(t, got)
}

func TestWriteDOTDecorates(t *testing.T) {
	topo := dotTopology(t)
	got := writeDOT(topo, graphFigures{
		components: map[string]nodeFigures{"split": {note: "capacity 0.93", fill: "#ff8c8c"}},
		edges:      map[*dsl.Edge]edgeFigures{topo.Edges[1]: {note: "12.0k/s", width: 3}},
	})
	for _, want := range []string{
		`"split" [shape=box, style="filled,rounded", fillcolor="#ff8c8c", label="split\nbolt, parallelism 3\ncapacity 0.93"];`,
		`"split" -> "count" [label="dotWord\nfields[word]\n12.0k/s", style=solid, penwidth=3.00];`,
		`"lines" -> "split" [label="dotLine\nshuffle", style=solid];`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("writeDOT output lacks %s:\n%s", want, got)
		}
	}
	checkWithGraphviz(t, got)
}

func TestDOTDrawsLiveFigures(t *testing.T) {
	stats := sampleStats(10*time.Second, 1)
	graph := DOT(sampleTopology(t), &stats)
	for _, want := range []string{
		// the spout: emit and ack rates, complete latency
		`label="src\nspout, parallelism 1\nemit 40/s\nack 38/s, fail 1/s\ncomplete 10.0 ms"`,
		// bolts filled by capacity: task 2 was busy half the time
		`"bolt" [shape=box, style="filled,rounded", fillcolor="#ffff8c", label="bolt\nbolt, parallelism 2\ncapacity 0.50\nexecute 40/s, 17.5 ms\nfail 1/s"]`,
		`fillcolor="#8fff8c", label="sink\nbolt, parallelism 1\ncapacity 0.01\nexecute 5/s, 2.0 ms"`,
		// tuples/s on edges, unanchored still dashed
		`"src" -> "bolt" [label="line\nshuffle\n40/s", style=solid, penwidth=1.81]`,
		`"bolt" -> "sink" [label="word\nshuffle\n5/s", style=dashed, penwidth=1.39]`,
	} {
		if !strings.Contains(graph, want) {
			t.Errorf("graph lacks %s:\n%s", want, graph)
		}
	}
	checkWithGraphviz(t, graph)
}

func TestDOTOfAStoppedTopologyShowsIdleEdges(t *testing.T) {
	graph := DOT(sampleTopology(t), &supervision.Stats{Topology: "t", Time: t0})
	if !strings.Contains(graph, `"src" -> "bolt" [label="line\nshuffle\n0/s", style=solid, penwidth=1.00]`) {
		t.Errorf("an idle edge shows 0/s:\n%s", graph)
	}
	checkWithGraphviz(t, graph)
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
	if out, err := cmd.Output(); err != nil || stderr.Len() > 0 || !bytes.Contains(out, []byte("<svg")) {
		t.Fatalf("dot rejected the graph: %v\n%s\n%s", err, stderr.String(), graph)
	}
}
