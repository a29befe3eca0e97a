package actors

import (
	"github.com/goshelter/goshelter/internal/grouping"
	"github.com/goshelter/goshelter/routing"
)

// ackerOf returns the acker task that tracks the tree with this root: the
// root's index among the plan's ackers. (It was routing.Plan.AckerOf; only
// the runtime needs it.)
func ackerOf(p *routing.Plan, root uint64) int {
	return p.Ackers[grouping.Index(root, len(p.Ackers))]
}
