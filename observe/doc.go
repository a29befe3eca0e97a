// Package observe shows what a running topology is doing, as Storm's UI does:
// rates, latencies, capacity and failures per component and per task, and the
// topology's shape with live figures on it. It exports them as OpenTelemetry
// instruments, over HTTP (Prometheus text, JSON and Graphviz DOT) and as
// progress lines, reading only counters the runtime keeps anyway.
//
// # Reading a running topology
//
// [Source] is implemented by *supervision.Running. A [Report] is computed from
// its snapshot (supervision.Stats); counters and latencies cover the current
// incarnation's life, rates and capacity a window since an earlier snapshot
// ([Window]):
//
//	w := observe.NewWindow(running, time.Second)
//	r := w.Report()
//	split, _ := r.Component("split")
//	fmt.Println(split.Capacity, split.ExecuteLatencyMs)
//
// # Serving metrics
//
//	srv, err := observe.Listen("127.0.0.1:9464", running)
//	if err != nil { ... }
//	defer srv.Close()
//	// GET /metrics: Prometheus text; GET /stats: the Report as JSON; GET /graph: DOT
//
// To export through an OpenTelemetry pipeline of your own (OTLP, ...), call
// [Instrument] with a meter from your MeterProvider instead.
//
// # Graphs
//
// dsl.Topology.DOT draws the static graph; [DOT] draws it with a report's
// figures: tuples/s on edges, bolts coloured by capacity.
//
//	go run ./samples/wordcount -graph | dot -Tsvg > wordcount.svg
//
// # What the figures mean
//
//   - emitted: tuples a task emitted; transferred: tuples it handed to
//     downstream tasks (an emit to n tasks counts n).
//   - acked, failed: for spouts, trees completed and trees failed or timed out;
//     for bolts, inputs acked and failed; expired counts the timeouts.
//   - execute latency: mean time in a bolt's Execute. Process latency: mean time
//     from a bolt taking an input from its mailbox to acking it (sampled).
//     Complete latency: mean time from a spout's emit to its tree's ack (sampled).
//   - capacity: fraction of the window a bolt task spent executing; near 1 the
//     bolt is the bottleneck. A component shows its busiest task.
//   - pending: open trees; mailbox depth: data batches waiting.
//
// Times are wall-clock even when the topology runs on an injected clock.
package observe
