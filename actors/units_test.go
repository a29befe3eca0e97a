package actors

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/acker"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/routing"
)

// Unit tests of the runtime's parts that the system tests reach only in ways
// that cannot tell a right answer from a wrong one.

// --- queue ------------------------------------------------------------------

func TestQueueIsFIFOAndCountsWhatWaits(t *testing.T) {
	var q queue
	if q.pop() != nil || q.len() != 0 {
		t.Fatal("an empty queue has something")
	}
	for i := range 5 {
		q.push(i)
	}
	for want := range 3 {
		if got := q.pop(); got != want {
			t.Fatalf("pop = %v, want %d", got, want)
		}
	}
	if q.len() != 2 {
		t.Errorf("len = %d after 5 pushes and 3 pops, want 2", q.len())
	}
	q.pop()
	q.pop()
	if q.pop() != nil || q.len() != 0 || q.head != 0 || len(q.items) != 0 {
		t.Errorf("a drained queue: len %d, head %d, %d items; want it reset", q.len(), q.head, len(q.items))
	}
}

// TestQueueCompactsOnceMostOfItIsPopped: the popped prefix is dropped once more
// than 1024 items were popped and they are more than half the slice.
func TestQueueCompactsOnceMostOfItIsPopped(t *testing.T) {
	fill := func(n int) *queue {
		q := &queue{}
		for i := range n {
			q.push(i)
		}
		return q
	}
	popN := func(q *queue, n int) {
		for i := range n {
			if got := q.pop(); got != i {
				t.Fatalf("pop = %v, want %d", got, i)
			}
		}
	}
	q := fill(2000)
	popN(q, 1024)
	if q.head != 1024 {
		t.Errorf("after 1024 pops of 2000: head %d, want 1024 (no compaction yet)", q.head)
	}
	q.pop()
	if q.head != 0 || len(q.items) != 975 || q.len() != 975 {
		t.Errorf("after 1025 pops of 2000: head %d, %d items, len %d; want compacted to 975", q.head, len(q.items), q.len())
	}
	if got := q.pop(); got != 1025 {
		t.Errorf("pop after compaction = %v, want 1025", got)
	}

	q = fill(2050)
	popN(q, 1025)
	if q.head != 1025 || q.len() != 1025 {
		t.Errorf("after 1025 pops of 2050 (exactly half): head %d, len %d; want no compaction", q.head, q.len())
	}
	q.pop()
	if q.head != 0 || q.len() != 1024 {
		t.Errorf("after 1026 pops of 2050: head %d, len %d; want compacted", q.head, q.len())
	}
}

