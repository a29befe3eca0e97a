package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

type tick struct{ N int }

// topology is one spout whose Next panics when crash is set, and a sink.
func topology(t *testing.T, crash bool) *dsl.Topology {
	t.Helper()
	b := dsl.New("cli", nil)
	src := b.Spout("src", dsl.Unreliable(func() (tick, bool) {
		if crash {
			panic("src: crashing on purpose")
		}
		return tick{}, false
	}))
	sink := b.Bolt("sink", dsl.AutoAck(func(tick, dsl.Emitter) error { return nil }))
	b.Anchored(src, sink, dsl.Shuffle[tick]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAwaitReturnsWhyATopologyEndedByItself: a failure under WithoutRestarts
// ends Await at once with the failure, which the sample reports after its
// summary; a run that lasts its duration ends it with nil.
func TestAwaitReturnsWhyATopologyEndedByItself(t *testing.T) {
	r, err := supervision.Run(context.Background(), topology(t, true), supervision.WithoutRestarts(), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	err = Await(context.Background(), r, time.Hour, nil)
	if err == nil || !strings.Contains(err.Error(), "crashing on purpose") {
		t.Errorf("Await = %v, want the spout's failure", err)
	}

	r, err = supervision.Run(context.Background(), topology(t, false), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Await(context.Background(), r, time.Millisecond, nil); err != nil {
		t.Errorf("Await after its duration = %v, want nil", err)
	}
	if err := Stop(r, 10*time.Second); err != nil {
		t.Errorf("Stop = %v", err)
	}
}

// TestStopAfterAnInterruptIsNoError: an interrupt cancels Run's ctx, which
// stops the topology; the sample's own Stop then finds it stopped, and that is
// what the person asked for, not a failure.
func TestStopAfterAnInterruptIsNoError(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	r, err := supervision.Run(ctx, topology(t, false), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	interrupt()
	<-r.Done()
	// Await sees the interrupt or the stopped topology first, at random:
	// either way it is no failure (20 tries miss neither case but once in a
	// million).
	for range 20 {
		if err := Await(ctx, r, time.Hour, nil); err != nil {
			t.Fatalf("Await after the interrupt = %v, want nil", err)
		}
	}
	if err := Stop(r, 10*time.Second); err != nil {
		t.Errorf("Stop after the interrupt = %v, want nil", err)
	}
}
