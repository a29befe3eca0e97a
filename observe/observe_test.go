package observe_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// run runs numbers until its three trees are done; the test stops it.
func run(t *testing.T) *supervision.Running {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(10*time.Second))
	defer cancel()
	r, err := supervision.Run(context.Background(), numbers()) // its ctx would end the topology
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
	// WaitIdle alone can return before the spout emitted anything: nothing
	// is in flight at the start either.
	testsupport.WaitUntil(t, 10*time.Second, "the three trees to complete", func() bool {
		return r.Stats().Components["numbers"].Acked >= 3
	})
	if err := sheltertest.WaitIdle(ctx, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// buffer is a bytes.Buffer safe for the progress goroutine and the test.
type buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestProgressFollowsARunningTopologyUntilItStops(t *testing.T) {
	r := run(t)
	var out buffer
	stop, finished := observe.ProgressOf(&out, r, time.Millisecond)
	defer stop()
	testsupport.WaitUntil(t, 5*time.Second, "a progress line with emitted=3", func() bool {
		return strings.Contains(out.String(), "emitted=3 ")
	})
	if !strings.HasPrefix(out.String(), "progress: ") || !strings.Contains(out.String(), "emitted=3 ") || !strings.Contains(out.String(), "acked=3 ") {
		t.Fatalf("progress printed %q", out.String())
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The lines end by themselves once the topology is down: stop is not
	// called before they have.
	select {
	case <-finished:
	case <-time.After(testsupport.Scaled(5 * time.Second)):
		t.Fatal("progress kept printing after the topology stopped")
	}
}

func TestInstrumentReadsTheTopologyAtCollection(t *testing.T) {
	r := run(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	reg, err := observe.Instrument(provider.Meter("test"), r)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	acked := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "goshelter.tuples.acked" {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				c, _ := p.Attributes.Value("component")
				acked[c.AsString()] += p.Value
			}
		}
	}
	if acked["numbers"] != 3 || acked["double"] != 3 || acked["__acker"] != 3 {
		t.Errorf("goshelter.tuples.acked by component = %v, want 3 each", acked)
	}
}
