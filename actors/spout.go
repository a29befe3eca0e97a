package actors

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/routing"
	"github.com/goshelter/goshelter/state"
	"go.uber.org/zap"
)

// spoutTask drives a spout: bursts of Next while active and below max pending,
// back-off by the spout wait when the source is empty, acks and nacks from ackers.
// All its state is touched only in Receive.
type spoutTask struct {
	inc     *incarnation
	task    routing.Task
	box     *mailbox
	impl    dsl.SpoutTask
	router  *routing.Router
	out     *outbox
	trace   tracer
	log     *zap.Logger
	stats   *taskStats
	active  bool
	pending int
	max     int
	queued  bool        // a next message is on its way
	wait    clock.Timer // armed while backing off
	lat     completeSampler
	cancel  func() // ends the component's Context
	// epoch is the flush beat last seen by a burst, nexts the Next calls since it
	// moved, and slow whether the source made at most slowNexts calls in the
	// last beat: then batching cannot fill a batch anyway, and each Next's
	// tuples are flushed at once instead of waiting a beat. A source counts
	// as slow until a beat shows otherwise: its first Next may be the one that
	// waits for data, and the tuples before it must not wait with it.
	epoch uint64
	nexts int
	slow  bool
	// emitted counts emits since the last publish: one plain add per tuple,
	// one atomic add to the stats per message (publish), not per tuple.
	emitted int64
	// to lists the tasks the spout sends to, which get its checkpoints'
	// barriers (topologies with state).
	to []int
}

// slowNexts is the most Next calls per flush beat (1 ms by default) at which a
// source counts as slow: flushing after each of them costs at most that many
// mailbox messages per beat, while batching them would delay each tuple by up
// to a beat plus the (blocking) Next calls after it.
const slowNexts = 8

func (s *spoutTask) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.start()
	case next:
		s.queued = false
		s.turn(burstsPerTurn)
	case *feedback:
		s.feedback(m)
	case tick:
		s.trace.in("Tick")
		s.resume()
	case invoke:
		m.fn(nil)
	case failTask:
		panic(taskFailure(m))
	case startCheckpoint:
		s.checkpoint(m)
	case idle:
		s.out.flush()
	case activate:
		s.trace.in("Activate")
		s.active = true
		if a, ok := s.impl.(component.Activator); ok {
			a.Activate()
		}
		s.resume()
		close(m.done)
	case deactivate:
		s.trace.in("Deactivate")
		s.active = false
		s.stopWait()
		if a, ok := s.impl.(component.Activator); ok {
			a.Deactivate()
		}
		s.out.flush()
		s.cancel()
		close(m.done)
	case *actor.Stopping:
		s.trace.in("Stop")
		if s.cancel != nil {
			s.cancel()
		}
		s.stopWait()
		s.abandon()
		closeImpl(s.impl, s.log)
	}
	s.publish()
}

// publish adds the emits counted since the last message to the task's stats.
// Every emit happens inside Receive, so readers lag by one message at most.
func (s *spoutTask) publish() {
	if s.emitted != 0 {
		s.stats.Emitted.Add(s.emitted)
		s.emitted = 0
	}
	if p := int64(s.pending); s.stats.Pending.Load() != p {
		s.stats.Pending.Store(p)
	}
}

// abandon nacks every open tree to the source: the incarnation ends and their
// outcome will never arrive. It runs even after the task failed, so a panic
// of the source is only logged (callStopping). The task's Context has ended
// by then, which tells a source these Nacks from those of messages that
// failed or timed out (a source counting a poison message's failures skips
// them: under state the rewind replays these).
func (s *spoutTask) abandon() {
	if s.impl == nil || s.pending == 0 {
		return
	}
	s.out.countTrees() // a failed burst may have left some uncounted
	s.inc.gauge.add(-int64(s.pending))
	s.stats.Failed.Add(int64(s.pending))
	s.pending = 0
	s.stats.Pending.Store(0)
	s.lat.reset()
	callStopping(s.log, "spout panicked while nacking its pending messages", s.impl.Abandon)
}

func (s *spoutTask) start() {
	info, cancel := s.inc.taskInfo(s.task)
	s.cancel = cancel
	s.impl = newSpoutTask(s.task.Component, info)
	s.router = s.inc.plan.NewRouter(s.task, s.out, s.inc.ids(s.task.ID))
	s.max = info.Settings.MaxSpoutPending
	// Without a flush beat nothing would ever tell a fast source from a slow
	// one: batches then flush when full or idle only, as configured.
	s.slow = s.inc.plan.Topology.Settings.BatchFlushInterval > 0
	if o, ok := s.impl.(component.Opener); ok {
		o.Open(s)
	}
	if c := s.inc.ckpt; c != nil {
		s.to = receivers(s.inc.plan.Topology, s.task.Component)
		if p := s.positioned(); p != nil {
			if err := c.rewindSpout(info.Context(), s, p); err != nil {
				panic(taskFailure{err})
			}
		} else if comp := s.task.Component; comp.Spout.Reliable && !comp.OutsideCheckpoint {
			// Build refuses this when it can see the source's type; a
			// constructor declared to return an interface hides it until now.
			panic(taskFailure{fmt.Errorf("spout %q: %w", comp.ID, errUnpositioned)})
		}
	}
}

