package routing_test

import (
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/routing"
)

// discardSink counts what it is given and keeps nothing, so a benchmark
// measures the router alone.
type discardSink struct{ delivered, anchored, tracked int }

func (s *discardSink) Deliver(int, *dsl.Tuple) { s.delivered++ }
func (s *discardSink) Track(uint64, int)       { s.tracked++ }
func (s *discardSink) Anchor(uint64, uint64)   { s.anchored++ }
func (s *discardSink) Fail(uint64)             {}

// benchPlan is a reliable spout "src" feeding bolt "dst" (4 tasks) with g.
func benchPlan(b *testing.B, g dsl.Grouping) *routing.Plan {
	return compile(b, nil, func(d *dsl.Builder) {
		d.Anchored(d.Spout("src", reliable[word]()), d.Bolt("dst", sink[word](), dsl.Parallelism(4)), g)
	})
}

// benchEmit measures one spout emit per iteration, untracked (unreliable flow)
// and tracked (a tree per tuple, an edge per delivery), and the same from
// parallel spout tasks, each with its own router as in the runtime.
func benchEmit(b *testing.B, g dsl.Grouping) {
	p := benchPlan(b, g)
	task := taskOf(p, tasksOf(p, "src")[0])
	words := []any{word{"apple"}, word{"banana"}, word{"cherry"}, word{"date"}} // boxed once
	for _, tracked := range []bool{false, true} {
		name := "untracked"
		if tracked {
			name = "tracked"
		}
		b.Run(name, func(b *testing.B) {
			s := &discardSink{}
			r := p.NewRouter(task, s, ids.Seeded(1))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.EmitSpout(words[i&3], tracked, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.delivered)/float64(b.N), "deliveries/op")
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := p.NewRouter(task, &discardSink{}, ids.Seeded(1))
				for i := 0; pb.Next(); i++ {
					if _, err := r.EmitSpout(words[i&3], tracked, 0); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkEmitShuffle(b *testing.B) { benchEmit(b, dsl.Shuffle[word]()) }

func BenchmarkEmitFields(b *testing.B) {
	benchEmit(b, dsl.Fields(func(w word) string { return w.W }, "W"))
}

func BenchmarkEmitAll(b *testing.B) { benchEmit(b, dsl.All[word]()) }
