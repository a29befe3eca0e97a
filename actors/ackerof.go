package actors

import "github.com/goshelter/goshelter/routing"

// ackerOf returns the acker task that tracks the tree with this root: the
// root's residue among the plan's ackers. (It was routing.Plan.AckerOf; only
// the runtime needs it.) For a power of two ackers (one, by default) the
// residue is a mask: a 64-bit division per acker operation was a tenth of a
// relaying bolt's time.
func ackerOf(p *routing.Plan, root uint64) int {
	n := uint64(len(p.Ackers))
	if n&(n-1) == 0 {
		return p.Ackers[root&(n-1)]
	}
	return p.Ackers[root%n]
}