func TestRefusedDataIsNotPending(t *testing.T) {
	m, rec, d := newMailbox(2, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	for i := range 2 {
		if !m.putData(1, &tupleBatch{}) {
			t.Fatalf("batch %d did not fit in a lane of 2", i+1)
		}
	}
	m.close()
	if m.putData(1, &tupleBatch{}) {
		t.Fatal("a closed full mailbox took a batch")
	}
	if n := m.depth(); n != 2 {
		t.Errorf("depth %d, want 2: the refused batch is not waiting", n)
	}
}

// --- acker task ---------------------------------------------------------------

// idleBoxes returns n mailboxes, slots each, that nobody runs: tests post to
// them and read what arrived.
func idleBoxes(n, slots int) []*mailbox {
	boxes := make([]*mailbox, n)
	for i := range boxes {
		boxes[i] = newMailbox(slots, 1)
		boxes[i].RegisterHandlers(&recorder{}, &manualDispatcher{})
	}
	return boxes
}

// ackerHarness is an acker task whose spout (task 1) is a mailbox nobody runs.
func ackerHarness(capacity, batch int) (*ackerTask, *mailbox) {
	boxes := idleBoxes(2, 4)
	inc := &incarnation{boxes: boxes}
	return &ackerTask{inc: inc, tracker: acker.New(capacity), stats: newTaskStats(2), batch: batch}, boxes[1]
}

// posted returns the feedback messages posted to box.
func posted(box *mailbox) []*feedback {
	var out []*feedback
	for m := box.control.pop(); m != nil; m = box.control.pop() {
		out = append(out, m.(*feedback))
	}
	return out
}

func TestAckerCountsOpenTrees(t *testing.T) {
	a, box := ackerHarness(10, 64)
	a.apply(ackerOp{Kind: opTrack, Root: 1, Spout: 1})
	a.apply(ackerOp{Kind: opAnchor, Root: 1, Edge: 5})
	a.apply(ackerOp{Kind: opTrack, Root: 2, Spout: 1})
	a.apply(ackerOp{Kind: opTrack, Root: 3, Spout: 1})
	a.flush()
	if a.open != 3 || a.stats.Pending.Load() != 3 {
		t.Fatalf("open %d, pending %d after three tracks and an anchor, want 3", a.open, a.stats.Pending.Load())
	}
	if len(posted(box)) != 0 {
		t.Fatal("feedback before any tree ended")
	}
	a.apply(ackerOp{Kind: opOk, Root: 1, Edge: 5}) // complete
	a.apply(ackerOp{Kind: opFail, Root: 2})        // failed
	a.flush()
	if a.open != 1 || a.stats.Pending.Load() != 1 || a.stats.Acked.Load() != 1 || a.stats.Failed.Load() != 1 {
		t.Fatalf("open %d, pending %d, acked %d, failed %d; want 1, 1, 1, 1",
			a.open, a.stats.Pending.Load(), a.stats.Acked.Load(), a.stats.Failed.Load())
	}
	f := posted(box)
	if len(f) != 1 || len(f[0].acked) != 1 || f[0].acked[0] != 1 || len(f[0].nacked) != 1 || f[0].nacked[0] != 2 {
		t.Fatalf("feedback %+v, want tree 1 acked and tree 2 nacked in one message", f)
	}
	for range 3 { // three rotations expire what is left
		a.tracker.Rotate(a.expire)
	}
	a.flush()
	if a.open != 0 || a.stats.Expired.Load() != 1 || a.stats.Failed.Load() != 2 {
		t.Fatalf("open %d, expired %d, failed %d after the rotations; want 0, 1, 2", a.open, a.stats.Expired.Load(), a.stats.Failed.Load())
	}
	if f := posted(box); len(f) != 1 || f[0].expired != 1 || len(f[0].nacked) != 1 || f[0].nacked[0] != 3 {
		t.Fatalf("feedback %+v, want tree 3 nacked as expired", f)
	}
}

func TestAckerRefusesOverCapacity(t *testing.T) {
	a, box := ackerHarness(1, 64)
	a.apply(ackerOp{Kind: opTrack, Root: 1, Spout: 1})
	a.apply(ackerOp{Kind: opTrack, Root: 2, Spout: 1})
	a.flush()
	if a.refused != 1 || a.open != 1 || a.stats.Failed.Load() != 1 {
		t.Fatalf("refused %d, open %d, failed %d; want 1, 1, 1", a.refused, a.open, a.stats.Failed.Load())
	}
	if f := posted(box); len(f) != 1 || len(f[0].nacked) != 1 || f[0].nacked[0] != 2 {
		t.Fatalf("feedback %+v, want tree 2 nacked at once", f)
	}
}

// TestAckerFlushesAFullBatch: acks and nacks together fill a spout's batch.
func TestAckerFlushesAFullBatch(t *testing.T) {
	a, box := ackerHarness(10, 2)
	for root := uint64(1); root <= 3; root++ {
		a.apply(ackerOp{Kind: opTrack, Root: root, Spout: 1})
		a.apply(ackerOp{Kind: opAnchor, Root: root, Edge: 9})
	}
	a.apply(ackerOp{Kind: opOk, Root: 1, Edge: 9})
	if f := posted(box); len(f) != 0 {
		t.Fatalf("feedback %+v before the batch of 2 was full", f)
	}
	a.apply(ackerOp{Kind: opFail, Root: 2})
	if f := posted(box); len(f) != 1 || len(f[0].acked)+len(f[0].nacked) != 2 {
		t.Fatalf("feedback %+v, want one message with the full batch", f)
	}
	if a.out[1] != nil {
		t.Errorf("the flushed batch is still held: %+v", a.out[1])
	}
}

// --- bolt task ----------------------------------------------------------------

// boltImpl is a bolt task implementation as a function.
type boltImpl func(in dsl.Tuple, c dsl.Collector) error

func (f boltImpl) Execute(in *dsl.Tuple, c dsl.Collector) error { return f(*in, c) }

// batchOf is a batch of tuples, as an outbox would send it.
func batchOf(tuples ...dsl.Tuple) *tupleBatch {
	b := &tupleBatch{}
	for i := range tuples {
		b.add(&tuples[i])
	}
	return b
}

func boltHarness(impl boltImpl) (*boltTask, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return &boltTask{inc: &incarnation{}, impl: impl, stats: newTaskStats(1), log: zap.New(core)}, logs
}

// TestAPanicFailsOnlyItsInput: the inputs after it execute; an untracked input
// fails without a message to an acker; the log names the input's source.
func TestAPanicFailsOnlyItsInput(t *testing.T) {
	var executed []int
	b, logs := boltHarness(func(in dsl.Tuple, _ dsl.Collector) error {
		executed = append(executed, in.Value.(int))
		if in.Value == 2 {
			panic("bad input")
		}
		return nil
	})
	b.executeAll(batchOf(dsl.Tuple{Value: 1, Stream: &dsl.Stream{Name: "a"}}, dsl.Tuple{Value: 2, Stream: &dsl.Stream{Name: "b"}}, dsl.Tuple{Value: 3, Stream: &dsl.Stream{Name: "c"}}))
	if len(executed) != 3 || executed[2] != 3 {
		t.Fatalf("executed %v, want 1, 2, 3", executed)
	}
	if b.stats.Failed.Load() != 1 || b.stats.Executed.Load() != 3 || b.stats.snapshot().LastError != "panic: bad input" {
		t.Errorf("failed %d, executed %d, last error %q", b.stats.Failed.Load(), b.stats.Executed.Load(), b.stats.snapshot().LastError)
	}
	records := logs.FilterMessage("bolt failed its input").All()
	if len(records) != 1 || records[0].ContextMap()["stream"] != "b" {
		t.Errorf("records %+v, want one naming stream b", records)
	}
}

// TestOnlyTrackedInputsOnAnchoredEdgesAnchor: a bolt's emits join its input's
// tree only when the input is tracked and came in on an anchored edge
// (dsl.Edge.Anchored), whatever the anchoring of the edges out of the bolt.
func TestOnlyTrackedInputsOnAnchoredEdgesAnchor(t *testing.T) {
	bl := dsl.New("anchoring", nil)
	bl.Streams(num{})
	bolt := bl.Bolt("bolt", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }))
	bl.Anchored(bl.Spout("in", numbers(0, nil, nil)), bolt, dsl.Shuffle[num]())
	bl.Unanchored(bl.Spout("loose", numbers(0, nil, nil)), bolt, dsl.Shuffle[num]())
	plan := routing.Compile(build(t, bl))
	task := func(id string) int { return plan.Topology.Component(id).Tasks[0] }
	var anchors [][]dsl.TupleID
	var b *boltTask
	b, _ = boltHarness(func(dsl.Tuple, dsl.Collector) error {
		anchors = append(anchors, b.anchors())
		return nil
	})
	b.inc.plan = plan
	b.anchoring = component.NewAnchoring(plan.Topology, plan.Topology.Component(bolt))
	stream := plan.Topology.Streams[0]
	tracked := dsl.TupleID{Root: 1, Edge: 2}
	b.executeAll(batchOf( // a batch comes from one task
		dsl.Tuple{Value: 1, Stream: stream, Task: task("in")},
		dsl.Tuple{Value: 2, Stream: stream, Task: task("in"), ID: tracked}))
	b.executeAll(batchOf(dsl.Tuple{Value: 3, Stream: stream, Task: task("loose"), ID: tracked}))
	b.executeAll(batchOf(dsl.Tuple{Value: 4, Stream: stream, Task: 999, ID: tracked})) // on no edge
	if len(anchors) != 4 || anchors[0] != nil || len(anchors[1]) != 1 || anchors[1][0].Root != 1 || anchors[1][0].Edge != 2 ||
		anchors[2] != nil || anchors[3] != nil {
		t.Errorf("anchors %v, want only the tracked input of the anchored edge", anchors)
	}
	if b.anchors() != nil {
		t.Error("anchors outside an Execute")
	}
}

// TestExecuteHistogramCountsEachInputAtTheMean: every input of a batch is
// counted at the batch's mean execute time; an empty batch counts nothing.
// With no flush beat moving, nothing is flushed (the harness has no outbox).
func TestExecuteHistogramCountsEachInputAtTheMean(t *testing.T) {
	b, _ := boltHarness(func(dsl.Tuple, dsl.Collector) error { return nil })
	b.executeAll(batchOf())
	if h := b.stats.executeHist.load(); h != nil {
		t.Fatalf("an empty batch counted %v", h)
	}
	const n = 1000
	tuples := make([]dsl.Tuple, n)
	start := time.Now()
	b.executeAll(batchOf(tuples...))
	total := time.Since(start)
	h := b.stats.executeHist.load()
	var count int64
	bucket := -1
	for i, c := range h {
		if c != 0 {
			count += c
			bucket = i
		}
	}
	if count != n {
		t.Fatalf("histogram %v counts %d inputs, want %d", h, count, n)
	}
	if bucket > 0 && time.Duration(1<<(bucket-1))*time.Microsecond >= total/n {
		t.Errorf("inputs counted in bucket %d; the mean is at most %v", bucket, total/n)
	}
}

