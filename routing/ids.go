package routing

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
)

// IDs generates tuple and tree ids for one task. Ids are never zero: zero would
// vanish from an XOR sum. Implementations are used by one goroutine.
type IDs interface {
	Next() uint64
}

// RandomIDs returns a task's own pseudo-random id source, seeded from the
// operating system's random source.
func RandomIDs() IDs {
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	return &randomIDs{r: mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))}
}

// SeededIDs returns a reproducible id source.
func SeededIDs(seed uint64) IDs {
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

// SequenceIDs returns ids start, start+step, ... (skipping zero), for specs that
// replay the reference tables with known ids.
func SequenceIDs(start, step uint64) IDs { return &seqIDs{next: start, step: step} }

type seqIDs struct{ next, step uint64 }

func (s *seqIDs) Next() uint64 {
	if s.next == 0 {
		s.next += s.step
	}
	v := s.next
	s.next += s.step
	return v
}
