package dsl

import "fmt"

// tracking records which components' emits can be on a tuple tree, and why,
// by the anchoring rule ([Edge].Anchored, which the runtime applies too). A reliable
// spout's emits are tracked on every edge out of it. A bolt's emits, made
// while it processes an input, join the input's trees when the edge the input
// came in on is anchored; so a bolt's emits can be tracked when one of its
// anchored input edges carries tracked tuples. Every bolt but a Terminator
// can anchor (an auto-ack bolt's Emit, a manual bolt's EmitAnchored, a
// window's emits, a shell bolt's anchors), so every other bolt counts.
type tracking map[*Component]string // component -> why its emits can be tracked

// trackingOf works out t's tracking, transitively: a bolt counts once an
// anchored input edge of it comes from a component that counts. It reaches a
// fixed point whatever the edges (a cycle is reported elsewhere).
func trackingOf(t *Topology) tracking {
	tr := tracking{}
	for _, c := range t.Components {
		if c.Spout != nil && c.Spout.Reliable {
			tr[c] = fmt.Sprintf("spout %q is reliable: its tuples are tracked on every edge", c.ID)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, e := range t.Edges {
			if _, done := tr[e.To]; done || !e.Anchored || e.To.Bolt.Kind == terminatorKind {
				continue
			}
			if _, in := tr[e.From]; in {
				tr[e.To] = fmt.Sprintf("bolt %q anchors its emits to the tracked tuples of its anchored input edge %q -> %q", e.To.ID, e.From.ID, e.To.ID)
				changed = true
			}
		}
	}
	return tr
}

// terminators rejects a Terminator on every edge whose tuples can be tracked:
// it fails every input, so every tree through it would fail, and a source
// that replays would replay its messages forever. Without ackers nothing is
// tracked.
func (v *validator) terminators() {
	if v.t.Settings.AckerTasks == 0 {
		return
	}
	tr := trackingOf(v.t)
	for _, e := range v.t.Edges {
		why, tracked := tr[e.From]
		if tracked && e.To.Bolt.Kind == terminatorKind {
			v.problem("edge %q -> %q: bolt %q is a Terminator, which fails every input, on an edge whose tuples are tracked (%s): every tree through it would fail (use AutoAck to ack, or put the Terminator where nothing is tracked)",
				e.From.ID, e.To.ID, e.To.ID, why)
		}
	}
}
