package actors

import (
	"errors"
	"reflect"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/internal/trace"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// autoAckHarness is the auto-ack bolt task "relay" of source -> relay ->
// sink, all unanchored, running handle, with its router and outbox; nobody
// runs the mailboxes.
func autoAckHarness(t *testing.T, handle func(num, dsl.Emitter) error) (*boltTask, *incarnation, *observer.ObservedLogs) {
	t.Helper()
	b := dsl.New("untracked", nil)
	relay := b.Bolt("relay", dsl.AutoAck(handle))
	b.Unanchored(b.Spout("source", dsl.Unreliable(func() (num, bool) { return num{}, false })), relay, dsl.Shuffle[num]())
	b.Unanchored(relay, b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	inc := &incarnation{plan: plan, gauge: newGauge()}
	inc.boxes = idleBoxes(len(plan.Tasks)+1, 8)
	task := plan.Tasks[plan.Topology.Component("relay").Tasks[0]-1]
	stats := newTaskStats(len(inc.boxes))
	out := newOutbox(inc, task.ID, 64, stats)
	core, logs := observer.New(zapcore.ErrorLevel)
	bt := &boltTask{inc: inc, task: task, out: out, stats: stats, log: zap.New(core),
		router: plan.NewRouter(task, out, ids.Sequence(1, 1))}
	bt.impl = newBoltTask(task.Component, dsl.TaskInfo{})
	bt.auto, _ = bt.impl.(interface {
		ExecuteAuto(*dsl.Tuple, dsl.Collector) (bool, error)
	})
	return bt, inc, logs
}

var errBadInput = errors.New("bad input")

// untrackedBatch is n untracked inputs num{0} to num{n-1} from the harness's
// spout.
func untrackedBatch(inc *incarnation, n int) *tupleBatch {
	source := inc.plan.Topology.Component("source")
	batch := getBatch(n)
	for i := range n {
		batch.addValue(num{i}, inc.plan.Topology.Streams[0], source.ID, source.Tasks[0])
	}
	return batch
}

// What an untracked batch's execution left behind, for comparing the short
// path with the general one.
type untrackedOutcome struct {
	Executed []int
	Acked    int64
	Failures int
	Samples  int64
	Emitted  []dsl.Tuple
}

// An untracked batch of an auto-ack bolt takes executeUntracked, which skips
// the per-input steps of execute and ack that look at trees, checkpoints and
// traces. Its outcome must be the general path's, around the inputs the
// process sampler picks (0, 31, 62 and 93 of 100) and around panics and errors
// on either kind of input: each input runs once, in order, and only the
// handled ones are acked. A trace function turns the short path off, so the
// same batch through a traced bolt is the general path.
func TestAnUntrackedBatchEndsAsTheGeneralPathEndsIt(t *testing.T) {
	run := func(traced bool) untrackedOutcome {
		var executed []int
		bt, inc, logs := autoAckHarness(t, func(in num, out dsl.Emitter) error {
			executed = append(executed, in.N)
			out.Emit(in)
			switch in.N {
			case 31, 40: // a sampled input and a short-path one
				panic("bad input")
			case 62, 70:
				return errBadInput
			}
			return nil
		})
		if traced {
			bt.trace.fn = func(trace.Event) {}
		}
		if got := bt.untracked(untrackedBatch(inc, 1)); got == traced {
			t.Fatalf("traced %v: untracked reports %v", traced, got)
		}
		bt.executeAll(untrackedBatch(inc, 100))
		if bt.input != nil || !reflect.DeepEqual(bt.in, dsl.Tuple{}) {
			t.Errorf("traced %v: the bolt keeps its last input: %+v", traced, bt.in)
		}
		sink := inc.plan.Topology.Component("sink").Tasks[0]
		return untrackedOutcome{Executed: executed, Acked: bt.acked, Failures: logs.Len(),
			Samples: bt.stats.ProcessSamples.Load(), Emitted: sentTuples(bt.out, inc, sink)}
	}
	short, general := run(false), run(true)
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	if !reflect.DeepEqual(short.Executed, want) {
		t.Errorf("executed %v, want each of 0 to 99 once, in order", short.Executed)
	}
	// 2 of the sampled inputs are acked (0 and 93): 31 panics and 62 fails.
	if short.Acked != 96 || short.Failures != 4 || short.Samples != 2 || len(short.Emitted) != 100 {
		t.Errorf("acked %d, failures logged %d, samples %d, emitted %d; want 96, 4, 2, 100",
			short.Acked, short.Failures, short.Samples, len(short.Emitted))
	}
	if !reflect.DeepEqual(short, general) {
		t.Errorf("the short path ended the batch as %+v, the general one as %+v", short, general)
	}
}

// Behind slow inputs, what the earlier ones emitted leaves as soon as the
// flush beat moves, not at the end of the batch, on the short path too.
func TestAnUntrackedBatchFlushesWhenTheBeatMoves(t *testing.T) {
	var inc *incarnation
	waiting := -1 // the batches on the sink's lane when input 6 began
	var bt *boltTask
	bt, inc, _ = autoAckHarness(t, func(in num, out dsl.Emitter) error {
		sink := inc.plan.Topology.Component("sink").Tasks[0]
		switch in.N {
		case 5:
			inc.flushEpoch.Add(1) // input 5 was slow
		case 6:
			waiting = inc.boxes[sink].data.len()
		}
		out.Emit(in)
		return nil
	})
	bt.executeAll(untrackedBatch(inc, 10))
	if waiting != 1 {
		t.Errorf("%d batches waited for the sink when input 6 began, want 1 (inputs 0 to 5's emits)", waiting)
	}
}
