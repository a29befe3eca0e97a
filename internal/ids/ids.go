// Package ids generates the tuple and tree ids of a task: never zero, since a
// zero would vanish from an XOR sum. Specs use the reproducible sources.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
)

// Source generates tuple and tree ids for one task. Ids are never zero.
// Implementations are used by one goroutine.
type Source interface {
	Next() uint64
}

// Func adapts a function to a Source; it skips zeros.
type Func func() uint64

// Next returns the function's next non-zero value.
func (f Func) Next() uint64 {
	for {
		if v := f(); v != 0 {
			return v
		}
	}
}

// Random returns a task's own pseudo-random id source, seeded from the
// operating system's random source.
func Random() Source {
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	return &randomIDs{r: mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))}
}

// Seeded returns a reproducible id source.
func Seeded(seed uint64) Source {
	return &randomIDs{r: mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)}
}

// Roots is a Source that numbers tree roots apart from its other ids. The
// runtime's own source does: a root needs only to differ from the other open
// trees' roots, while an edge id must be random for the XOR of a tree's edges
// to reach zero only when every edge was acked. Consecutive roots sit in
// consecutive slots of the tables that hold open trees (internal/idtable), so
// a tree opened, looked up and closed touches memory in the order the trees
// came, where random roots cost a cache miss each in a table of a second's
// trees. A Source without it (a spec's reproducible one, WithIDs) gives roots
// from Next as it gives every id.
type Roots interface {
	// NextRoot returns the next tree root, never zero.
	NextRoot() uint64
}

type randomIDs struct {
	r    *mrand.PCG
	root uint64 // the last root, 0 before the first; the first is random
}

// NextRoot returns roots in sequence from a random start. Two tasks' roots
// meet only if one task's sequence runs into the other's: from random starts
// that takes 2^63 roots on average, and fewer than 2^40 (a day at 10 M/s)
// with a probability of 2^-23 for a pair of tasks.
func (g *randomIDs) NextRoot() uint64 {
	if g.root == 0 {
		g.root = g.Next()
		return g.root
	}
	if g.root++; g.root == 0 {
		g.root = 1
	}
	return g.root
}

func (g *randomIDs) Next() uint64 {
	for {
		if v := g.r.Uint64(); v != 0 {
			return v
		}
	}
}

// Sequence returns ids start, start+step, ... (skipping zero), for specs that
// replay the reference tables with known ids.
func Sequence(start, step uint64) Source { return &seqIDs{next: start, step: step} }

type seqIDs struct{ next, step uint64 }

func (s *seqIDs) Next() uint64 {
	if s.next == 0 {
		s.next += s.step
	}
	v := s.next
	s.next += s.step
	return v
}
