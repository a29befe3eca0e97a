package actors

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// boltTask executes a bolt's inputs one at a time and is the bolt's Collector.
type boltTask struct {
	inc    *incarnation
	task   routing.Task
	impl   dsl.BoltTask
	auto   component.AutoAcker // impl, when the runtime may ack its inputs in place
	router *routing.Router
	// anchoring tells, by the edge an input came in on, whether emits
	// anchored to it join its trees (dsl.Edge.Anchored).
	anchoring component.Anchoring
	out       *outbox
	trace     tracer
	log       *zap.Logger
	stats     *taskStats
	in        dsl.Tuple      // the input being executed, loaded from its batch
	input     *dsl.Tuple     // &in while an input is executed, else nil
	sysBatch  tupleBatch     // carries tick and lifecycle tuples
	current   [1]dsl.TupleID // scratch: input's id as an anchor list, filled on emit
	consumed  int64          // executed since the last flush, for the drain gauge
	tick      dsl.Tick       // the value of this bolt's tick tuples
	lat       processSampler
	cancel    func() // ends the component's Context
	began     uint64 // the flush beat when the current batch of inputs began
	// emitted and acked count since the last publish: plain adds per tuple,
	// atomic adds to the stats once per message (publish).
	emitted, acked int64
	// ckpt is the task's part in checkpoints (topologies with state).
	ckpt *boltCheckpoint
}

func (b *boltTask) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *tupleBatch:
		if b.ckpt != nil {
			b.ckpt.data(b, m)
			break
		}
		b.consume(m)
	case *cutBarrier:
		b.ckpt.data(b, m)
	case committed:
		b.ckpt.commit(b, m.id)
	case passCut:
		b.ckpt.settledCut(b, m.id)
	case idle:
		b.flush()
	case invoke:
		m.fn(b)
	case failTask:
		panic(taskFailure(m))
	case tick:
		t := b.tick
		t.Time = b.inc.clock.Now()
		b.system(t)
	case *actor.Started:
		info, cancel := b.inc.taskInfo(b.task)
		b.cancel = cancel
		b.impl = newBoltTask(b.task.Component, info)
		b.auto, _ = b.impl.(component.AutoAcker)
		b.router = b.inc.plan.NewRouter(b.task, b.out, b.inc.ids(b.task.ID))
		b.anchoring = component.NewAnchoring(b.inc.plan.Topology, b.task.Component)
		b.tick = tickOf(info.Settings.TickFrequency)
		b.lat.timeout = info.Settings.MessageTimeout
		if c := b.inc.ckpt; c != nil {
			b.ckpt = newBoltCheckpoint(b, c, info)
		}
	case activate:
		b.trace.in("Activate")
		b.system(b.task.Component.Activation)
		close(m.done)
	case deactivate:
		b.trace.in("Deactivate")
		b.system(b.task.Component.Deactivation)
		b.out.flush()
		b.cancel()
		close(m.done)
	case *actor.Stopping:
		b.trace.in("Stop")
		if b.cancel != nil {
			b.cancel()
		}
		b.out.flushAcks() // fails of a dying shell child's inputs reach the ackers
		closeImpl(b.impl, b.log)
	}
	b.publish()
}

// consume executes a batch of inputs and recycles it.
func (b *boltTask) consume(m *tupleBatch) {
	b.executeAll(m)
	b.consumed += int64(m.len())
	putBatch(m)
}

// flush sends what the task holds and counts its executed inputs out of the
// drain gauge (after what they emitted is counted in).
func (b *boltTask) flush() {
	b.out.flush()
	b.inc.gauge.add(-b.consumed)
	b.consumed = 0
}

// publish adds the emits and acks counted since the last message to the task's
// stats. Emit and Ack run inside Receive only (a shell bolt's reader hands its
// calls over by invoke), so readers lag by one message at most.
func (b *boltTask) publish() {
	if b.emitted != 0 {
		b.stats.Emitted.Add(b.emitted)
		b.emitted = 0
	}
	if b.acked != 0 {
		b.stats.Acked.Add(b.acked)
		b.acked = 0
	}
}

