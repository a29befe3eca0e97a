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

type randomIDs struct{ r *mrand.PCG }

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