type closer func() error

func (c closer) Close() error { return c() }

func TestCloseImplLogsErrorsAndPanics(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close closer
		want  string
	}{
		{"clean", func() error { return nil }, ""},
		{"error", func() error { return errors.New("flush failed") }, "task did not close cleanly"},
		{"panic", func() error { panic("boom") }, "task panicked while closing"},
	} {
		core, logs := observer.New(zapcore.DebugLevel)
		closeImpl(tt.close, zap.New(core))
		var got []string
		for _, e := range logs.All() {
			got = append(got, e.Message)
		}
		if want := []string{tt.want}; tt.want == "" && len(got) != 0 || tt.want != "" && (len(got) != 1 || got[0] != want[0]) {
			t.Errorf("%s: logged %q, want %q", tt.name, got, tt.want)
		}
	}
	closeImpl(struct{}{}, zap.NewNop()) // no Closer: nothing to do
}

// --- host ---------------------------------------------------------------------

func TestForgetDropsOnlyThatIncarnation(t *testing.T) {
	t1, t2, t3 := &Topology{}, &Topology{}, &Topology{}
	s := &System{live: []*Topology{t1, t2, t3}}
	s.forget(t2)
	if len(s.live) != 2 || s.live[0] != t1 || s.live[1] != t3 {
		t.Errorf("live %v after forgetting the second, want the first and third", s.live)
	}
	s.forget(t2)
	if len(s.live) != 2 {
		t.Error("forgetting an unknown incarnation dropped one")
	}
}

// TestAFailureOfAnUnknownActor is reported as the system's, task -1.
func TestAFailureOfAnUnknownActor(t *testing.T) {
	var got []Failure
	s := &System{onFailure: func(f Failure) { got = append(got, f) }}
	pid := &actor.PID{Id: "elsewhere"}
	s.failed(pid, errors.New("boom"))
	s.failed(pid, &panicError{value: "p", stack: []byte("stack")})
	s.failed(pid, 42)
	if len(got) != 3 {
		t.Fatalf("%d failures, want 3", len(got))
	}
	for _, f := range got {
		if f.Topology != nil || f.Component != "__system" || f.Task != -1 {
			t.Errorf("failure %+v, want the system's (task -1, no topology)", f)
		}
	}
	if got[0].Err.Error() != "boom" || got[1].Err.Error() != "panic: p" || string(got[1].Stack) != "stack" ||
		!strings.Contains(got[2].Err.Error(), "42") || got[2].Stack != nil {
		t.Errorf("failures %+v: want the error, the panic with its stack, the value", got)
	}
}

// TestUserMessageCountCountsEveryLane: control messages, data batches and the
// one coalesced tick message.
func TestUserMessageCountCountsEveryLane(t *testing.T) {
	m := newMailbox(4, 1)
	m.RegisterHandlers(&recorder{}, &manualDispatcher{})
	if n := m.UserMessageCount(); n != 0 {
		t.Fatalf("an empty mailbox counts %d", n)
	}
	m.PostUserMessage(idle{})
	m.PostUserMessage(idle{})
	m.putData(1, &tupleBatch{})
	if n := m.UserMessageCount(); n != 3 {
		t.Errorf("count %d with two control messages and a batch, want 3", n)
	}
	m.postTick(1)
	m.postTick(1)
	if n := m.UserMessageCount(); n != 4 {
		t.Errorf("count %d with two beats more, want 4: beats coalesce into one message", n)
	}
}

// TestTickBeatsAddUpAndSaturate: the beats of a long Advance reach the task in
// one tick message, counted, and a count too large for the mailbox saturates
// instead of wrapping.
func TestTickBeatsAddUpAndSaturate(t *testing.T) {
	m := idleBoxes(1, 2)[0]
	m.postTick(3)
	m.postTick(4)
	if n := m.UserMessageCount(); n != 1 {
		t.Fatalf("%d messages for two posts of beats, want one", n)
	}
	if tk, ok := m.takeTick(); !ok || tk.n != 7 {
		t.Fatalf("took %+v (%v), want 7 beats", tk, ok)
	}
	m.postTick(math.MaxInt32)
	m.postTick(3_600_000)
	if tk, _ := m.takeTick(); tk.n != math.MaxInt32 {
		t.Fatalf("took %d beats, want the count saturated at %d", tk.n, math.MaxInt32)
	}
}

// --- outbox -------------------------------------------------------------------

func TestGaugeSignalsOnlyWhenItDropsToZero(t *testing.T) {
	g := newGauge()
	token := func() bool {
		select {
		case <-g.zero:
			return true
		default:
			return false
		}
	}
	g.add(2)
	g.add(-1)
	if token() || g.n.Load() != 1 {
		t.Fatalf("at %d: a zero token, or a wrong count", g.n.Load())
	}
	g.add(-1)
	if !token() {
		t.Fatal("no token on dropping to zero")
	}
	g.add(0)
	if token() {
		t.Error("adding nothing at zero gave a token")
	}
}

// outboxHarness is an outbox of a spout task (1) of a plan with a bolt (tasks 2,
// 3) and the default ackers, whose mailboxes nobody runs.
func outboxHarness(t *testing.T, batch int) (*outbox, *incarnation) {
	b := dsl.New("outbox", nil)
	spout := b.Spout("source", dsl.Unreliable(func() (num, bool) { return num{}, false }))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	inc := &incarnation{plan: plan, gauge: newGauge()}
	inc.boxes = idleBoxes(len(plan.Tasks)+1, 8)
	return newOutbox(inc, 1, batch, newTaskStats(len(inc.boxes))), inc
}

func TestOutboxFlushesAFullBatch(t *testing.T) {
	for name, deliver := range map[string]func(o *outbox, v int){
		"Deliver":      func(o *outbox, v int) { o.Deliver(2, &dsl.Tuple{Value: v}) },
		"deliverValue": func(o *outbox, v int) { o.deliverValue(2, v, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			o, inc := outboxHarness(t, 2)
			deliver(o, 1)
			if d := inc.boxes[2].depth(); d != 0 {
				t.Fatalf("a batch of 1 of 2 was sent (depth %d)", d)
			}
			deliver(o, 2)
			if d := inc.boxes[2].depth(); d != 1 || inc.gauge.n.Load() != 2 || o.sent[2].Load() != 2 {
				t.Fatalf("depth %d, in flight %d, sent %d; want the full batch sent", d, inc.gauge.n.Load(), o.sent[2].Load())
			}
			deliver(o, 3)
			if d := inc.boxes[2].depth(); d != 1 {
				t.Fatalf("depth %d after a third tuple, want the new batch kept", d)
			}
		})
	}
}