// closeImpl calls a task's component.Closer, logging its error or panic.
func closeImpl(impl any, log *zap.Logger) {
	c, ok := impl.(component.Closer)
	if !ok {
		return
	}
	callStopping(log, "task panicked while closing", func() {
		if err := c.Close(); err != nil {
			log.Error("task did not close cleanly", zap.Error(err))
		}
	})
}

// callStopping runs user code that a task calls while it stops (a source's
// Nacks when the spout abandons its pending messages, a Closer's Close). It
// is the boundary for that code, as executeFrom is for a bolt's inputs and
// mailbox.run for the rest: the task is ending, possibly after it failed, so
// a panic here can only be logged.
func callStopping(log *zap.Logger, what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			log.Error(what, zap.Any("panic", r))
		}
	}()
	fn()
}

// system delivers a tick, activation or deactivation tuple (none for a nil v).
func (b *boltTask) system(v any) {
	if v == nil {
		return
	}
	s := &b.sysBatch
	s.source, s.task = systemComponent, systemTaskID
	s.values, s.streams = append(s.values[:0], v), append(s.streams[:0], nil)
	b.executeAll(s)
	s.values[0] = nil
}

// executeAll executes inputs that left the mailbox together, reading the clock
// once before and once after them all.
func (b *boltTask) executeAll(batch *tupleBatch) {
	start := time.Now()
	b.began = b.inc.flushEpoch.Load()
	if p := b.inc.hops; p != nil {
		markBatch(p, batch, hops.Taken)
	}
	for i := 0; i < batch.len(); {
		i = b.executeFrom(batch, i, start)
	}
	b.in = dsl.Tuple{} // keeps no value alive until the next batch
	elapsed, n := time.Since(start), int64(batch.len())
	b.stats.Executed.Add(n)
	b.stats.ExecuteNanos.Add(int64(elapsed))
	if n > 0 {
		b.stats.executeHist.observe(elapsed/time.Duration(n), n)
	}
}

// executeFrom executes batch's tuples from i and returns how far it got: all of them, or up to
// and including one whose user code panicked. Every input of the bolt's handler (data,
// tick and lifecycle tuples) runs here, and its recover is the boundary for that code:
// a panic, a failed emit's *component.EmitError among them, fails that input only and
// the bolt goes on. User code that runs elsewhere (the task's constructor, TaskInfo.Post
// functions) panics into mailbox.run, which fails the task; Close panics into closeImpl.
// Recovering here rather than per tuple keeps the defer off the per-tuple path.
func (b *boltTask) executeFrom(batch *tupleBatch, i int, received time.Time) (next int) {
	next = i
	defer func() {
		if r := recover(); r != nil {
			t := b.in // the input whose code panicked
			b.Fail(t)
			b.lat.end()
			b.input = nil
			b.stats.recordError(fmt.Sprintf("panic: %v", r))
			b.log.Error("bolt failed its input", zap.String("stream", streamName(t)),
				zap.Error(fmt.Errorf("panic: %v\n%s", r, debug.Stack())))
			next++
		}
	}()
	if b.untracked(batch) {
		b.executeUntracked(batch, &next, received)
		return next
	}
	for ; next < batch.len(); next++ {
		batch.load(next, &b.in)
		b.execute(&b.in, received)
		b.beat()
	}
	return next
}

// beat flushes what the inputs executed so far emitted once the flush beat
// has moved since their batch began: behind slow inputs, it has waited a flush
// interval already.
func (b *boltTask) beat() {
	if epoch := b.inc.flushEpoch.Load(); epoch != b.began {
		b.beatMoved(epoch)
	}
}

