package supervision_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// BenchTuple is the one stream of the pipeline benchmarks.
type BenchTuple struct{ N int }

// BenchmarkPipeline measures tuples per second through spout -> bolt, the same
// pipeline run unreliable (fire-and-forget) and reliable (every tuple a tree the
// ackers track, the spout held to max pending). One op is one tuple: for the
// unreliable run it ends when the bolt has executed every tuple, for the reliable
// runs when the spout has heard every ack. See docs/BENCHMARKS.md.
func BenchmarkPipeline(b *testing.B) {
	b.Run("unreliable", func(b *testing.B) { benchPipeline(b, false, 0) })
	for _, pending := range []int{1024, 8192} {
		b.Run("reliable/max-pending="+strconv.Itoa(pending), func(b *testing.B) { benchPipeline(b, true, pending) })
	}
}

func benchPipeline(b *testing.B, reliable bool, maxPending int) {
	n := int64(b.N)
	done := make(chan struct{})
	var finished atomic.Int64
	finish := func() {
		if finished.Add(1) == n {
			close(done)
		}
	}
	var emitted int64 // touched only by the single spout task
	conf := dsl.Conf{}
	var spout *dsl.SpoutSpec
	if reliable {
		conf[dsl.MaxSpoutPending] = maxPending
		spout = dsl.Reliable(func() (int64, BenchTuple, bool) {
			if emitted == n {
				return 0, BenchTuple{}, false
			}
			emitted++
			return emitted, BenchTuple{N: int(emitted)}, true
		}, func(int64) { finish() }, func(int64) { b.Error("a tuple failed") })
	} else {
		spout = dsl.Unreliable(func() (BenchTuple, bool) {
			if emitted == n {
				return BenchTuple{}, false
			}
			emitted++
			return BenchTuple{N: int(emitted)}, true
		})
	}
	bolt := dsl.AutoAck(func(BenchTuple, dsl.Emitter) error {
		if !reliable {
			finish()
		}
		return nil
	})
	tb := dsl.New("pipeline", conf)
	s := tb.Spout("spout", spout)
	t := tb.Bolt("bolt", bolt)
	tb.Anchored(s, t, dsl.Shuffle[BenchTuple]())
	topo, err := tb.Build()
	if err != nil {
		b.Fatal(err)
	}

	b.ReportAllocs()
	b.ResetTimer()
	running, err := supervision.Run(context.Background(), topo, supervision.WithoutRestarts())
	if err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-running.Done():
		b.Fatalf("the topology stopped: %v", running.Wait())
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tuples/s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := running.Stop(ctx); err != nil {
		b.Fatal(err)
	}
}
