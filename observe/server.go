package observe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// reportWindow is the shortest window the rates and capacity served at /stats,
// /graph and on the page's graph cover: long enough that a rate is not the
// noise of one batch, short enough to follow a load change.
const reportWindow = time.Second

// Handler serves what r, a run of topo, is doing:
//
//	GET /                 a status page, as Storm's UI shows a topology
//	GET /api/v1/...       Storm UI's REST API: topology/summary, topology/{id},
//	                      topology/{id}/component/{component}
//	GET /metrics          Prometheus text: the instruments of [Instrument] with
//	                      latency histograms, and Go runtime and process metrics
//	GET /stats            Storm UI figures per component and per task, as JSON
//	GET /graph            the graph of [DOT] with live figures, as Graphviz DOT text
//
// The page needs nothing but the handler: its script and style are embedded,
// it fetches nothing from elsewhere, and it refreshes itself. Mount the handler
// on a mux of your own (under a prefix, use http.StripPrefix), or let [Listen]
// serve it. It collects through a MeterProvider and a Prometheus registry of
// its own, so that it never registers anything on the global ones a program may
// already export; reading r costs nothing between requests. It is safe for
// concurrent use and keeps working after r stops (with no tasks to report).
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
	if _, err := instrument(provider.Meter("github.com/goshelter/goshelter/observe"), stats, withoutMeans); err != nil {
		panic(err) // the instruments are constants; the tests create them
	}
	registry.MustRegister(newLatencyHistograms(stats),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	window := newWindow(stats, reportWindow)
	host, _ := os.Hostname() // Storm's errorHost; empty when the system will not say
	api := &stormAPI{topo: topo, stats: stats, host: host}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", page())
	mux.Handle("GET /ui/", assets())
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, window.read())
	})
	mux.HandleFunc("GET /graph", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		_, _ = w.Write([]byte(liveDOT(topo, window.read())))
	})
	mux.HandleFunc("GET /api/v1/topology/summary", api.summary)
	mux.HandleFunc("GET /api/v1/topology/{id}", api.topology)
	mux.HandleFunc("GET /api/v1/topology/{id}/component/{component}", api.component)
	mux.HandleFunc("GET /api/v1/topology/{id}/graph", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := api.request(w, r); ok {
			writeJSON(w, http.StatusOK, newGraphView(topo, window.read()))
		}
	})
	return secured(mux)
}

// secured adds the headers that keep a browser from misreading an answer or
// framing the page.
func secured(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// limits harden the server of [Listen]: a client that sends slowly, reads
// slowly or holds connections open must not take the process's file
// descriptors and goroutines, which the topology needs.
type limits struct {
	readHeader time.Duration // to read a request's headers
	read       time.Duration // to read a whole request
	write      time.Duration // to write the answer, from the end of the headers read
	idle       time.Duration // a keep-alive connection waits this long for its next request
	// maxConns bounds the connections open at once; at the bound a newcomer
	// takes the place of the connection idle the longest (see connCap).
	maxConns int
	// wrap, when set, wraps the listener under the cap (tests count connections).
	wrap func(net.Listener) net.Listener
}

// defaultLimits are generous for a person and a scraper: /metrics of a
// topology with thousands of tasks is written well within them. The idle
// timeout outlasts the page's slowest refresh (15 s), so a page keeps its
// connection, and closes an abandoned one within 30 s of its last answer.
var defaultLimits = limits{
	readHeader: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second,
	idle: 20 * time.Second, maxConns: 64,
}

// Listen serves [Handler] at addr on a goroutine of its own, for a program that
// has no HTTP server to mount the handler on. addr is host:port; with no host
// (":9464") it listens on the loopback interface only, as the figures and the
// page are for the machine's own users: give "0.0.0.0:9464" or another address
// to serve a network. Port 0 picks a free port. The [Server] is a plain
// *http.Server whose Addr is the address it listens on, with the port it got;
// stop it with its Close, or with Shutdown to let requests under way finish:
// both return once the goroutine that serves it has ended.
//
// The server bounds what a client can hold: read and write timeouts, an idle
// keep-alive connection closed 20 s after its last answer, and at most 64
// connections open at once. Idle connections do not lock out new clients: at
// the bound, a new connection takes the place of the one idle the longest;
// only when all 64 are busy with requests does it wait to be accepted.
func Listen(addr string, topo *dsl.Topology, r *supervision.Running) (*Server, error) {
	return listen(addr, newHandler(topo, r.Stats), defaultLimits)
}

func listen(addr string, h http.Handler, lim limits) (*Server, error) {
	srv, _, err := listenCapped(addr, h, lim)
	return srv, err
}

// listenCapped is listen that also returns the server's connection cap, for
// tests that watch it.
func listenCapped(addr string, h http.Handler, lim limits) (*Server, *connCap, error) {
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("observe: %w", err)
	}
	if lim.wrap != nil {
		ln = lim.wrap(ln)
	}
	bounded := newConnCap(ln, lim.maxConns)
	srv := &http.Server{
		Addr: ln.Addr().String(), Handler: h,
		ReadHeaderTimeout: lim.readHeader, ReadTimeout: lim.read, WriteTimeout: lim.write, IdleTimeout: lim.idle,
		MaxHeaderBytes: 64 << 10,
		ConnState:      bounded.track,
	}
	return start(srv, bounded), bounded, nil
}

// Server is the HTTP server [Listen] starts, on a goroutine it owns. Its
// embedded *http.Server is a plain one; Close and Shutdown also join that
// goroutine, as errgroup's Wait does, and report how serving ended.
type Server struct {
	*http.Server
	served chan struct{} // closed when Serve has returned
	err    error         // Serve's error, unless it is http.ErrServerClosed; read once served is closed
}

// start starts srv.Serve(ln) on a goroutine that the returned Server joins.
func start(srv *http.Server, ln net.Listener) *Server {
	s := &Server{Server: srv, served: make(chan struct{})}
	go func() {
		defer close(s.served)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("observe: serving %s: %w", srv.Addr, err)
		}
	}()
	return s
}

// Close closes the listener and every connection (http.Server.Close), waits
// until the server's goroutine has ended, and returns Close's error joined
// with the one that ended serving earlier, if any (a listener that failed for
// good).
func (s *Server) Close() error {
	err := s.Server.Close()
	<-s.served
	return errors.Join(err, s.err)
}

// Shutdown stops the server gracefully (http.Server.Shutdown: requests under
// way finish, bounded by ctx), waits until the server's goroutine has ended,
// and returns Shutdown's error joined with the one that ended serving
// earlier, if any.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.Server.Shutdown(ctx)
	<-s.served // Serve returns as soon as the listener is closed, before the wait for requests
	return errors.Join(err, s.err)
}