// beatMoved is beat's flush, out of line so that beat inlines.
//
//go:noinline
func (b *boltTask) beatMoved(epoch uint64) {
	b.began = epoch
	b.out.flush()
}

// untracked reports whether batch may take executeUntracked: its inputs carry
// no tree, and the bolt acks in place with no checkpoint or trace to keep per
// input.
func (b *boltTask) untracked(batch *tupleBatch) bool {
	return len(batch.ids) == 0 && b.auto != nil && b.ckpt == nil && !b.trace.on()
}

// executeUntracked is executeFrom's loop for a batch that untracked admits,
// from *next on (kept up to date, so that a panic's recover knows the input).
// Such an input's execute and ack come down to the handler's call and a
// count: the per-input steps that look at its tree, its checkpoint or its
// trace are decided once for the batch. The input the process sampler picks
// goes through execute and ack in full, so the sampler, the only per-input
// state left, sees the same inputs either way; the test
// TestAnUntrackedBatchEndsAsTheGeneralPathEndsIt keeps the two paths in step.
// BenchmarkBoltPath: 17.7 -> 15.9 ns a tuple.
func (b *boltTask) executeUntracked(batch *tupleBatch, next *int, received time.Time) {
	b.in = dsl.Tuple{Source: batch.source, Task: batch.task}
	values, streams := batch.values, batch.streams[:len(batch.values)]
	for i := *next; i < len(values); i++ {
		*next = i
		b.in.Value, b.in.Stream = values[i], streams[i]
		if !b.lat.pass() {
			b.execute(&b.in, received)
		} else {
			b.input = &b.in
			ack, err := b.auto.ExecuteAuto(&b.in, b)
			b.input = nil
			if ack {
				b.acked++ // ack's whole work for an input without a tree or a sample
			} else if err != nil {
				b.failed(&b.in, err)
			}
		}
		b.beat()
	}
	*next = len(values)
}

func (b *boltTask) execute(t *dsl.Tuple, received time.Time) {
	if b.trace.on() {
		b.trace.input(t)
	}
	b.input = t
	b.lat.begin(t.ID.Edge, received)
	if b.ckpt != nil {
		b.ckpt.executing(t)
	}
	var err error
	if b.auto != nil {
		var ack bool
		if ack, err = b.auto.ExecuteAuto(t, b); ack {
			b.ack(t)
		}
	} else {
		err = b.impl.Execute(t, b)
	}
	if err != nil {
		b.failed(t, err)
	}
	b.lat.end()
	b.input = nil
}

// failed logs an input that failed. It is out of line, like the tracer's
// helpers: its locals would grow the frame of every input's execute.
//
//go:noinline
func (b *boltTask) failed(t *dsl.Tuple, err error) {
	b.stats.recordError(err.Error())
	b.log.Error("bolt failed its input", zap.String("stream", streamName(*t)), zap.Error(err))
}

func streamName(t dsl.Tuple) string {
	if t.Stream == nil {
		return t.Source
	}
	return t.Stream.Name
}

// anchors returns the input being executed as the anchors of an emit, if the
// emit joins its trees.
func (b *boltTask) anchors() []dsl.TupleID {
	if b.input == nil || !b.Joins(b.input) {
		return nil
	}
	b.current[0] = b.input.ID
	return b.current[:]
}

// Joins implements component.Joiner: an emit anchored to in joins in's trees
// when in is tracked and came in on an anchored edge (dsl.Edge.Anchored). The
// sender's component is found by its task id, a slice index: this runs per
// emit.
func (b *boltTask) Joins(in *dsl.Tuple) bool {
	if in.ID.Edge == 0 {
		return false
	}
	tasks, i := b.inc.plan.Tasks, in.Task-1
	if uint(i) >= uint(len(tasks)) || tasks[i].Component == nil {
		return false
	}
	return b.anchoring.Joins(tasks[i].Component.Index, in.Stream)
}

