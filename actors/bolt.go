package actors

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/acker"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/protocol"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// boltTask executes a bolt's inputs one at a time and is the bolt's Collector.
type boltTask struct {
	inc      *incarnation
	task     routing.Task
	impl     dsl.BoltTask
	router   *routing.Router
	out      *outbox
	trace    tracer
	log      *zap.Logger
	stats    *TaskStats
	current  [1]dsl.TupleID // the input being executed, as an anchor list
	anchored bool           // current holds a tracked input
	consumed int64          // executed since the last flush, for the drain gauge
	rate     int            // tick rate in seconds
	lat      processSampler
}

func (b *boltTask) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *tupleBatch:
		b.executeAll(m.tuples)
		b.consumed += int64(len(m.tuples))
		putBatch(m)
	case idle:
		b.out.flush()
		b.inc.gauge.add(-b.consumed)
		b.consumed = 0
	case invoke:
		m.fn(b)
	case failTask:
		panic(taskFailure(m))
	case tick:
		b.executeAll([]dsl.Tuple{{Value: dsl.Tick{RateSecs: b.rate}, Stream: dsl.Ticks, Source: dsl.SystemComponent, Task: dsl.SystemTask}})
	case *actor.Started:
		info := b.inc.taskInfo(b.task)
		b.impl = b.task.Component.Bolt.NewTask(info)
		b.router = b.inc.plan.NewRouter(b.task, b.out, b.inc.ids(b.task.ID))
		b.rate = int(info.Settings.TickFrequency.Seconds())
		b.lat.timeout = info.Settings.MessageTimeout
	case activate:
		b.trace.in(protocol.Activate{})
		b.system(b.task.Component.Activation)
		close(m.done)
	case deactivate:
		b.trace.in(protocol.Deactivate{})
		b.system(b.task.Component.Deactivation)
		b.out.flush()
		close(m.done)
	case *actor.Stopping:
		b.out.flushAcks() // fails of a dying shell child's inputs reach the ackers
		closeImpl(b.impl, b.log)
	}
}

// closeImpl calls a task's dsl.Closer, logging its error or panic.
func closeImpl(impl any, log *zap.Logger) {
	c, ok := impl.(dsl.Closer)
	if !ok {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			log.Error("task panicked while closing", zap.Any("panic", r))
		}
	}()
	if err := c.Close(); err != nil {
		log.Error("task did not close cleanly", zap.Error(err))
	}
}

// system delivers an activation or deactivation tuple.
func (b *boltTask) system(v any) {
	if v != nil {
		b.executeAll([]dsl.Tuple{{Value: v, Source: dsl.SystemComponent, Task: dsl.SystemTask}})
	}
}

// executeAll executes inputs that left the mailbox together, reading the clock
// once before and once after them all.
func (b *boltTask) executeAll(tuples []dsl.Tuple) {
	start := time.Now()
	for i := 0; i < len(tuples); {
		i = b.executeFrom(tuples, i, start)
	}
	b.stats.Executed.Add(int64(len(tuples)))
	b.stats.ExecuteNanos.Add(int64(time.Since(start)))
}

// executeFrom executes tuples[i:] and returns how far it got: all of them, or up to
// and including one whose user code panicked. It is the one place user bolt code
// runs, and its recover is the one boundary for it: a panic fails that input only.
// Recovering here rather than per tuple keeps the defer off the per-tuple path.
func (b *boltTask) executeFrom(tuples []dsl.Tuple, i int, received time.Time) (next int) {
	next = i
	defer func() {
		if r := recover(); r != nil {
			t := tuples[next]
			b.Fail(t)
			b.lat.end()
			b.anchored = false
			b.log.Error("bolt failed its input", zap.String("stream", streamName(t)),
				zap.Error(fmt.Errorf("panic: %v\n%s", r, debug.Stack())))
			next++
		}
	}()
	for ; next < len(tuples); next++ {
		b.execute(tuples[next], received)
	}
	return next
}

func (b *boltTask) execute(t dsl.Tuple, received time.Time) {
	if b.trace.on() {
		b.trace.in(protocol.Tuple{Tuple: t})
	}
	b.current[0], b.anchored = t.ID, t.ID.Tracked()
	b.lat.begin(t.ID.Edge, received)
	if err := b.impl.Execute(t, b); err != nil {
		b.log.Error("bolt failed its input", zap.String("stream", streamName(t)), zap.Error(err))
	}
	b.lat.end()
	b.anchored = false
}

func streamName(t dsl.Tuple) string {
	if t.Stream == nil {
		return t.Source
	}
	return t.Stream.Name
}

func (b *boltTask) anchors() []dsl.TupleID {
	if b.anchored {
		return b.current[:]
	}
	return nil
}

// Emit implements dsl.Emitter.
func (b *boltTask) Emit(tuple any) { b.emit(tuple, b.anchors(), 0) }

// EmitDirect implements dsl.Emitter.
func (b *boltTask) EmitDirect(task int, tuple any) { b.emit(tuple, b.anchors(), task) }

// EmitAnchored implements dsl.Collector.
func (b *boltTask) EmitAnchored(anchors []dsl.Tuple, tuple any) {
	ids := make([]dsl.TupleID, len(anchors))
	for i, a := range anchors {
		ids[i] = a.ID
	}
	b.emit(tuple, ids, 0)
}

// EmitTasks implements dsl.TaskEmitter.
func (b *boltTask) EmitTasks(anchors []dsl.Tuple, direct int, tuple any, tasks []int) []int {
	ids := make([]dsl.TupleID, len(anchors))
	for i, a := range anchors {
		ids[i] = a.ID
	}
	return b.out.record(tasks, func() { b.emit(tuple, ids, direct) })
}

func (b *boltTask) emit(tuple any, anchors []dsl.TupleID, direct int) {
	if err := b.router.Emit(tuple, anchors, direct); err != nil {
		panic(err) // recovered by call: the input fails
	}
	if b.trace.on() {
		b.trace.out(protocol.Emit{Tuple: tuple, Anchors: anchors, Task: direct})
	}
	b.stats.Emitted.Add(1)
}

// Ack implements dsl.Collector.
func (b *boltTask) Ack(in dsl.Tuple) {
	b.stats.Acked.Add(1)
	b.lat.settle(in.ID.Edge, true, b.stats)
	if b.trace.on() { // traced even when untracked: scenario A's bolt answers Ok too
		b.trace.out(protocol.Ok{ID: in.ID})
	}
	if !in.ID.Tracked() {
		return
	}
	b.out.ack(acker.Op{Kind: acker.OpOk, Root: in.ID.Root, Edge: in.ID.Edge})
	for _, r := range in.ID.Roots {
		b.out.ack(acker.Op{Kind: acker.OpOk, Root: r, Edge: in.ID.Edge})
	}
}

// Fail implements dsl.Collector.
func (b *boltTask) Fail(in dsl.Tuple) {
	b.stats.Failed.Add(1)
	b.lat.settle(in.ID.Edge, false, b.stats)
	if b.trace.on() {
		b.trace.out(protocol.Fail{ID: in.ID})
	}
	if !in.ID.Tracked() {
		return
	}
	b.out.ack(acker.Op{Kind: acker.OpFail, Root: in.ID.Root})
	for _, r := range in.ID.Roots {
		b.out.ack(acker.Op{Kind: acker.OpFail, Root: r})
	}
}
