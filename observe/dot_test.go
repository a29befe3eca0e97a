package observe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/observe"
)

func TestDOTDrawsLiveFigures(t *testing.T) {
	topo := sampleTopology(t)
	graph := observe.DOT(topo, observe.NewReport(nil, sampleStats(10*time.Second, 1)))
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

func TestDOTWithoutFigures(t *testing.T) {
	topo := sampleTopology(t)
	graph := observe.DOT(topo, observe.Report{})
	if !strings.Contains(graph, `"src" -> "bolt" [label="line\nshuffle\n0/s", style=solid, penwidth=1.00]`) {
		t.Errorf("an idle edge shows 0/s:\n%s", graph)
	}
	checkWithGraphviz(t, graph)
}