// anchorIDs returns the ids of the explicit anchors whose trees an emit joins,
// each judged by the edge it came in on.
func (b *boltTask) anchorIDs(anchors []dsl.Tuple) []dsl.TupleID {
	ids := make([]dsl.TupleID, 0, len(anchors))
	for i := range anchors {
		if b.Joins(&anchors[i]) {
			ids = append(ids, anchors[i].ID)
		}
	}
	return ids
}

// Emit implements dsl.Emitter.
func (b *boltTask) Emit(tuple any) { b.emit(tuple, b.anchors(), 0) }

// EmitDirect implements dsl.Emitter.
func (b *boltTask) EmitDirect(task int, tuple any) { b.emit(tuple, b.anchors(), task) }

// EmitAnchored implements dsl.Collector.
func (b *boltTask) EmitAnchored(anchors []dsl.Tuple, tuple any) {
	b.emit(tuple, b.anchorIDs(anchors), 0)
}

// EmitDirectAnchored implements dsl.Collector.
func (b *boltTask) EmitDirectAnchored(task int, anchors []dsl.Tuple, tuple any) {
	b.emit(tuple, b.anchorIDs(anchors), task)
}

// EmitTasks implements component.TaskEmitter.
func (b *boltTask) EmitTasks(anchors []dsl.Tuple, direct int, tuple any, tasks []int) []int {
	ids := b.anchorIDs(anchors)
	return b.out.record(tasks, func() { b.emit(tuple, ids, direct) })
}

func (b *boltTask) emit(tuple any, anchors []dsl.TupleID, direct int) {
	if len(anchors) == 0 && direct == 0 {
		if task, stream, ok := b.router.Unicast(tuple); ok {
			b.out.deliverValue(task, tuple, stream)
			if b.trace.on() {
				b.trace.emit(tuple, anchors, direct)
			}
			b.emitted++
			return
		}
	}
	if err := b.router.Emit(tuple, anchors, direct); err != nil {
		panic(err) // the emit contract: executeFrom recovers it and fails the input
	}
	if b.trace.on() {
		b.trace.emit(tuple, anchors, direct)
	}
	b.emitted++
}

// Ack implements dsl.Collector.
func (b *boltTask) Ack(in dsl.Tuple) { b.ack(&in) }

func (b *boltTask) ack(in *dsl.Tuple) {
	b.acked++
	b.lat.settle(in.ID.Edge, true, b.stats)
	if b.trace.on() { // traced even when untracked: scenario A's bolt answers Ok too
		b.trace.settle("Ok", in.ID)
	}
	if in.ID.Edge == 0 {
		return
	}
	if p := b.inc.hops; p != nil {
		p.Mark(in.ID.Root, hops.Executed)
	}
	if b.ckpt != nil {
		b.ckpt.settled(b)
		if b.ckpt.holds {
			b.ckpt.hold(&in.ID) // acked when the checkpoint that covers it commits
			return
		}
	}
	b.sendAck(&in.ID)
}

func (b *boltTask) sendAck(id *dsl.TupleID) {
	b.out.ack(ackerOp{Kind: opOk, Root: id.Root, Edge: id.Edge})
	for _, r := range id.Roots {
		b.out.ack(ackerOp{Kind: opOk, Root: r, Edge: id.Edge})
	}
}

// Fail implements dsl.Collector.
func (b *boltTask) Fail(in dsl.Tuple) {
	b.stats.Failed.Add(1)
	b.lat.settle(in.ID.Edge, false, b.stats)
	if b.trace.on() {
		b.trace.settle("Fail", in.ID)
	}
	if in.ID.Edge == 0 {
		return
	}
	if b.ckpt != nil {
		b.ckpt.settled(b)
		b.ckpt.failed(b, in)
	}
	b.out.ack(ackerOp{Kind: opFail, Root: in.ID.Root})
	for _, r := range in.ID.Roots {
		b.out.ack(ackerOp{Kind: opFail, Root: r})
	}
}
