package acker

import (
	"sync/atomic"
	"testing"
)

// ids returns distinct non-zero ids cheaply, so benchmarks measure the tracker.
type ids uint64

func (i *ids) next() uint64 {
	*i += 0x9e3779b97f4a7c15 // odd: visits every value before repeating, never 0 first
	if *i == 0 {
		*i += 0x9e3779b97f4a7c15
	}
	return uint64(*i)
}

// runTree runs one tuple tree through t: Track, one Anchor per edge, one Ok per
// edge. (actors' BenchmarkApplyOp runs the same tree as the acker task drives it.)
func runTree(t *Tracker, g *ids, edges int) {
	root := g.next()
	t.Track(root, 1, 0)
	var es [8]uint64
	for i := 0; i < edges; i++ {
		es[i] = g.next()
		t.Anchor(root, es[i])
	}
	for i := 0; i < edges; i++ {
		t.Ok(root, es[i])
	}
}

// BenchmarkTree measures the cost of one whole tree (track, anchor, ok) with a
// given number of other trees open in the tracker.
func BenchmarkTree(b *testing.B) {
	for _, bc := range []struct {
		name        string
		edges, open int
	}{
		{"edges=1/open=0", 1, 0},
		{"edges=3/open=0", 3, 0},
		{"edges=3/open=100k", 3, 100_000},
		{"edges=8/open=0", 8, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			t := New(1 << 20)
			g := ids(1)
			for i := 0; i < bc.open; i++ {
				t.Track(g.next(), 1, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runTree(t, &g, bc.edges)
			}
		})
	}
}

// BenchmarkOp measures each operation alone on a tracker holding many open trees.
func BenchmarkOp(b *testing.B) {
	const open = 1 << 12
	setup := func() (*Tracker, []uint64) {
		t := New(1 << 20)
		g := ids(1)
		roots := make([]uint64, open)
		for i := range roots {
			roots[i] = g.next()
			t.Track(roots[i], 1, 0)
		}
		return t, roots
	}
	b.Run("track", func(b *testing.B) {
		t := New(b.N + 1)
		g := ids(1)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			t.Track(g.next(), 1, 0)
		}
	})
	b.Run("anchor", func(b *testing.B) {
		t, roots := setup()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t.Anchor(roots[i&(open-1)], uint64(i)|1)
		}
	})
	b.Run("ok", func(b *testing.B) {
		t, roots := setup()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t.Ok(roots[i&(open-1)], uint64(i)|1) // never completes: the accumulator stays non-zero
		}
	})
}

// BenchmarkRotate measures expiring a bucket of 1024 trees, per tree.
func BenchmarkRotate(b *testing.B) {
	t := New(1 << 20)
	g := ids(1)
	expired := 0
	onExpire := func(uint64, int) { expired++ }
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%1024 == 0 {
			t.Rotate(onExpire)
		}
		t.Track(g.next(), 1, 0)
	}
	b.StopTimer()
	for j := 0; j < buckets; j++ {
		t.Rotate(onExpire)
	}
	if expired != b.N {
		b.Fatalf("expired %d trees, want %d", expired, b.N)
	}
}

// BenchmarkTreeParallel runs one tracker per goroutine, as acker tasks do: the
// tracker is single-threaded, so this shows how independent ackers scale.
func BenchmarkTreeParallel(b *testing.B) {
	var seed atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		t := New(1 << 20)
		g := ids(seed.Add(1) << 32)
		for pb.Next() {
			runTree(t, &g, 3)
		}
	})
}
