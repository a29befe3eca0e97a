package actors

import (
	"sync/atomic"
	"testing"
	"time"

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

// An acker batch marks AckFlush for the trees it acks (the tree's last Ok is
// the hop), not for those it tracks or anchors.
func TestAckFlushMarksOnlyTheTreesAnOkLeavesFor(t *testing.T) {
	const root = uint64(1) << 8 // sampled
	for name, c := range map[string]struct {
		ops  []ackerOp
		want int
	}{
		"Track and Anchor": {[]ackerOp{{Kind: opTrack, Root: root, Spout: 1}, {Kind: opAnchor, Root: root, Edge: 7}}, 0},
		"Ok":               {[]ackerOp{{Kind: opOk, Root: root, Edge: 9}}, 1},
	} {
		o, inc := outboxHarness(t, 64)
		p := hops.NewProbe()
		inc.hops = p
		p.Mark(root, hops.Emit)
		for _, op := range c.ops {
			o.ack(op)
		}
		o.flushAcks()
		p.Mark(root, hops.Settled)
		flushes := 0
		for _, s := range settledSpans(p.Spans()) {
			if s.Hop == hops.AckFlush {
				flushes = len(s.Samples)
			}
		}
		if flushes != c.want {
			t.Errorf("%s: AckFlush timed for %d trees, want %d", name, flushes, c.want)
		}
	}
}

// settledSpans returns the spans of a probe whose one tree settled.
func settledSpans(spans []hops.Span, total []time.Duration) []hops.Span {
	if len(total) != 1 {
		panic("the tree did not settle")
	}
	return spans
}
