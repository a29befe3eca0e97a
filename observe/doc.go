// Package observe shows what a running topology is doing, as Storm's UI does:
// rates, latencies, capacity and failures per component and per task, and the
// topology's shape with live figures on it. Mount its [Handler] (or [Listen])
// and open its status page, or read /metrics, /stats, /graph and Storm UI's
// REST API under /api/v1; there is nothing else to learn, as with expvar and
// net/http/pprof.
//
// It reads only counters the runtime keeps anyway (supervision.Stats), and only
// when asked, so observing a topology costs it nothing between requests.
//
// # Serving
//
//	running, err := supervision.Run(ctx, topo)
//	...
//	srv, err := observe.Listen("127.0.0.1:8080", topo, running)
//	if err != nil { ... }
//	defer srv.Close()
//	// GET /: the status page; GET /api/v1/topology/summary: Storm UI's REST API;
//	// GET /metrics: Prometheus text; GET /stats: JSON; GET /graph: DOT
//
// or, on a server of your own,
//
//	mux.Handle("/observe/", http.StripPrefix("/observe", observe.Handler(topo, running)))
//
// The page (embedded: no network, no build step) shows the topology's summary
// and restart history, its spouts and bolts with Storm UI's columns and last
// errors, the live graph, its configuration, and any component's tasks with
// the metrics they report; it refreshes itself.
// [Listen] binds the loopback interface unless given a host, and bounds what
// a client can hold (timeouts, 64 connections at once).
//
// To export through an OpenTelemetry pipeline of your own (OTLP, a shared
// Prometheus registry), call [Instrument] with a meter from your MeterProvider.
//
// # Graphs and progress
//
// [DOT] draws the topology as Graphviz text, plain or with a snapshot's
// figures; [Progress] prints a line a second for a person watching a run:
//
//	go run ./samples/wordcount -graph | dot -Tsvg > wordcount.svg
//	stop := observe.Progress(os.Stdout, running, time.Second)
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
//     /metrics serves all three as histograms per component.
//   - last error: a component's most recent failure (an input failed with an
//     error or a panic, a task failure), with its time and task; it survives
//     the restart it causes.
//   - capacity: fraction of the window a bolt task spent executing; near 1 the
//     bolt is the bottleneck. A component shows its busiest task.
//   - pending: open trees; mailbox depth: data batches waiting.
//
// Counters and latencies cover the current incarnation's life; rates and
// capacity cover a window (at /stats and /graph, at least the last second; on
// the REST API and the page, Storm UI's: the last ten minutes, three hours or
// day, or the incarnation's life).
// Times are wall-clock even when the topology runs on a manual clock.
// docs/OBSERVABILITY.md lists the metric names and the JSON fields.
package observe
