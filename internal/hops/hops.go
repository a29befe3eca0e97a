// Package hops samples where a tracked tuple's complete latency goes, hop by
// hop: spout emit, the spout's batch flush, the bolt taking the batch off its
// mailbox, the bolt executing (and acking) it, the ack batch's flush, the
// acker completing the tree, the acker's outcome flush and the spout settling
// it. It exists for the benchmark program (bench/), which gives a Probe to one
// running topology through the context of its Run (NewContext): the tasks of
// that topology report to it, and it records one tree in 256 only (chosen by
// its random root id, so every task agrees without passing a flag along).
//
// Without a Probe each call site costs a nil check of a field the task holds.
package hops

import (
	"context"
	"sync"
	"time"
)

// Hop is a point a sampled tree passes.
type Hop int

const (
	Emit         Hop = iota // the spout emitted the tuple
	SpoutFlush              // the spout's data batch holding it left
	Taken                   // the first bolt took its batch off the mailbox
	Executed                // the first bolt acked it
	BoltFlush               // the first bolt's batch with its child left (two hops)
	Taken2                  // the second bolt took that batch
	Executed2               // the second bolt acked the child
	AckFlush                // the acker batch with the tree's last Ok left
	Completed               // the acker saw the tree complete
	OutcomeFlush            // the acker's outcome batch to the spout left
	Settled                 // the spout settled the tree (Ack called)
	count
)

var names = [count]string{"emit", "spout flush", "bolt taken", "bolt executed", "bolt flush",
	"bolt2 taken", "bolt2 executed", "ack flush", "acker complete", "outcome flush", "spout outcome"}

func (h Hop) String() string { return names[h] }

// sampleMask picks the sampled trees: roots whose low 8 bits are zero.
const sampleMask = 255

// Sampled reports whether the tree root is one the probe records.
func Sampled(root uint64) bool { return root&sampleMask == 0 && root != 0 }

// key is the context key of a Probe.
type key struct{}

// NewContext returns ctx carrying p. Given to supervision.Run, it makes p the
// probe of that running topology, every incarnation of it, and of no other:
// the bench's way in, with no option on the host's public surface.
func NewContext(ctx context.Context, p *Probe) context.Context {
	return context.WithValue(ctx, key{}, p)
}

// FromContext returns the Probe ctx carries, or nil.
func FromContext(ctx context.Context) *Probe {
	p, _ := ctx.Value(key{}).(*Probe)
	return p
}

// Probe collects the hop times of sampled trees. Its methods are safe for
// concurrent use.
type Probe struct {
	mu    sync.Mutex // mu guards open and spans
	open  map[uint64]*[count]int64
	spans [count][]time.Duration // spans[h]: from the previous hop seen to h
	total []time.Duration        // emit to settled
	base  time.Time
}

// NewProbe returns an empty probe.
func NewProbe() *Probe {
	return &Probe{open: map[uint64]*[count]int64{}, base: time.Now()}
}

func (p *Probe) now() int64 { return int64(time.Since(p.base)) + 1 }

// Mark records that the sampled tree root reached hop h now. Taken, Executed
// and flushes seen twice move to the second bolt's hops; AckFlush keeps the
// last time (the tree's last Ok).
func (p *Probe) Mark(root uint64, h Hop) {
	if !Sampled(root) {
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.open[root]
	if t == nil {
		if h != Emit {
			return // its emit was not seen (a tree of an earlier run)
		}
		t = new([count]int64)
		p.open[root] = t
	}
	switch {
	case h == Taken && t[Taken] != 0:
		h = Taken2
	case h == Executed && t[Executed] != 0:
		h = Executed2
	case h == SpoutFlush && t[SpoutFlush] != 0:
		h = BoltFlush
	case h == AckFlush:
	case t[h] != 0:
		return
	}
	t[h] = now
	if h == Settled {
		p.settle(t)
		delete(p.open, root)
	}
}

// settle adds a finished tree's spans.
func (p *Probe) settle(t *[count]int64) {
	prev := t[Emit]
	for h := Emit + 1; h < count; h++ {
		if t[h] == 0 {
			continue
		}
		p.spans[h] = append(p.spans[h], time.Duration(t[h]-prev))
		prev = t[h]
	}
	p.total = append(p.total, time.Duration(t[Settled]-t[Emit]))
}

// Reset forgets every span recorded so far (trees in flight stay open).
func (p *Probe) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for h := range p.spans {
		p.spans[h] = p.spans[h][:0]
	}
	p.total = p.total[:0]
}

// Span is one hop's share of the sampled trees' complete latency.
type Span struct {
	Hop     Hop // the hop reached; the span starts at the previous hop seen
	Samples []time.Duration
}

// Spans returns a copy of the spans recorded, in hop order, the hops no tree
// reached left out, and the emit-to-settled totals.
func (p *Probe) Spans() ([]Span, []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Span
	for h := Emit + 1; h < count; h++ {
		if len(p.spans[h]) > 0 {
			out = append(out, Span{Hop: h, Samples: append([]time.Duration(nil), p.spans[h]...)})
		}
	}
	return out, append([]time.Duration(nil), p.total...)
}