// An outbox knows its task's component: the Source of the tuples whose
// batches deliverValue starts. Ackers have none.
func TestOutboxNamesItsTasksComponent(t *testing.T) {
	for _, ackers := range []int{0, 2} {
		b := dsl.New("names", dsl.Conf{dsl.AckerTasks: ackers})
		spout := b.Spout("a-source", dsl.Unreliable(func() (num, bool) { return num{}, false }))
		b.Unanchored(spout, b.Bolt("z-sink", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Shuffle[num]())
		plan := routing.Compile(build(t, b))
		inc := &incarnation{plan: plan, gauge: newGauge()}
		for _, task := range plan.Tasks {
			want := ""
			if task.Component != nil {
				want = task.Component.ID
			}
			if got := newOutbox(inc, task.ID, 4, newTaskStats(len(plan.Tasks)+1)).source; got != want {
				t.Errorf("%d ackers: the outbox of task %d names %q, want %q", ackers, task.ID, got, want)
			}
		}
	}
}

// The drain gauge counts a spout's trees before anything of theirs leaves the
// task (a drain that saw 0 while a Track or a tuple travels would end early),
// and not one atomic add per tree.
func TestOutboxCountsOpenTreesBeforeTheirOperationsLeave(t *testing.T) {
	for _, first := range []string{"data", "acks"} {
		o, inc := outboxHarness(t, 8)
		o.Track(7, 1)
		o.openTree()
		o.Deliver(2, &dsl.Tuple{Value: 1, ID: dsl.TupleID{Root: 7, Edge: 9}})
		o.openTree()
		if n := inc.gauge.n.Load(); n != 0 {
			t.Fatalf("in flight %d before any flush; want 0 (counted at the flush)", n)
		}
		if first == "data" {
			o.flushTo(2)
			if n := inc.gauge.n.Load(); n != 3 {
				t.Fatalf("data first: in flight %d; want 3 (2 trees, 1 tuple)", n)
			}
			o.flushAcks()
		} else {
			o.flushAcks()
			if n := inc.gauge.n.Load(); n != 2 {
				t.Fatalf("acks first: in flight %d; want the 2 trees", n)
			}
			o.flush()
		}
		if n := inc.gauge.n.Load(); n != 3 {
			t.Fatalf("%s first, all flushed: in flight %d; want 3 (no tree counted twice)", first, n)
		}
	}
	// A tree whose operations left in an earlier flush (a full acker batch
	// mid-emit) is still counted by the next flush, with nothing left to send.
	o, inc := outboxHarness(t, 8)
	o.openTree()
	o.flush()
	if n := inc.gauge.n.Load(); n != 1 {
		t.Fatalf("a flush with nothing to send: in flight %d; want the tree", n)
	}
}

func TestAbandonCountsTreesNotYetFlushed(t *testing.T) {
	s, _, _ := spoutHarness(t, 4)
	s.out.openTree() // emitted in a burst that failed before its flush
	s.pending = 1
	s.abandon()
	if n := s.inc.gauge.n.Load(); n != 0 {
		t.Fatalf("in flight %d after abandoning the only tree; want 0", n)
	}
}

func TestOutboxHoldsFullBatchesUntilRelease(t *testing.T) {
	o, inc := outboxHarness(t, 2)
	acker := ackerOf(inc.plan, 7)
	o.hold()
	o.Track(7, 1)
	o.Deliver(2, &dsl.Tuple{Value: 1})
	o.Deliver(2, &dsl.Tuple{Value: 2})
	o.Deliver(3, &dsl.Tuple{Value: 3})
	if inc.boxes[2].depth() != 0 || inc.boxes[acker].control.len() != 0 {
		t.Fatal("something was sent during a hold")
	}
	o.release()
	if inc.boxes[2].depth() != 1 || inc.boxes[3].depth() != 0 {
		t.Fatalf("after release: depths %d and %d, want the full batch only", inc.boxes[2].depth(), inc.boxes[3].depth())
	}
	if m, ok := inc.boxes[acker].control.pop().(*ackerBatch); !ok || len(m.ops) != 1 || m.ops[0].Kind != opTrack {
		t.Fatalf("acker got %+v, want the track", m)
	}
	o.flush()
	if inc.boxes[3].depth() != 1 {
		t.Error("flush did not send the partial batch")
	}
}

func TestOutboxFlushesAFullAckerBatch(t *testing.T) {
	o, inc := outboxHarness(t, 2)
	acker := inc.boxes[ackerOf(inc.plan, 7)]
	o.Track(7, 1)
	if acker.control.len() != 0 {
		t.Fatal("a batch of 1 of 2 acker operations was sent")
	}
	o.Anchor(7, 9)
	if m, ok := acker.control.pop().(*ackerBatch); !ok || len(m.ops) != 2 {
		t.Fatalf("acker got %+v, want the full batch", m)
	}
}

func TestGetBatchHasRoomForSize(t *testing.T) {
	if b := getBatch(1 << 16); cap(b.values) < 1<<16 || b.len() != 0 {
		t.Errorf("batch of len %d, cap %d; want empty with room for 65536", b.len(), cap(b.values))
	}
}

// TestARefusedBatchIsNotInFlight: a batch a closed mailbox refuses (the
// topology is torn down) neither counts in flight nor as sent.
func TestARefusedBatchIsNotInFlight(t *testing.T) {
	o, inc := outboxHarness(t, 2)
	full := newMailbox(2, 1)
	full.RegisterHandlers(&recorder{}, &manualDispatcher{})
	full.putData(1, &tupleBatch{})
	full.putData(1, &tupleBatch{})
	full.close()
	inc.boxes[2] = full
	o.Deliver(2, &dsl.Tuple{Value: 1})
	o.Deliver(2, &dsl.Tuple{Value: 2})
	if n, sent := inc.gauge.n.Load(), o.sent[2].Load(); n != 0 || sent != 0 {
		t.Errorf("in flight %d, sent %d after a refused batch; want 0, 0", n, sent)
	}
}

// --- spout task ---------------------------------------------------------------

// fakeSource is a spout task implementation that always has a message and
// emits nothing.
type fakeSource struct {
	nexts, abandoned int
	brokenAbandon    bool
	empty            bool   // Next has nothing
	onNext           func() // called in every Next
}

func (f *fakeSource) Next(dsl.SpoutEmitter) bool {
	f.nexts++
	if f.onNext != nil {
		f.onNext()
	}
	return !f.empty
}
func (f *fakeSource) Ack(uint64)  {}
func (f *fakeSource) Nack(uint64) {}
func (f *fakeSource) Abandon() {
	f.abandoned++
	if f.brokenAbandon {
		panic("cannot nack")
	}
}

func spoutHarness(t *testing.T, batch int) (*spoutTask, *fakeSource, *observer.ObservedLogs) {
	o, inc := outboxHarness(t, batch)
	core, logs := observer.New(zapcore.DebugLevel)
	src := &fakeSource{}
	box := inc.boxes[1]
	return &spoutTask{inc: inc, task: inc.plan.Tasks[0], box: box, impl: src, out: o, stats: newTaskStats(len(inc.boxes)), log: zap.New(core), active: true, max: 2}, src, logs
}

func TestAbandonNacksWhatIsOpenOnce(t *testing.T) {
	s, src, logs := spoutHarness(t, 4)
	s.abandon()
	if src.abandoned != 0 {
		t.Fatal("abandoned with nothing pending")
	}
	s.inc.gauge.add(3)
	s.pending = 3
	s.stats.Pending.Store(3)
	s.abandon()
	if src.abandoned != 1 || s.pending != 0 || s.stats.Pending.Load() != 0 || s.stats.Failed.Load() != 3 || s.inc.gauge.n.Load() != 0 {
		t.Fatalf("abandoned %d, pending %d/%d, failed %d, in flight %d; want 1, 0/0, 3, 0",
			src.abandoned, s.pending, s.stats.Pending.Load(), s.stats.Failed.Load(), s.inc.gauge.n.Load())
	}
	s.abandon()
	if src.abandoned != 1 {
		t.Error("abandoned twice")
	}
	if logs.Len() != 0 {
		t.Errorf("logged %v", logs.All())
	}
	src.brokenAbandon = true
	s.pending = 1
	s.abandon()
	if n := logs.FilterMessage("spout panicked while nacking its pending messages").Len(); n != 1 {
		t.Errorf("%d records of the panic, want 1", n)
	}
	(&spoutTask{}).abandon() // a task that never started: nothing to do
}

func TestResumeStopsAtMaxPending(t *testing.T) {
	s, _, _ := spoutHarness(t, 4)
	s.pending = 2
	s.resume()
	if s.queued || s.box.control.len() != 0 {
		t.Fatal("a spout at max pending asked for more")
	}
	s.pending = 1
	s.resume()
	if !s.queued || s.box.control.len() != 1 {
		t.Fatal("a spout below max pending did not ask for more")
	}
}

// A turn runs bursts back to back while nothing else waits in the spout's
// mailbox, at most burstsPerTurn of them, and hands over to the mailbox as
// soon as a message waits, the source runs dry or max pending is reached.
func TestATurnRunsBurstsUntilSomethingElseWaits(t *testing.T) {
	s, src, _ := spoutHarness(t, 4)
	s.max = 1 << 20
	s.turn(burstsPerTurn)
	if src.nexts != 4*burstsPerTurn {
		t.Errorf("a quiet turn called Next %d times, want %d bursts of 4", src.nexts, burstsPerTurn)
	}
	if !s.queued {
		t.Error("a turn that ended on its bound did not queue the next one")
	}
	drain := func() { // what the turn posted: the next turn's message
		for s.box.control.pop() != nil {
		}
		s.box.pending.Store(0)
		s.queued = false
	}
	drain()

	src.nexts = 0
	src.onNext = func() {
		if src.nexts == 6 { // in the second burst, an ack arrives
			s.box.PostUserMessage(&feedback{})
		}
	}
	s.turn(burstsPerTurn)
	if src.nexts != 8 {
		t.Errorf("a turn with a message waiting after burst 1 called Next %d times, want 8 (it ends after the burst under way)", src.nexts)
	}
	drain()

	src.nexts = 0
	src.onNext = func() {
		if src.nexts == 6 {
			s.pending = s.max // the emits of the second burst reach max pending
		}
	}
	s.turn(burstsPerTurn)
	if src.nexts != 6 || s.queued {
		t.Errorf("a turn reaching max pending called Next %d times (want 6), queued %v (want an outcome to resume it)", src.nexts, s.queued)
	}
}

func TestABurstCallsNextABatchOfTimesBelowMaxPending(t *testing.T) {
	s, src, _ := spoutHarness(t, 4)
	s.max = 100
	s.turn(1)
	if src.nexts != 4 {
		t.Errorf("a burst called Next %d times, want the batch size 4", src.nexts)
	}
	s.pending, s.max = 2, 2
	s.turn(1)
	if src.nexts != 4 {
		t.Errorf("a burst at max pending called Next %d times more", src.nexts-4)
	}
}

// --- Receive ------------------------------------------------------------------

// message is an actor.Context that only carries a message.
type message struct {
	actor.Context
	msg any
}

func (m message) Message() any { return m.msg }

func TestStoppingEndsTheComponentsContext(t *testing.T) {
	s, _, _ := spoutHarness(t, 4)
	s.Receive(message{msg: &actor.Stopping{}}) // never started: no Context to end
	cancelled := 0
	s.cancel = func() { cancelled++ }
	s.Receive(message{msg: &actor.Stopping{}})
	if cancelled != 1 {
		t.Errorf("the spout's Context was cancelled %d times on Stopping, want 1", cancelled)
	}

	o, _ := outboxHarness(t, 4)
	b := &boltTask{out: o, log: zap.NewNop()}
	b.Receive(message{msg: &actor.Stopping{}})
	cancelled = 0
	b.cancel = func() { cancelled++ }
	b.Receive(message{msg: &actor.Stopping{}})
	if cancelled != 1 {
		t.Errorf("the bolt's Context was cancelled %d times on Stopping, want 1", cancelled)
	}
}

// TestAckerLogsRefusedTreesOnTheTick: once per tick, and only when some were.
func TestAckerLogsRefusedTreesOnTheTick(t *testing.T) {
	_, inc := outboxHarness(t, 4)
	core, logs := observer.New(zapcore.DebugLevel)
	a, _ := ackerHarness(1, 64)
	a.inc.plan, a.log = inc.plan, zap.New(core)
	a.Receive(message{msg: tick{n: 1}})
	if logs.Len() != 0 {
		t.Fatalf("logged %v with nothing refused", logs.All())
	}
	a.apply(ackerOp{Kind: opTrack, Root: 1, Spout: 1})
	a.apply(ackerOp{Kind: opTrack, Root: 2, Spout: 1})
	a.apply(ackerOp{Kind: opTrack, Root: 3, Spout: 1})
	a.Receive(message{msg: tick{n: 1}})
	a.Receive(message{msg: tick{n: 1}})
	records := logs.FilterMessage("acker at capacity: new trees were nacked at once").All()
	if len(records) != 1 || records[0].ContextMap()["refused"] != int64(2) {
		t.Errorf("records %+v, want one counting 2 refused trees", records)
	}
}

// --- stats --------------------------------------------------------------------

func TestHistogramBuckets(t *testing.T) {
	for _, tt := range []struct {
		d      time.Duration
		bucket int
	}{
		{0, 0}, {time.Nanosecond, 0}, {time.Microsecond, 0},
		{time.Microsecond + time.Nanosecond, 1}, {2 * time.Microsecond, 1},
		{2*time.Microsecond + time.Nanosecond, 2}, {4 * time.Microsecond, 2},
		{time.Millisecond, 10}, {time.Hour, histogramBuckets - 1},
	} {
		var h histogram
		h.observe(tt.d, 3)
		if got := h.load(); got[tt.bucket] != 3 {
			t.Errorf("%v counted in %v, want bucket %d", tt.d, got, tt.bucket)
		}
	}
}

func TestRecordErrorBoundsTheText(t *testing.T) {
	s := newTaskStats(1)
	exact := strings.Repeat("x", maxErrorText)
	s.recordError(exact)
	if got := s.snapshot().LastError; got != exact {
		t.Errorf("a text of exactly the bound was changed to %d bytes", len(got))
	}
	s.recordError(exact + "y")
	if got := s.snapshot().LastError; got != exact+"..." {
		t.Errorf("a text over the bound became %d bytes, want it cut at the bound with ...", len(got))
	}
}

// --- spout back-off -------------------------------------------------------------

func TestAnEmptySourceBacksOffBySpoutWait(t *testing.T) {
	s, src, _ := spoutHarness(t, 4)
	clk := clock.NewManual(time.Unix(0, 0))
	s.inc.clock = clk
	src.empty = true
	s.task.Component.Settings.SpoutWait = 0
	s.turn(1)
	if s.wait != nil || !s.queued || s.box.control.len() != 1 {
		t.Fatal("with no spout wait an empty source is asked again at once")
	}
	s.box.control.pop()
	s.queued = false
	s.task.Component.Settings.SpoutWait = time.Millisecond
	s.turn(1)
	if s.wait == nil || !s.queued || s.box.control.len() != 0 {
		t.Fatal("an empty source was asked again before the spout wait")
	}
	clk.Advance(time.Millisecond)
	if s.box.control.len() != 1 {
		t.Fatal("the spout wait did not ask again")
	}
}

func TestAGoodEmitLogsNothing(t *testing.T) {
	s, _, logs := spoutHarness(t, 4)
	s.router = s.inc.plan.NewRouter(s.task, s.out, s.inc.ids(s.task.ID))
	if root := s.Emit(num{1}, false); root != 0 {
		t.Errorf("an untracked emit has root %x", root)
	}
	s.publish() // counters reach the stats once per mailbox message
	if logs.Len() != 0 || s.stats.Emitted.Load() != 1 {
		t.Errorf("logged %v, emitted %d", logs.All(), s.stats.Emitted.Load())
	}
}

// --- system task and stop -------------------------------------------------------

// TestRotationTicksReachAckersAndSpouts: the system task's timers rotate the
// ackers and spouts every half message timeout, tick only the bolts that asked
// for ticks, and advance the flush beat; deactivating stops them all.
func TestRotationTicksReachAckersAndSpouts(t *testing.T) {
	b := dsl.New("timers", dsl.Conf{dsl.MessageTimeout: 10, dsl.BatchFlushInterval: 1})
	spout := b.Spout("source", dsl.Unreliable(func() (num, bool) { return num{}, false }))
	b.Unanchored(spout, b.Bolt("ticked", dsl.Terminator(func(num) {}), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 3})), dsl.Shuffle[num]())
	b.Unanchored(spout, b.Bolt("quiet", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	clk := clock.NewManual(time.Unix(0, 0))
	// Nothing runs these boxes: the test reads the ticks they were posted.
	inc := &incarnation{plan: plan, clock: clk, beat: clk}
	inc.boxes = idleBoxes(len(plan.Tasks)+1, 1)
	s := &systemTask{inc: inc}
	s.startTimers()
	ticks := func() map[string]int32 {
		out := map[string]int32{}
		for _, task := range plan.Tasks {
			out[componentName(task)] += inc.boxes[task.ID].ticks.Load()
		}
		return out
	}
	clk.Advance(time.Millisecond)
	if inc.flushEpoch.Load() != 1 || ticks()["source"] != 0 {
		t.Fatalf("after 1ms: flush beat %d, ticks %v; want one beat, no tick", inc.flushEpoch.Load(), ticks())
	}
	clk.Advance(3*time.Second - time.Millisecond)
	if got := ticks(); got["ticked"] != 1 || got["quiet"] != 0 || got["source"] != 0 || got["__acker"] != 0 {
		t.Fatalf("after 3s: ticks %v, want the ticked bolt's only", got)
	}
	clk.Advance(2 * time.Second)
	if got := ticks(); got["source"] != 1 || got["__acker"] != int32(len(plan.Ackers)) || got["quiet"] != 0 {
		t.Fatalf("after 5s: ticks %v, want a rotation of the spout and every acker, none for a bolt", got)
	}
	s.stopTimers()
	if n := clk.Timers(); n != 0 {
		t.Errorf("%d timers left after stopTimers", n)
	}
}

func TestDrainTimeoutDefaultsToTheMessageTimeout(t *testing.T) {
	b := dsl.New("drain", dsl.Conf{dsl.MessageTimeout: 7})
	b.Unanchored(b.Spout("source", dsl.Unreliable(func() (num, bool) { return num{}, false })),
		b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	top := &Topology{inc: &incarnation{plan: plan}}
	if d := top.drainTimeout(); d != 7*time.Second {
		t.Errorf("drain timeout %v, want the message timeout 7s", d)
	}
	top.inc.cfg.DrainTimeout = time.Second
	if d := top.drainTimeout(); d != time.Second {
		t.Errorf("drain timeout %v, want the configured 1s", d)
	}
}

// TestProcessSamplerGivesUpAtTheTimeout: an input held for exactly the timeout
// is no longer waited for.
func TestProcessSamplerGivesUpAtTheTimeout(t *testing.T) {
	p := processSampler{timeout: time.Second}
	stats := newTaskStats(1)
	start := time.Now().Add(-time.Hour)
	p.begin(7, start)
	p.end()
	for i := 0; i < sampleEvery; i++ {
		p.begin(8, start.Add(time.Second))
		p.end()
	}
	p.settle(8, true, stats)
	if stats.ProcessSamples.Load() != 1 {
		t.Fatalf("samples = %d, want 1: held for the timeout, the input is given up", stats.ProcessSamples.Load())
	}
}

// TestCompleteSamplerSettlesOnlyItsTree: an outcome frees the slot of its own
// tree, and an unsampled tree's frees none.
func TestCompleteSamplerSettlesOnlyItsTree(t *testing.T) {
	var c completeSampler
	stats := newTaskStats(1)
	now := time.Now()
	c.roots[0], c.roots[1], c.at[0], c.at[1], c.open = 1, 2, now, now, 2
	c.settle(99, true, stats)
	if c.open != 2 || c.roots[0] != 1 || c.roots[1] != 2 {
		t.Fatalf("an unsampled tree's outcome changed the samples: %v, %d open", c.roots, c.open)
	}
	c.settle(2, true, stats)
	if c.open != 1 || c.roots[0] != 1 || c.roots[1] != 0 || stats.CompleteSamples.Load() != 1 {
		t.Fatalf("after tree 2's ack: %v, %d open, %d samples; want only tree 2's slot freed and sampled", c.roots, c.open, stats.CompleteSamples.Load())
	}
}

func TestNoFlushBeatWithoutAFlushInterval(t *testing.T) {
	b := dsl.New("noflush", dsl.Conf{dsl.BatchFlushInterval: 0})
	b.Unanchored(b.Spout("source", dsl.Unreliable(func() (num, bool) { return num{}, false })),
		b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	clk := clock.NewManual(time.Unix(0, 0))
	plan := routing.Compile(build(t, b))
	s := &systemTask{inc: &incarnation{plan: plan, clock: clk, boxes: make([]*mailbox, len(plan.Tasks)+1)}}
	s.startTimers()
	defer s.stopTimers()
	if n := clk.Timers(); n != 1 {
		t.Errorf("%d timers, want the rotation only", n)
	}
}

// drainHarness is an incarnation's Topology with nothing but its gauge.
func drainHarness() *Topology {
	return &Topology{inc: &incarnation{gauge: newGauge(), log: zap.NewNop()},
		failed: map[int]bool{}, failChanged: make(chan struct{}), broken: make(chan struct{})}
}

// TestDrainWaitsForWhatIsInFlight: it returns at once when nothing is, and as
// soon as the last tuple settles otherwise.
func TestDrainWaitsForWhatIsInFlight(t *testing.T) {
	top := drainHarness()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() { top.drain(ctx); close(done) }()
	wait(t, done, "the drain of nothing")

	top.inc.gauge.add(1)
	done = make(chan struct{})
	go func() { top.drain(ctx); close(done) }()
	select {
	case <-done:
		t.Fatal("the drain returned with a tuple in flight")
	case <-time.After(20 * time.Millisecond):
	}
	top.inc.gauge.add(-1)
	wait(t, done, "the drain after the last tuple settled")
}

func TestStuckFailureNamesTheTask(t *testing.T) {
	b := dsl.New("stuck", nil)
	b.Unanchored(b.Spout("source", dsl.Unreliable(func() (num, bool) { return num{}, false })),
		b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	top := &Topology{inc: &incarnation{plan: plan}}
	for _, task := range plan.Tasks {
		if f := top.stuckFailure(task.ID); f.Component != componentName(task) || f.Task != task.ID || !errors.Is(f.Err, errStuck) || f.Topology != top {
			t.Errorf("stuck task %d: %+v", task.ID, f)
		}
	}
	if f := top.stuckFailure(0); f.Component != "__system" || f.Task != -1 {
		t.Errorf("stuck system task: %+v", f)
	}
}

// TestDebugLogsEveryMessage: with topology.debug a task's tracer logs what it
// traces, with no trace function configured.
func TestDebugLogsEveryMessage(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	tr := tracer{component: "sink", task: 2, log: zap.New(core)}
	if !tr.on() {
		t.Fatal("a debug tracer is off")
	}
	tr.in("Activate")
	if records := logs.FilterMessage("message").All(); len(records) != 1 || records[0].ContextMap()["kind"] != "Activate" {
		t.Errorf("records %+v, want the Activate", records)
	}
	if (&tracer{}).on() {
		t.Error("a tracer with neither a function nor a log is on")
	}
}

// TestShutdownOfAnIdleSystemDoesNotWait: with no task left, the supervisor
// answers Shutdown's childless request at once (the wait is for tasks still
// terminating, a second at most).
func TestShutdownOfAnIdleSystemDoesNotWait(t *testing.T) {
	s := NewSystem(zap.NewNop(), func(Failure) {})
	start := time.Now()
	s.Shutdown()
	if d := time.Since(start); d >= 900*time.Millisecond {
		t.Errorf("Shutdown took %v with no task, want no wait for the children", d)
	}
}

// TestAckerMergesATrackWithItsAnchors: a batch's Track followed by Anchors of
// the same tree opens the tree with their XOR; an Anchor of another tree, or
// one after another op, is applied on its own. The outcomes are those of
// applying every op in turn.
func TestAckerMergesATrackWithItsAnchors(t *testing.T) {
	a, box := ackerHarness(10, 1)
	batch := &ackerBatch{ops: []ackerOp{
		{Kind: opTrack, Root: 1, Spout: 1},
		{Kind: opAnchor, Root: 1, Edge: 0b0011},
		{Kind: opAnchor, Root: 1, Edge: 0b0101},
		{Kind: opTrack, Root: 2, Spout: 1},
		{Kind: opAnchor, Root: 1, Edge: 0b1000}, // tree 1 again, after tree 2's Track
		{Kind: opAnchor, Root: 2, Edge: 0b0001},
	}}
	a.Receive(message{msg: batch})
	if v, open := a.tracker.Value(1); !open || v != 0b1110 {
		t.Fatalf("tree 1 = (%b, %v), want (1110, open)", v, open)
	}
	if v, open := a.tracker.Value(2); !open || v != 0b0001 {
		t.Fatalf("tree 2 = (%b, %v), want (1, open)", v, open)
	}
	if a.open != 2 {
		t.Fatalf("open = %d, want 2", a.open)
	}
	for _, e := range []uint64{0b0011, 0b0101, 0b1000} {
		a.apply(ackerOp{Kind: opOk, Root: 1, Edge: e})
	}
	if f := posted(box); len(f) != 1 || len(f[0].acked) != 1 || f[0].acked[0] != 1 {
		t.Fatalf("feedback %+v, want tree 1 acked", f)
	}
}

// A batch a pool hands back keeps its last header: the first addValue
// replaces it, as the first add does.
func TestAddValueSetsTheHeaderOfItsBatch(t *testing.T) {
	s := &dsl.Stream{Name: "s"}
	b := getBatch(4)
	b.source, b.task = "stale", 99
	b.addValue(1, s, "split", 4)
	var got dsl.Tuple
	b.load(0, &got)
	if want := (dsl.Tuple{Value: 1, Stream: s, Source: "split", Task: 4}); !reflect.DeepEqual(got, want) {
		t.Errorf("tuple = %+v, want %+v", got, want)
	}
	putBatch(b)
}

// TestTupleBatchRoundTrip: a batch gives back every tuple as it was added: the
// emitter once per batch, ids only from the first tracked tuple on (the earlier
// ones load untracked), and a recycled batch forgets them.
func TestTupleBatchRoundTrip(t *testing.T) {
	s1, s2 := &dsl.Stream{Name: "s1"}, &dsl.Stream{Name: "s2"}
	in := []dsl.Tuple{
		{Value: 1, Stream: s1, Source: "split", Task: 4},
		{Value: "two", Stream: s2, Source: "split", Task: 4, ID: dsl.TupleID{Root: 7, Edge: 9, Roots: []uint64{8}}},
		{Value: 3.0, Stream: s1, Source: "split", Task: 4},
	}
	b := getBatch(8)
	for i := range in {
		b.add(&in[i])
	}
	if b.len() != len(in) {
		t.Fatalf("len %d, want %d", b.len(), len(in))
	}
	for i := range in {
		got := dsl.Tuple{ID: dsl.TupleID{Root: 99}} // load overwrites everything
		b.load(i, &got)
		if !reflect.DeepEqual(got, in[i]) {
			t.Errorf("tuple %d = %+v, want %+v", i, got, in[i])
		}
	}
	putBatch(b)
	b = getBatch(8)
	b.add(&in[0])
	var got dsl.Tuple
	b.load(0, &got)
	if got.ID.Root != 0 || got.ID.Edge != 0 || got.ID.Roots != nil || len(b.ids) != 0 {
		t.Errorf("a recycled batch loads id %+v (%d ids kept), want none", got.ID, len(b.ids))
	}
	putBatch(b)
}

// TestBoltEmitsAreCountedOncePublished: a bolt counts its emits with a plain
// add and publishes them to its stats at the end of the message.
func TestBoltEmitsAreCountedOncePublished(t *testing.T) {
	bt, _ := relayHarness(t)
	stats := bt.stats
	bt.Emit(num{1})
	bt.Emit(num{2})
	if n := stats.Emitted.Load(); n != 0 {
		t.Fatalf("emitted %d before the message ended, want 0", n)
	}
	bt.publish()
	if n := stats.Emitted.Load(); n != 2 {
		t.Errorf("emitted %d, want 2", n)
	}
}

// TestAckerMergesOnlyAnchorsIntoTheirTrack: a Track followed by a Fail of its
// tree fails it at once (the Fail is not folded in); an Ok followed by an
// Anchor of the same tree is applied in order (the Ok completes the tree
// first); a Track that ends a batch opens its tree.
func TestAckerMergesOnlyAnchorsIntoTheirTrack(t *testing.T) {
	a, box := ackerHarness(10, 1)
	a.Receive(message{msg: &ackerBatch{ops: []ackerOp{
		{Kind: opTrack, Root: 1, Spout: 1},
		{Kind: opFail, Root: 1},
	}}})
	if f := posted(box); len(f) != 1 || len(f[0].nacked) != 1 || f[0].nacked[0] != 1 {
		t.Fatalf("feedback %+v, want tree 1 nacked at once", f)
	}
	a.Receive(message{msg: &ackerBatch{ops: []ackerOp{
		{Kind: opTrack, Root: 2, Spout: 1},
		{Kind: opAnchor, Root: 2, Edge: 5},
	}}})
	a.Receive(message{msg: &ackerBatch{ops: []ackerOp{
		{Kind: opOk, Root: 2, Edge: 5},
		{Kind: opAnchor, Root: 2, Edge: 7}, // too late: the tree is complete
		{Kind: opTrack, Root: 3, Spout: 1},
	}}})
	if f := posted(box); len(f) != 1 || len(f[0].acked) != 1 || f[0].acked[0] != 2 {
		t.Fatalf("feedback %+v, want tree 2 acked", f)
	}
	if _, open := a.tracker.Value(3); !open {
		t.Error("the Track that ended a batch opened no tree")
	}
}

// TestAckerFeedbackReachesEachSpout: feedback is kept per spout task, in a
// table that grows for higher task ids.
func TestAckerFeedbackReachesEachSpout(t *testing.T) {
	inc := &incarnation{boxes: idleBoxes(3, 4)}
	a := &ackerTask{inc: inc, tracker: acker.New(10), stats: newTaskStats(3), batch: 1}
	for spout := 1; spout <= 2; spout++ {
		a.apply(ackerOp{Kind: opTrack, Root: uint64(spout), Spout: int32(spout)})
		a.apply(ackerOp{Kind: opFail, Root: uint64(spout)})
	}
	for spout := 1; spout <= 2; spout++ {
		if f := posted(inc.boxes[spout]); len(f) != 1 || len(f[0].nacked) != 1 || f[0].nacked[0] != uint64(spout) {
			t.Errorf("spout %d got %+v, want its tree nacked", spout, f)
		}
	}
}

// TestSpoutPendingReachesItsStatsPerMessage: the pending count a spout keeps
// per tracked emit and per feedback batch is published once its message ends.
func TestSpoutPendingReachesItsStatsPerMessage(t *testing.T) {
	s, _, _ := spoutHarness(t, 4)
	s.pending = 3
	if s.stats.Pending.Load() != 0 {
		t.Fatal("published before the message ended")
	}
	s.Receive(message{msg: &feedback{acked: []uint64{7}}})
	if got := s.stats.Pending.Load(); got != 2 {
		t.Errorf("pending in the stats %d, want 2 (3 open, 1 acked)", got)
	}
}

// TestAFastSourceKeepsBatchingASlowOneFlushesEachNext: a source that made more
// than slowNexts Next calls in the last flush beat bursts a whole batch; one
// that made fewer ends each burst after one Next.
func TestAFastSourceKeepsBatchingASlowOneFlushesEachNext(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perBeat   int // Next calls before the beat moves
		nextBurst int // Next calls in the burst after it
	}{
		{"fast", slowNexts + 1, 32},
		{"slow", slowNexts, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, src, _ := spoutHarness(t, 32)
			s.max = 1 << 20
			src.onNext = func() {
				if src.nexts == tc.perBeat {
					s.inc.flushEpoch.Add(1)
				}
			}
			s.turn(1) // ends when the beat moves, after perBeat calls
			if src.nexts != tc.perBeat {
				t.Fatalf("first burst: %d Next calls, want %d", src.nexts, tc.perBeat)
			}
			src.nexts, src.onNext = 0, nil
			s.turn(1)
			if src.nexts != tc.nextBurst {
				t.Errorf("next burst: %d Next calls, want %d", src.nexts, tc.nextBurst)
			}
		})
	}
}