// errUnpositioned fails a reliable spout without positions in a topology
// with state, unless it was taken out of the checkpoints (the same rule as
// Build's, for sources whose type Build could not see).
var errUnpositioned = errors.New("the topology has state but the spout's source has no positions (methods Position() []byte and Rewind([]byte) error): after a crash its messages since the last checkpoint would be applied twice; give the source positions, or accept at-least-once for it with dsl.OutsideCheckpoint()")

// positioned returns the task's source positions when the checkpoints keep
// them: a source with Position and Rewind, not taken out with
// dsl.OutsideCheckpoint.
func (s *spoutTask) positioned() component.PositionedSpout {
	if s.task.Component.OutsideCheckpoint {
		return nil
	}
	if p, ok := s.impl.(component.PositionedSpout); ok && p.Positioned() {
		return p
	}
	return nil
}

// checkpoint takes the spout's part in a checkpoint: the cut falls between
// two Next calls, after the tuples they emitted.
func (s *spoutTask) checkpoint(m startCheckpoint) {
	s.out.flush()
	var changes []state.Change
	if p := s.positioned(); p != nil {
		if pos, ok := p.SourcePosition(); ok {
			changes = []state.Change{{Space: taskSpace("spout", s.task.Component, s.task.Index),
				Key: positionKey, Value: append([]byte{}, pos...)}}
		}
	}
	for _, to := range s.to {
		s.out.send(to, &cutBarrier{id: m.id, from: s.task.ID})
	}
	size := 0
	if len(changes) > 0 {
		size = len(changes[0].Value)
	}
	s.inc.ckpt.report(ckReport{id: m.id, task: s.task.ID, changes: changes, size: size})
}

// resume queues a burst unless one is queued, the spout is backing off, or it
// may not emit.
func (s *spoutTask) resume() {
	if s.queued || s.wait != nil || !s.active || s.pending >= s.max {
		return
	}
	s.queued = true
	s.box.PostUserMessage(next{})
}

// turn runs bursts for one next message: up to bursts of them while nothing
// else waits in the mailbox, then queues the next turn, unless the source may
// not emit right now (an outcome or the back-off resumes it).
//
// A burst calls Next up to a batch of times and flushes. It also ends as soon
// as the flush beat moved: a source's tuples then wait about one flush interval
// plus the Next that produced them, not a whole batch of Next calls. A slow
// source (at most slowNexts calls in the last beat) ends its burst after every
// Next, so its tuples leave as soon as they are emitted: a Next that blocks
// between tuples would otherwise hold the previous one for its whole wait.
//
// Several bursts share a turn because a turn costs a message through the
// spout's own control lane, about ten locked instructions, and on two cores
// each of those waits for the batch stores the other core must hand over
// first.
func (s *spoutTask) turn(bursts int) {
	s.wait = nil
	for i := 1; ; i++ {
		if !s.calls() {
			return
		}
		if i >= bursts || s.box.waiting() {
			break
		}
	}
	s.resume()
}

// burstsPerTurn bounds the bursts of one turn: a spout that always has more
// still yields to its mailbox, and through it to the scheduler.
const burstsPerTurn = 16

// calls runs one burst's Next calls and flushes what they emitted. It reports
// whether the source may have more right now: the burst ended on its length
// or on the flush beat, not because the spout may not emit (an outcome
// resumes it) nor because Next had nothing (it backs off, unless a back-off
// is armed already).
func (s *spoutTask) calls() bool {
	for i := 0; i < s.out.batchSize; i++ {
		if !s.active || s.pending >= s.max {
			s.out.flush()
			return false // an ack or nack resumes
		}
		s.trace.in("Next")
		if !s.impl.Next(s) {
			// The wait is armed before the flush, so whoever sees the tuples
			// arrive (a test about to move its clock) knows it is armed.
			if s.wait == nil {
				s.backOff()
			}
			s.out.flush()
			return false
		}
		s.nexts++
		if e := s.inc.flushEpoch.Load(); e != s.epoch {
			s.slow = s.nexts <= slowNexts
			s.epoch, s.nexts = e, 0
			break
		}
		if s.slow {
			break
		}
	}
	s.out.flush()
	return true
}

