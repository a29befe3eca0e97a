package actors

import (
	"reflect"
	"testing"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/routing"
)

// sentTuples flushes o and returns the tuples it sent to task, in order.
func sentTuples(o *outbox, inc *incarnation, task int) []dsl.Tuple {
	o.flush()
	var out []dsl.Tuple
	for m := inc.boxes[task].data.take(); m != nil; m = inc.boxes[task].data.take() {
		b := m.(*tupleBatch)
		for i := range b.len() {
			var t dsl.Tuple
			b.load(i, &t)
			out = append(out, t)
		}
	}
	return out
}

// Untracked emits skip the general route (routing.Router.Unicast) and append
// their values to the batch themselves: what arrives must be what the general
// route would deliver, in a batch shared with tracked tuples too.
func TestUntrackedSpoutEmitsArriveAsRoutedOnes(t *testing.T) {
	b := dsl.New("unicast", nil)
	spout := b.Spout("source", dsl.Reliable(func() (int, num, bool) { return 0, num{}, false }, func(int) {}, func(int) {}))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	inc := &incarnation{plan: plan, gauge: newGauge()}
	inc.boxes = idleBoxes(len(plan.Tasks)+1, 8)
	task := plan.Tasks[plan.Topology.Component("source").Tasks[0]-1]
	o := newOutbox(inc, task.ID, 64, newTaskStats(len(inc.boxes)))
	s := &spoutTask{inc: inc, task: task, out: o, stats: newTaskStats(len(inc.boxes)), active: true, max: 10, log: zap.NewNop()}
	s.router = inc.plan.NewRouter(s.task, o, ids.Sequence(100, 1))
	stream := inc.plan.Topology.Streams[0]
	tracked := []bool{false, false, true, false, false}
	for i, tr := range tracked {
		root := s.Emit(num{i}, tr)
		if (root != 0) != tr {
			t.Fatalf("emit %d (tracked %v) gave root %d", i, tr, root)
		}
	}
	sinks := inc.plan.Topology.Component("sink").Tasks
	// A direct emit on a stream grouped by shuffle fails (logged), on the
	// short path's stream too: nothing of it arrives.
	if root := s.EmitDirect(sinks[0], num{9}, false); root != 0 {
		t.Errorf("an untracked direct emit gave root %d", root)
	}
	// Shuffle alternates from the spout's start: 0, 2, 4 to one task, 1, 3 to the other.
	got := map[int][]dsl.Tuple{}
	for _, task := range sinks {
		got[task] = sentTuples(o, inc, task)
	}
	var first, second []dsl.Tuple
	for _, ts := range got {
		if len(ts) == 3 {
			first = ts
		} else {
			second = ts
		}
	}
	if len(first) != 3 || len(second) != 2 {
		t.Fatalf("deliveries %d and %d, want 3 and 2 (shuffle over 2 tasks)", len(first), len(second))
	}
	header := dsl.Tuple{Stream: stream, Source: "source", Task: s.task.ID}
	want := func(v int) dsl.Tuple { h := header; h.Value = num{v}; return h }
	if !reflect.DeepEqual(second, []dsl.Tuple{want(1), want(3)}) {
		t.Errorf("untracked tuples arrived as %+v, want %+v", second, []dsl.Tuple{want(1), want(3)})
	}
	for i, v := range []int{0, 2, 4} {
		w := want(v)
		if v == 2 { // the tracked one: its tree's root and a fresh edge
			if first[i].ID.Root == 0 || first[i].ID.Edge == 0 {
				t.Errorf("the tracked tuple arrived with id %+v, want a root and an edge", first[i].ID)
			}
			w.ID = first[i].ID
		}
		if !reflect.DeepEqual(first[i], w) {
			t.Errorf("tuple %d arrived as %+v, want %+v", v, first[i], w)
		}
	}
	if s.emitted != int64(len(tracked)+1) { // the failed one counts too
		t.Errorf("counted %d emits, want %d", s.emitted, len(tracked)+1)
	}
}

// relayHarness is autoAckHarness's bolt with a handler that does nothing.
func relayHarness(t *testing.T) (*boltTask, *incarnation) {
	bt, inc, _ := autoAckHarness(t, func(num, dsl.Emitter) error { return nil })
	return bt, inc
}

func TestUnanchoredBoltEmitsArriveAsRoutedOnes(t *testing.T) {
	bt, inc := relayHarness(t)
	plan, task, out := inc.plan, bt.task, bt.out
	sink := plan.Topology.Component("sink").Tasks[0]
	// The first emit finds the stream, the second takes Unicast; EmitTasks
	// records the task either way.
	bt.Emit(num{1})
	if got := out.record(nil, func() { bt.Emit(num{2}) }); !reflect.DeepEqual(got, []int{sink}) {
		t.Errorf("recorded tasks %v, want [%d]", got, sink)
	}
	// A direct emit on a stream grouped by shuffle is the handler's error:
	// it panics (executeFrom fails the input), and nothing of it arrives.
	func() {
		defer func() {
			if _, ok := recover().(*component.EmitError); !ok {
				t.Error("a direct emit on a shuffle stream did not panic with an EmitError")
			}
		}()
		bt.EmitDirect(sink, num{3})
	}()
	h := dsl.Tuple{Stream: plan.Topology.Streams[0], Source: "relay", Task: task.ID}
	want := []dsl.Tuple{h, h}
	want[0].Value, want[1].Value = num{1}, num{2}
	if got := sentTuples(out, inc, sink); !reflect.DeepEqual(got, want) {
		t.Errorf("the bolt's emits arrived as %+v, want %+v", got, want)
	}
	if bt.emitted != 2 {
		t.Errorf("counted %d emits, want 2", bt.emitted)
	}
}
