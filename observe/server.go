package observe

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// reportWindow is the shortest window the rates and capacity served at /stats
// and /graph cover: long enough that a rate is not the noise of one batch,
// short enough to follow a load change.
const reportWindow = time.Second

// Handler serves what r, a run of topo, is doing:
//
//	GET /metrics  the instruments of [Instrument] in Prometheus text format
//	GET /stats    Storm UI figures per component and per task, as JSON
//	GET /graph    the graph of [DOT] with live figures, as Graphviz DOT text
//
// Mount it on a mux of your own (under a prefix, use http.StripPrefix), or let
// [Listen] serve it. It collects through a MeterProvider and a Prometheus
// registry of its own, so that it never registers anything on the global ones
// a program may already export; reading r costs nothing between requests. It
// is safe for concurrent use and keeps working after r stops (with no tasks to
// report).
func Handler(topo *dsl.Topology, r *supervision.Running) http.Handler {
	return newHandler(topo, r.Stats)
}

func newHandler(topo *dsl.Topology, stats func() supervision.Stats) http.Handler {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil { // only a registry that already holds the exporter refuses it
		panic(fmt.Sprintf("observe: creating the prometheus exporter: %v", err))
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	// The provider has a pull reader only: nothing runs in the background, so
	// there is nothing to shut down; it goes with the handler.
	if _, err := instrument(provider.Meter("github.com/goshelter/goshelter/observe"), stats); err != nil {
		panic(err) // the instruments are constants; the tests create them
	}
	window := newWindow(stats, reportWindow)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(window.read()) // a failed write means the client left
	})
	mux.HandleFunc("GET /graph", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		_, _ = w.Write([]byte(liveDOT(topo, window.read())))
	})
	return mux
}

// Listen serves [Handler] at addr (such as "127.0.0.1:9464"; port 0 picks a
// free port) on a goroutine of its own, for a program that has no HTTP server
// to mount the handler on. The server is a plain *http.Server whose Addr is the
// address it listens on, with the port it got; stop it with its Close, or with
// Shutdown to let requests under way finish.
func Listen(addr string, topo *dsl.Topology, r *supervision.Running) (*http.Server, error) {
	return listen(addr, newHandler(topo, r.Stats))
}

func listen(addr string, h http.Handler) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	srv := &http.Server{Addr: ln.Addr().String(), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	// Serve ends with ErrServerClosed on Close or Shutdown; its other errors
	// (a listener that fails for good) leave nothing to report to but the
	// scraper, which sees the address stop answering.
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
