package observe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// ReportWindow is the shortest window the rates and capacity served at /stats
// and /graph cover: each covers the time since a baseline snapshot that moves up
// once it is this old.
const ReportWindow = time.Second

// Handler serves a running topology over HTTP:
//
//	/metrics  the instruments of [Instrument] in Prometheus text format
//	/stats    the [Report] as JSON
//	/graph    the live graph of [DOT] as Graphviz DOT text
//
// It collects through its own OpenTelemetry MeterProvider and Prometheus
// registry, so it never touches the global ones. It is safe for concurrent use.
type Handler struct {
	mux      *http.ServeMux
	provider *sdkmetric.MeterProvider
	reg      metric.Registration
	window   *Window
	src      Source
}

// NewHandler returns a handler for src. Close it to release its instruments.
func NewHandler(src Source) (*Handler, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("observe: creating the prometheus exporter: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	reg, err := Instrument(provider.Meter("github.com/goshelter/goshelter/observe"), src)
	if err != nil {
		return nil, errors.Join(err, provider.Shutdown(context.Background()))
	}
	h := &Handler{mux: http.NewServeMux(), provider: provider, reg: reg, window: NewWindow(src, ReportWindow), src: src}
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	h.mux.HandleFunc("GET /stats", h.stats)
	h.mux.HandleFunc("GET /graph", h.graph)
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) stats(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(h.window.Report()) // a failed write means the client left
}

func (h *Handler) graph(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
	_, _ = w.Write([]byte(DOT(h.src.Topology(), h.window.Report())))
}

// Close unregisters the instruments and shuts the meter provider down.
func (h *Handler) Close() error {
	return errors.Join(h.reg.Unregister(), h.provider.Shutdown(context.Background()))
}

// Server is a [Handler] listening on its own address.
type Server struct {
	handler *Handler
	http    *http.Server
	addr    string
	done    chan struct{}
	err     error // the serve loop's result, set before done closes
}

// Listen serves src at addr (such as "127.0.0.1:9464"; port 0 picks a free
// port, see [Server.Addr]) on a goroutine of its own until Shutdown or Close.
func Listen(addr string, src Source) (*Server, error) {
	h, err := NewHandler(src)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("observe: listening on %q: %w", addr, err), h.Close())
	}
	s := &Server{handler: h, http: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on, with the port it got.
func (s *Server) Addr() string { return s.addr }

// URL returns the server's base URL, such as "http://127.0.0.1:9464".
func (s *Server) URL() string { return "http://" + s.addr }

// Shutdown stops accepting requests, waits for those under way (until ctx
// ends) and releases the handler.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if err != nil {
		_ = s.http.Close()
	}
	<-s.done
	return errors.Join(err, s.err, s.handler.Close())
}

// Close stops the server at once and releases the handler.
func (s *Server) Close() error {
	err := s.http.Close()
	<-s.done
	return errors.Join(err, s.err, s.handler.Close())
}
