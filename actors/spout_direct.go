package actors

import (
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/trace"
)

var _ component.DirectSpoutEmitter = (*spoutTask)(nil)

// EmitDirect implements component.DirectSpoutEmitter: Emit to one task of a
// direct subscriber. The bookkeeping is Emit's.
func (s *spoutTask) EmitDirect(task int, tuple any, tracked bool) uint64 {
	s.out.hold()
	root, err := s.router.EmitSpoutDirect(task, tuple, tracked)
	s.out.release()
	if err != nil {
		panic(err) // a spout that cannot emit is broken: fail the task
	}
	if s.trace.on() {
		s.trace.record(trace.Event{Out: true, Kind: "Emit", Value: tuple, Anchors: rootAnchor(root), Direct: task})
	}
	s.stats.Emitted.Add(1)
	if root != 0 {
		s.pending++
		s.stats.Pending.Store(int64(s.pending))
		s.inc.gauge.add(1)
		s.lat.emitted(root)
	}
	return root
}