func (s *spoutTask) backOff() {
	d := s.task.Component.Settings.SpoutWait
	if d <= 0 {
		s.resume()
		return
	}
	box := s.box
	s.wait = s.inc.clock.AfterFunc(d, func() { box.PostUserMessage(next{}) })
	s.queued = true
}

func (s *spoutTask) stopWait() {
	if s.wait != nil {
		s.wait.Stop()
		s.wait = nil
		s.queued = false
	}
}

var _ component.DirectSpoutEmitter = (*spoutTask)(nil)

// Emit implements dsl.SpoutEmitter.
func (s *spoutTask) Emit(tuple any, tracked bool) uint64 { return s.emit(tuple, tracked, 0) }

// EmitDirect implements component.DirectSpoutEmitter: Emit to one task of a
// direct subscriber.
func (s *spoutTask) EmitDirect(task int, tuple any, tracked bool) uint64 {
	return s.emit(tuple, tracked, task)
}

// emit routes tuple (to task direct, unless 0). It never panics: a tuple that
// cannot be routed fails its message (the router has failed its tree) and is
// logged, and the spout goes on.
func (s *spoutTask) emit(tuple any, tracked bool, direct int) uint64 {
	if !tracked && direct == 0 {
		// Most untracked emits: no tree, so nothing to hold the batches for.
		if task, stream, ok := s.router.Unicast(tuple); ok {
			s.out.deliverValue(task, tuple, stream)
			if s.trace.on() {
				s.trace.emit(tuple, nil, 0)
			}
			s.emitted++
			return 0
		}
	}
	s.out.hold()
	root, err := s.router.EmitSpout(tuple, tracked, direct)
	if root != 0 {
		s.out.openTree() // before the release may flush its Track and tuples
	}
	if p := s.inc.hops; p != nil {
		p.Mark(root, hops.Emit)
	}
	s.out.release()
	if err != nil {
		s.emitFailed(err)
	}
	if s.trace.on() {
		s.trace.emit(tuple, rootAnchor(root), direct)
	}
	s.emitted++
	if root != 0 {
		s.pending++
		s.lat.emitted(root)
	}
	return root
}

// emitFailed is out of line, like the tracer's helpers.
//
//go:noinline
func (s *spoutTask) emitFailed(err error) {
	s.log.Error("spout could not emit; the message fails", zap.Error(err))
}

// EmitTasks implements component.SpoutTaskEmitter.
func (s *spoutTask) EmitTasks(tuple any, tracked bool, tasks []int) (root uint64, out []int) {
	out = s.out.record(tasks, func() { root = s.Emit(tuple, tracked) })
	return root, out
}

func rootAnchor(root uint64) []dsl.TupleID {
	if root == 0 {
		return nil
	}
	return []dsl.TupleID{{Root: root}}
}

func (s *spoutTask) feedback(f *feedback) {
	for _, root := range f.acked {
		s.outcome(root, true)
	}
	for _, root := range f.nacked {
		s.outcome(root, false)
	}
	// One update for the whole batch; the drain gauge only ever drops late.
	settled := len(f.acked) + len(f.nacked)
	s.pending -= settled
	s.inc.gauge.add(-int64(settled))
	s.stats.Expired.Add(f.expired)
	nacked := len(f.nacked)
	putFeedback(f)
	if nacked > 0 && s.inc.ckpt != nil {
		// A failed or timed-out tree in a topology with state: its replay
		// would count twice in the states that saw it, so the topology rolls
		// back to the last checkpoint and replays from there.
		panic(taskFailure{fmt.Errorf("spout %q task %d: %d messages failed or timed out in a topology with state: rolling back to the last checkpoint",
			s.task.Component.ID, s.task.ID, nacked)})
	}
	if s.wait != nil && settled > 0 {
		// Backing off: outcomes came back, so the source gets one burst now,
		// as a hand-written loop would wake on them, instead of sleeping out
		// the whole spout wait and then emitting everything at once. The
		// armed wait stays armed (stopping it would join its goroutine) and
		// resumes the spout as before.
		s.calls()
		return
	}
	s.resume()
}

// outcome tells the spout whether the tree root was acked; feedback settles the
// pending count for the whole batch.
func (s *spoutTask) outcome(root uint64, acked bool) {
	if s.trace.on() {
		kind := "Nack"
		if acked {
			kind = "Ack"
		}
		s.trace.outcome(kind, root)
	}
	s.lat.settle(root, acked, s.stats)
	if p := s.inc.hops; p != nil && acked {
		p.Mark(root, hops.Settled)
	}
	if acked {
		s.stats.Acked.Add(1)
		s.impl.Ack(root)
	} else {
		s.stats.Failed.Add(1)
		s.impl.Nack(root)
	}
}
