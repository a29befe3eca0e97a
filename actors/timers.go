package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/internal/clock"
)

// systemTask owns the timers: acker rotation (also a nudge to spouts), tick
// tuples to bolts at each bolt's frequency, and the flush beat that bounds how
// long a tuple waits in a batch (topology.batch.flush.interval.millis). The
// flush beat runs on the wall clock even when the others run on a test's
// manual clock: it bounds a tuple's latency, it does not time anything a test
// would move the clock for, and a test that never moves the clock must still
// see a slow source's tuples leave.
type systemTask struct {
	inc    *incarnation
	trace  tracer
	timers []clock.Timer
}

func (s *systemTask) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case activate:
		s.trace.in("Activate")
		s.startTimers()
		close(m.done)
	case deactivate:
		s.trace.in("Deactivate")
		s.stopTimers()
		close(m.done)
	case failTask: // the checkpointer's store failed: restart from the last commit
		panic(taskFailure(m))
	case *actor.Stopping:
		s.trace.in("Stop")
		s.stopTimers()
	}
}

func (s *systemTask) startTimers() {
	p := s.inc.plan
	var rotate []*mailbox
	for _, t := range p.Tasks {
		if t.Component == nil || t.Component.Spout != nil {
			rotate = append(rotate, s.inc.boxes[t.ID])
		}
	}
	// Half the message timeout: with the acker's three buckets a tree expires
	// between one and one and a half timeouts after it started (package acker).
	if period := p.Topology.Settings.MessageTimeout / 2; period > 0 {
		s.timers = append(s.timers, s.inc.clock.Every(period, postAll(rotate)))
	}
	if flush := p.Topology.Settings.BatchFlushInterval; flush > 0 {
		epoch := &s.inc.flushEpoch
		s.timers = append(s.timers, s.inc.beatClock().Every(flush, func(int) { epoch.Add(1) }))
	}
	for _, c := range p.Topology.Components {
		freq := c.Settings.TickFrequency
		if c.Bolt == nil || freq <= 0 {
			continue
		}
		var boxes []*mailbox
		for _, id := range c.Tasks {
			boxes = append(boxes, s.inc.boxes[id])
		}
		s.timers = append(s.timers, s.inc.clock.Every(freq, postAll(boxes)))
	}
}

func postAll(boxes []*mailbox) func(beats int) {
	return func(beats int) {
		for _, b := range boxes {
			b.postTick(beats)
		}
	}
}

func (s *systemTask) stopTimers() {
	for _, t := range s.timers {
		t.Stop()
	}
	s.timers = nil
}
