package actors

import (
	"github.com/goshelter/goshelter/internal/grouping"
	"github.com/goshelter/goshelter/routing"
)

// ackerOf returns the acker task that tracks the tree with this root. (It was
// routing.Plan.AckerOf; only the runtime needs it.)
func ackerOf(p *routing.Plan, root uint64) int {
	return p.Ackers[ackerIndex(root, len(p.Ackers))]
}

// ackerIndex is the index among n ackers of the acker of root. Roots come in
// sequence (ids.Roots), so the root is mixed first (Fibonacci hashing): its
// residue alone would deal consecutive roots to the ackers in turn, each
// acker's roots n apart, and a sequence with a stride of n (a spec's ids)
// to one acker.
func ackerIndex(root uint64, n int) int {
	return grouping.Index((root*0x9e3779b97f4a7c15)>>32, n)
}
