// Command gorunner is a goshelter binary whose Go components a host runs as
// shell components: "gorunner serve" serves the component the handshake names.
// The multilang specs build it and run it under goshelter's own host.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"go.uber.org/zap"
)

// MLNumber and MLDoubled are the streams; the specs declare the same types.
type MLNumber struct{ N int }

type MLDoubled struct{ N int }

// numbers emits 1..ml.count (a conf key) with acks logged to the host.
type numbers struct {
	next, count int
	log         *zap.Logger
	acked       int
}

func (n *numbers) Next() (int, MLNumber, bool) {
	if n.next >= n.count {
		return 0, MLNumber{}, false
	}
	n.next++
	return n.next, MLNumber{n.next}, true
}

func (n *numbers) Ack(id int) {
	n.acked++
	n.log.Info(fmt.Sprintf("acked %d", id))
	if n.acked == n.count {
		n.log.Info("done")
	}
}

func (n *numbers) Nack(id int) { n.log.Warn(fmt.Sprintf("nacked %d", id)) }

// doubler doubles numbers and reports how many it has seen as a metric.
type doubler struct {
	info dsl.TaskInfo
	seen int
}

func (d *doubler) Execute(in MLNumber, out dsl.Emitter) error {
	d.seen++
	d.info.Metric("seen", d.seen)
	out.Emit(MLDoubled{in.N * 2})
	return nil
}

func topology() (*dsl.Topology, error) {
	b := dsl.New("ml-go-runner", dsl.Conf{"goshelter.multilang.metrics": true})
	b.Streams(MLDoubled{})
	spout := b.Spout("numbers", dsl.ReliableFrom(func(info dsl.TaskInfo) dsl.Source[int, MLNumber] {
		count := 10
		if v, ok := info.Conf["ml.count"].(float64); ok {
			count = int(v)
		}
		return &numbers{count: count, log: info.Logger}
	}))
	double := b.Bolt("double", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[MLNumber] {
		return &doubler{info: info}
	}))
	sink := b.Bolt("sink", dsl.AutoAck(func(MLDoubled, dsl.Emitter) error { return nil }))
	b.Anchored(spout, double, dsl.Shuffle[MLNumber]())
	b.Anchored(double, sink, dsl.Shuffle[MLDoubled]())
	return b.Build()
}

func main() {
	topo, err := topology()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: gorunner serve")
		os.Exit(2)
	}
	if err := multilang.Serve(context.Background(), topo, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gorunner:", err)
		os.Exit(1)
	}
}
