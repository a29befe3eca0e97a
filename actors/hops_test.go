package actors

import (
	"sync/atomic"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/internal/ids"
)

// The bench's hop probe: every call site marks its hop when the incarnation
// has a probe, and none touches it when it has none (the trees below are all
// sampled, so a site that called a missing probe would fail its task).
func TestTheHopProbeSeesEveryHopOfASampledTree(t *testing.T) {
	const n = 20
	run := func(p *hops.Probe) {
		acked := newCountdown(n)
		b := dsl.New("hops", dsl.Conf{dsl.AckerTasks: 1})
		spout := b.Spout("numbers", numbers(n, acked, func(id int) { t.Errorf("message %d nacked", id) }))
		relay := b.Bolt("relay", dsl.AutoAck(func(in num, out dsl.Emitter) error {
			out.Emit(in)
			return nil
		}))
		b.Anchored(spout, relay, dsl.Shuffle[num]())
		b.Anchored(relay, b.Bolt("sink", dsl.AutoAck(func(num, dsl.Emitter) error { return nil })), dsl.Shuffle[num]())
		top := newHost(t).start(t, build(t, b), Config{IDs: func(task int) ids.Source {
			var seq atomic.Uint64 // every id sampled (low 8 bits zero), and unique across tasks
			return ids.Func(func() uint64 { return uint64(task)<<40 | seq.Add(1)<<8 })
		}, Hops: p})
		wait(t, acked.done, "every message acked")
		stop(t, top)
	}

	run(nil) // no probe

	p := hops.NewProbe()
	run(p)
	spans, total := p.Spans()
	if len(total) != n {
		t.Errorf("%d trees timed from emit to outcome, want %d", len(total), n)
	}
	seen := map[hops.Hop]int{}
	for _, s := range spans {
		seen[s.Hop] = len(s.Samples)
	}
	for h := hops.SpoutFlush; h <= hops.Settled; h++ {
		if seen[h] != n {
			t.Errorf("hop %q timed for %d trees, want %d", h, seen[h], n)
		}
	}
}
