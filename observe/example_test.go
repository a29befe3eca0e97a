package observe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

type Num struct{ N int }
type Doubled struct{ N int }

// numbers is numbers (a reliable spout handing out 1, 2, 3) -> double (2 tasks).
func numbers() *dsl.Topology {
	b := dsl.New("numbers", nil)
	b.Streams(Doubled{})
	src := b.Spout("numbers", sheltertest.NewSource(Num{1}, Num{2}, Num{3}).Spout())
	double := b.Bolt("double", dsl.AutoAck(func(n Num, out dsl.Emitter) error {
		out.Emit(Doubled{2 * n.N})
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(src, double, dsl.Shuffle[Num]())
	topo, err := b.Build()
	if err != nil {
		log.Fatal(err)
	}
	return topo
}

// A running topology serves its figures at a port of its own; port 0 picks a
// free one, which the server's Addr tells.
func ExampleListen() {
	ctx := context.Background()
	topo := numbers()
	running, err := supervision.Run(ctx, topo)
	if err != nil {
		log.Fatal(err)
	}
	defer running.Stop(ctx)
	srv, err := observe.Listen("127.0.0.1:0", topo, running)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	if err := sheltertest.WaitIdle(ctx, running); err != nil { // the three trees are done
		log.Fatal(err)
	}
	resp, err := http.Get("http://" + srv.Addr + "/stats")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var stats struct {
		Components []struct {
			Component, Kind          string
			Tasks                    int
			Emitted, Executed, Acked int64
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		log.Fatal(err)
	}
	for _, c := range stats.Components {
		fmt.Printf("%s: %s tasks=%d emitted=%d executed=%d acked=%d\n", c.Component, c.Kind, c.Tasks, c.Emitted, c.Executed, c.Acked)
	}
	// Output:
	// double: bolt tasks=2 emitted=3 executed=3 acked=3
	// numbers: spout tasks=1 emitted=3 executed=0 acked=3
	// __acker: acker tasks=4 emitted=0 executed=0 acked=3
}

// Without a snapshot, DOT draws the topology's shape: what -graph prints in the
// samples.
func ExampleDOT() {
	fmt.Print(observe.DOT(numbers(), nil))
	// Output:
	// digraph "numbers" {
	//   rankdir=LR;
	//   label="topology numbers"; labelloc=t; fontname="Helvetica";
	//   node [fontname="Helvetica", fontsize=11, style=filled];
	//   edge [fontname="Helvetica", fontsize=9];
	//   "numbers" [shape=invhouse, style="filled", fillcolor="#dbe9f6", label="numbers\nspout, parallelism 1"];
	//   "double" [shape=box, style="filled,rounded", fillcolor="#ffffff", label="double\nbolt, parallelism 2"];
	//   "numbers" -> "double" [label="Num\nshuffle", style=solid];
	// }
}
