package multilang_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
)

// The streams of the examples.
type (
	Line struct {
		Text string `storm:"line"`
	}
	Upper struct {
		Text string `storm:"line"`
	}
)

// shout is lines (a Go spout) -> upper (a Go bolt) -> print (a shell bolt).
func shout() *dsl.Topology {
	b := dsl.New("shout", nil)
	b.Streams(Upper{})
	lines := b.Spout("lines", dsl.Unreliable(func() (Line, bool) { return Line{"hello storm"}, true }))
	upper := b.Bolt("upper", dsl.AutoAck(func(in Line, out dsl.Emitter) error {
		out.Emit(Upper{strings.ToUpper(in.Text)})
		return nil
	}), dsl.Parallelism(2), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 5 * time.Second}))
	printer := b.Bolt("print", multilang.Bolt(multilang.Command{Path: "python3", Args: []string{"print.py"}}))
	b.Anchored(lines, upper, dsl.Shuffle[Line]())
	b.Anchored(upper, printer, dsl.LocalOrShuffle[Upper]())
	topo, err := b.Build()
	if err != nil {
		panic(err)
	}
	return topo
}

// A goshelter binary serves its Go components to Storm when Storm starts it
// as a shell component: main calls Serve with os.Stdin and os.Stdout. Here the
// host is played by a string holding what Storm's ShellBolt would send: the
// handshake naming the "upper" bolt, then one tuple. Serve answers with its pid,
// emits anchored to the input, acks it, and returns when its input ends.
func ExampleServe() {
	host := strings.NewReader(`{"conf":{},"pidDir":"","context":{"componentid":"upper","taskid":3}}
end
{"id":"-42","comp":"lines","stream":"Line","task":1,"tuple":["hello storm"]}
end
`)
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound: Serve returns when its input ends
	defer cancel()
	if err := multilang.Serve(ctx, shout(), host, &out); err != nil {
		fmt.Println(err)
	}
	fmt.Print(regexp.MustCompile(`"pid":\d+`).ReplaceAllString(out.String(), `"pid":PID`))
	// Output:
	// {"pid":PID}
	// end
	// {"command":"emit","stream":"Upper","tuple":["HELLO STORM"],"anchors":["-42"],"need_task_ids":false}
	// end
	// {"command":"ack","id":"-42"}
	// end
}

// Flux describes the topology for Storm's Flux loader: the Go components run
// this binary (here "./shout serve", which calls Serve), the shell bolt runs
// its own command.
func ExampleFlux() {
	if err := multilang.Flux(os.Stdout, shout(), "./shout", "serve"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// name: shout
	// config:
	//   topology.acker.executors: 2
	//   topology.acker.tasks: 4
	//   topology.batch.flush.interval.millis: 1
	//   topology.debug: false
	//   topology.executor.receive.buffer.size: 256
	//   topology.kryo.register:
	//     - org.apache.storm.shade.net.minidev.json.JSONArray
	//     - org.apache.storm.shade.net.minidev.json.JSONObject
	//     - java.math.BigDecimal
	//   topology.max.spout.pending: 128
	//   topology.message.timeout.secs: 30
	//   topology.sleep.spout.wait.strategy.time.ms: 100
	//   topology.state.checkpoint.interval.ms: 1000
	//   topology.subprocess.timeout.secs: 30
	//   topology.workers: 1
	// spouts:
	//   - id: lines
	//     className: org.apache.storm.flux.wrappers.spouts.FluxShellSpout
	//     constructorArgs:
	//       - - ./shout
	//         - serve
	//     configMethods:
	//       - name: setNamedStream
	//         args:
	//           - Line
	//           - - line
	//     parallelism: 1
	//     numTasks: 1
	// bolts:
	//   - id: print
	//     className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
	//     constructorArgs:
	//       - - python3
	//         - print.py
	//     parallelism: 1
	//     numTasks: 1
	//   - id: upper
	//     className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
	//     constructorArgs:
	//       - - ./shout
	//         - serve
	//     configMethods:
	//       - name: setNamedStream
	//         args:
	//           - Upper
	//           - - line
	//     parallelism: 2
	//     numTasks: 2
	//     config:
	//       topology.tick.tuple.freq.secs: 5
	// streams:
	//   - name: lines --Line--> upper
	//     from: lines
	//     to: upper
	//     grouping:
	//       type: SHUFFLE
	//       streamId: Line
	//   - name: upper --Upper--> print
	//     from: upper
	//     to: print
	//     grouping:
	//       type: LOCAL_OR_SHUFFLE
	//       streamId: Upper
}
