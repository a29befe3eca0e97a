package dsl

import "fmt"

// HasState reports whether t has a [Stateful] bolt, and so takes
// checkpoints.
func (t *Topology) HasState() bool {
	for _, c := range t.Components {
		if c.Stateful() {
			return true
		}
	}
	return false
}

// Stateful reports whether c is a [Stateful] bolt, whose state checkpoints
// keep.
func (c *Component) Stateful() bool { return c.Bolt != nil && c.Bolt.Kind == statefulKind }

// state checks what checkpoints need: held acks must commit well within the
// message timeout, and no component upstream of a stateful bolt may hold
// inputs past a checkpoint's barrier (a window) or answer for them
// out of the runtime's sight (a shell child), or the cut would miss them.
func (v *validator) state() {
	if !v.t.HasState() {
		return
	}
	s := v.t.Settings
	if 2*s.CheckpointInterval > s.MessageTimeout {
		v.problem("conf %q is %v but %q is %v: the inputs of stateful bolts are acked when a checkpoint commits, so the interval must be at most half the message timeout",
			CheckpointInterval, s.CheckpointInterval, MessageTimeout, s.MessageTimeout)
	}
	for _, c := range v.t.Components {
		if c.Settings.CheckpointInterval != s.CheckpointInterval {
			v.problem("component %q: conf %q is the topology's: checkpoints cut the whole topology at once", c.ID, CheckpointInterval)
		}
		if c.Spout != nil {
			v.positionHooks(c)
			v.unpositioned(c)
			v.pendingPerCheckpoint(c)
		}
	}
	for _, c := range v.t.Components {
		if !c.Stateful() {
			continue
		}
		v.stateTypes(c)
		for _, up := range v.upstream(c) {
			switch up.kindName() {
			case windowKind, "shell":
				if up.Bolt == nil {
					continue // a shell spout's emits are its task's: the cut sees them
				}
				v.problem("stateful bolt %q is fed by %s %q: checkpoints do not cover the inputs a %s holds, so its state would not be exactly-once",
					c.ID, up.kindName(), up.ID, up.kindName())
			}
		}
	}
}

// slowestStatefulRate is the rate under which Build warns that max spout
// pending throttles a topology with state (messages per second per task).
const slowestStatefulRate = 10000

// pendingPerCheckpoint warns of a spout that max spout pending will
// throttle: acks wait for the commit that covers them, so a task completes at
// most max-pending messages per checkpoint interval.
func (v *validator) pendingPerCheckpoint(c *Component) {
	s := c.Settings
	rate := float64(s.MaxSpoutPending) / s.CheckpointInterval.Seconds()
	if rate >= slowestStatefulRate {
		return
	}
	v.t.Warnings = append(v.t.Warnings, fmt.Sprintf("spout %q: the topology has stateful bolts, whose inputs are acked when a checkpoint commits, so each task completes at most %q (%d) messages per %q (%v): %.0f messages/s; raise %q to what a task emits in an interval",
		c.ID, MaxSpoutPending, s.MaxSpoutPending, CheckpointInterval, s.CheckpointInterval, rate, MaxSpoutPending))
}

// unpositioned reports a reliable spout whose source has no positions and
// that was not taken out of the checkpoints with [OutsideCheckpoint]: a
// crash after a commit would replay messages the committed state holds. A
// source whose constructor is declared to return an interface is checked
// when its task starts.
func (v *validator) unpositioned(c *Component) {
	h := c.Spout.hooks
	if !c.Spout.Reliable || c.OutsideCheckpoint || h.dynamic || (h.hasPosition && h.hasRewind) {
		return
	}
	v.problem("spout %q: the topology has state but the spout's %s has no positions (methods Position() []byte and Rewind([]byte) error): after a crash its messages since the last checkpoint would be applied twice; give the source positions, or accept at-least-once for it with dsl.OutsideCheckpoint()",
		c.ID, c.kindName())
}

// positionHooks reports a source with one of Position and Rewind: the
// runtime uses them only as a pair.
func (v *validator) positionHooks(c *Component) {
	if h := c.Spout.hooks; h.hasPosition != h.hasRewind {
		v.problem("spout %q: its source has only one of Position() []byte and Rewind([]byte) error; a checkpoint uses them as a pair", c.ID)
	}
}

// upstream returns every component from which tuples can reach c.
func (v *validator) upstream(c *Component) []*Component {
	seen := map[*Component]bool{}
	var out []*Component
	var visit func(*Component)
	visit = func(to *Component) {
		for _, e := range v.t.Edges {
			if e.To == to && !seen[e.From] {
				seen[e.From] = true
				out = append(out, e.From)
				visit(e.From)
			}
		}
	}
	visit(c)
	return out
}

// kindName names a component's implementation for messages.
func (c *Component) kindName() string {
	switch {
	case c.Bolt != nil:
		return c.Bolt.Kind
	case c.Spout != nil:
		return c.Spout.Kind
	}
	return fmt.Sprintf("component %q", c.ID)
}
