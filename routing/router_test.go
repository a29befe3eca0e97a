package routing_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/routing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// num and word are the streams of the test topologies.
type num struct{ N int }
type word struct{ W string }

// call is one Sink call, as recorded by recordingSink.
type call struct {
	Kind       string // "track", "anchor" or "deliver"
	Root, Edge uint64
	Task       int // deliver: destination; track: spout task
	ID         dsl.TupleID
	Value      any
}

// recordingSink is a fake routing.Sink that records every call in order, and
// a copy of every tuple delivered.
type recordingSink struct {
	calls  []call
	tuples []dsl.Tuple
}

func (s *recordingSink) Deliver(task int, t *dsl.Tuple) {
	s.calls = append(s.calls, call{Kind: "deliver", Task: task, ID: t.ID, Value: t.Value})
	s.tuples = append(s.tuples, *t)
}

func (s *recordingSink) Track(root uint64, spoutTask int) {
	s.calls = append(s.calls, call{Kind: "track", Root: root, Task: spoutTask})
}

func (s *recordingSink) Anchor(root, edge uint64) {
	s.calls = append(s.calls, call{Kind: "anchor", Root: root, Edge: edge})
}

func (s *recordingSink) Fail(root uint64) {
	s.calls = append(s.calls, call{Kind: "fail", Root: root})
}

// deliveries returns the tasks of the deliver calls, in order.
func (s *recordingSink) deliveries() []int {
	var tasks []int
	for _, c := range s.calls {
		if c.Kind == "deliver" {
			tasks = append(tasks, c.Task)
		}
	}
	return tasks
}

func none[T any]() (T, bool) { var zero T; return zero, false }

func unreliable[T any]() *dsl.SpoutSpec { return dsl.Unreliable(none[T]) }

func reliable[T any]() *dsl.SpoutSpec {
	return dsl.Reliable(func() (int, T, bool) { var zero T; return 0, zero, false }, func(int) {}, func(int) {})
}

func sink[T any]() *dsl.BoltSpec { return dsl.AutoAck(func(T, dsl.Emitter) error { return nil }) }

// compile builds a topology from define or fails the test.
func compile(t testing.TB, conf dsl.Conf, define func(b *dsl.Builder)) *routing.Plan {
	t.Helper()
	b := dsl.New("routing", conf)
	b.Streams(num{}, word{})
	define(b)
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return routing.Compile(topo)
}

// routerOf returns the router of component id's task index, with a recording sink
// and ids 100, 101, ...
func routerOf(p *routing.Plan, id string, index int) (*routing.Router, *recordingSink) {
	task := taskOf(p, tasksOf(p, id)[index])
	s := &recordingSink{}
	return p.NewRouter(task, s, ids.Sequence(100, 1)), s
}

// taskOf returns the plan's task with this id (Plan.Tasks[id-1]).
func taskOf(p *routing.Plan, id int) routing.Task { return p.Tasks[id-1] }

func tasksOf(p *routing.Plan, id string) []int { return p.Topology.Component(id).Tasks }

// taskName names a task as "split[2]#7", "__acker[0]#8" for ackers.
func taskName(t routing.Task) string {
	name := "__acker"
	if t.Component != nil {
		name = t.Component.ID
	}
	return fmt.Sprintf("%s[%d]#%d", name, t.Index, t.ID)
}

func TestCompileNumbersTasksByComponentIDThenAckers(t *testing.T) {
	p := compile(t, dsl.Conf{dsl.AckerTasks: 2}, func(b *dsl.Builder) {
		zeta := b.Spout("zeta", unreliable[num](), dsl.Parallelism(2))
		alpha := b.Bolt("alpha", sink[num](), dsl.Parallelism(3))
		mid := b.Bolt("mid", sink[num]())
		b.Anchored(zeta, alpha, dsl.Shuffle[num]())
		b.Anchored(zeta, mid, dsl.Shuffle[num]())
	})
	want := []string{"alpha[0]#1", "alpha[1]#2", "alpha[2]#3", "mid[0]#4", "zeta[0]#5", "zeta[1]#6", "__acker[0]#7", "__acker[1]#8"}
	var got []string
	for i, task := range p.Tasks {
		if task.ID != i+1 {
			t.Errorf("Tasks[%d].ID = %d, want %d", i, task.ID, i+1)
		}
		got = append(got, taskName(task))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tasks = %v, want %v", got, want)
	}
	for id, tasks := range map[string][]int{"zeta": {5, 6}, "alpha": {1, 2, 3}, "mid": {4}} {
		if got := tasksOf(p, id); !reflect.DeepEqual(got, tasks) {
			t.Errorf("tasks of %q = %v, want %v", id, got, tasks)
		}
	}
	if !reflect.DeepEqual(p.Ackers, []int{7, 8}) {
		t.Errorf("Ackers = %v, want [7 8]", p.Ackers)
	}
	if !reflect.DeepEqual(p.Ackers, p.Topology.AckerTasks) {
		t.Errorf("Ackers = %v, want the topology's acker tasks %v", p.Ackers, p.Topology.AckerTasks)
	}
	for _, id := range p.Ackers {
		if task := taskOf(p, id); task.Component != nil {
			t.Errorf("task %d = %s, want an acker (nil Component)", id, taskName(task))
		}
	}
	if len(p.Tasks) != 8 {
		t.Errorf("%d tasks, want 8", len(p.Tasks))
	}
}

// fanOut is a spout "src" feeding bolt "dst" (3 tasks) with grouping g.
func fanOut(t *testing.T, g dsl.Grouping) *routing.Plan {
	return compile(t, nil, func(b *dsl.Builder) {
		b.Anchored(b.Spout("src", unreliable[word]()), b.Bolt("dst", sink[word](), dsl.Parallelism(3)), g)
	})
}

func TestShuffleGoesRoundTheTasks(t *testing.T) {
	p := fanOut(t, dsl.Shuffle[word]())
	r, s := routerOf(p, "src", 0)
	for i := 0; i < 9; i++ {
		if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
			t.Fatal(err)
		}
	}
	got := s.deliveries()
	counts := map[int]int{}
	for i, task := range got {
		counts[task]++
		if i >= 3 && task != got[i-3] {
			t.Errorf("delivery %d went to task %d, want the cycle to repeat (%v)", i, task, got)
		}
	}
	for _, task := range tasksOf(p, "dst") {
		if counts[task] != 3 {
			t.Errorf("task %d got %d tuples, want 3 (%v)", task, counts[task], got)
		}
	}
}

func TestFieldsSendsAKeyToTheTaskItsHashPicks(t *testing.T) {
	p := fanOut(t, dsl.Fields(func(w word) string { return w.W }, "W"))
	r, s := routerOf(p, "src", 0)
	tasks := tasksOf(p, "dst")
	keys := []string{"apple", "banana", "cherry", "date", "apple", "date"}
	for _, k := range keys {
		if _, err := r.EmitSpout(word{k}, false, 0); err != nil {
			t.Fatal(err)
		}
	}
	key := p.Topology.Edges[0].Grouping.Key
	for i, task := range s.deliveries() {
		want := tasks[key(word{keys[i]})%uint64(len(tasks))]
		if task != want {
			t.Errorf("key %q went to task %d, want %d", keys[i], task, want)
		}
	}
}

func TestAllDeliversToEveryTask(t *testing.T) {
	p := fanOut(t, dsl.All[word]())
	r, s := routerOf(p, "src", 0)
	if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := s.deliveries(), tasksOf(p, "dst"); !reflect.DeepEqual(got, want) {
		t.Errorf("deliveries = %v, want %v", got, want)
	}
}

func TestGlobalDeliversToTheLowestTask(t *testing.T) {
	p := fanOut(t, dsl.Global[word]())
	r, s := routerOf(p, "src", 0)
	for i := 0; i < 4; i++ {
		if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
			t.Fatal(err)
		}
	}
	lowest := tasksOf(p, "dst")[0]
	if got := s.deliveries(); !reflect.DeepEqual(got, []int{lowest, lowest, lowest, lowest}) {
		t.Errorf("deliveries = %v, want all to %d", got, lowest)
	}
}

// directTopology: spout "src" -> bolt "relay" -> "dst" (3 tasks, direct) and,
// on word, "words" (shuffle).
func directTopology(t *testing.T) *routing.Plan {
	return compile(t, nil, func(b *dsl.Builder) {
		relay := b.Bolt("relay", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }))
		b.Anchored(b.Spout("src", unreliable[num]()), relay, dsl.Shuffle[num]())
		b.Anchored(relay, b.Bolt("dst", sink[num](), dsl.Parallelism(3)), dsl.Direct[num]())
		b.Anchored(relay, b.Bolt("words", sink[word](), dsl.Parallelism(2)), dsl.Shuffle[word]())
	})
}

func TestDirectDeliversToTheNamedTask(t *testing.T) {
	p := directTopology(t)
	r, s := routerOf(p, "relay", 0)
	dst := tasksOf(p, "dst")
	for _, task := range []int{dst[2], dst[0], dst[2]} {
		if err := r.Emit(num{1}, nil, task); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := s.deliveries(), []int{dst[2], dst[0], dst[2]}; !reflect.DeepEqual(got, want) {
		t.Errorf("deliveries = %v, want %v", got, want)
	}
}

func TestDirectMisuseIsAnEmitError(t *testing.T) {
	p := directTopology(t)
	tests := []struct {
		name   string
		tuple  any
		task   int
		reason string
	}{
		{"direct on a shuffled stream", word{"x"}, tasksOf(p, "words")[0], "EmitDirect on a stream whose subscribers do not use direct grouping"},
		{"grouped emit on a direct stream", num{1}, 0, "the stream is direct: use EmitDirect with a task id"},
		{"direct to a task outside the subscribers", num{1}, tasksOf(p, "words")[0], "does not subscribe to the stream"},
		{"a type that is no stream", struct{}{}, 0, "its type is not a stream of the topology"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, s := routerOf(p, "relay", 0)
			err := r.Emit(tt.tuple, nil, tt.task)
			var emitErr *component.EmitError
			if !errors.As(err, &emitErr) {
				t.Fatalf("Emit error = %v, want a *component.EmitError", err)
			}
			if emitErr.Component != "relay" || !strings.Contains(emitErr.Reason, tt.reason) {
				t.Errorf("EmitError = %+v, want component relay and a reason containing %q", emitErr, tt.reason)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, `component "relay" cannot emit `) || !strings.HasSuffix(msg, emitErr.Reason) {
				t.Errorf("Error() = %q, want it to name the component and end with the reason", msg)
			}
			if len(s.calls) != 0 {
				t.Errorf("a failed emit reached the sink: %+v", s.calls)
			}
		})
	}
}

func TestTrackedSpoutEmitTracksThenAnchorsEachEdgeBeforeItsDelivery(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		src := b.Spout("src", reliable[word]())
		b.Anchored(src, b.Bolt("all", sink[word](), dsl.Parallelism(2)), dsl.All[word]())
		b.Unanchored(src, b.Bolt("loose", sink[word]()), dsl.Shuffle[word]())
	})
	r, s := routerOf(p, "src", 0)
	root, err := r.EmitSpout(word{"x"}, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if root != 100 {
		t.Errorf("root = %d, want the first id, 100", root)
	}
	spoutTask, all, loose := tasksOf(p, "src")[0], tasksOf(p, "all"), tasksOf(p, "loose")[0]
	want := []call{
		{Kind: "track", Root: 100, Task: spoutTask},
		{Kind: "anchor", Root: 100, Edge: 101},
		{Kind: "deliver", Task: all[0], ID: dsl.TupleID{Root: 100, Edge: 101}, Value: word{"x"}},
		{Kind: "anchor", Root: 100, Edge: 102},
		{Kind: "deliver", Task: all[1], ID: dsl.TupleID{Root: 100, Edge: 102}, Value: word{"x"}},
		// A spout emit with a message id is tracked on every edge, as in Storm
		// and FsShelter; edge anchoring concerns bolts' emits only.
		{Kind: "anchor", Root: 100, Edge: 103},
		{Kind: "deliver", Task: loose, ID: dsl.TupleID{Root: 100, Edge: 103}, Value: word{"x"}},
	}
	if !reflect.DeepEqual(s.calls, want) {
		t.Errorf("sink calls\n got %+v\nwant %+v", s.calls, want)
	}
}

func TestUntrackedSpoutEmitOpensNoTree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conf    dsl.Conf
		tracked bool
	}{
		{"unreliable emit", nil, false},
		{"no ackers", dsl.Conf{dsl.AckerTasks: 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compile(t, tc.conf, func(b *dsl.Builder) {
				b.Anchored(b.Spout("src", reliable[word]()), b.Bolt("dst", sink[word]()), dsl.Shuffle[word]())
			})
			r, s := routerOf(p, "src", 0)
			root, err := r.EmitSpout(word{"x"}, tc.tracked, 0)
			if err != nil || root != 0 {
				t.Fatalf("EmitSpout = %d, %v; want 0, nil", root, err)
			}
			if want := []call{{Kind: "deliver", Task: tasksOf(p, "dst")[0], Value: word{"x"}}}; !reflect.DeepEqual(s.calls, want) {
				t.Errorf("sink calls %+v, want %+v", s.calls, want)
			}
		})
	}
}

func TestBoltEmitAnchorsToEveryRootOfItsAnchors(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		relay := b.Bolt("relay", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }))
		b.Anchored(b.Spout("src", unreliable[num]()), relay, dsl.Shuffle[num]())
		b.Anchored(relay, b.Bolt("dst", sink[word]()), dsl.Shuffle[word]())
	})
	r, s := routerOf(p, "relay", 0)
	firstRoots := make([]uint64, 1, 4) // spare capacity the router must not write into
	firstRoots[0] = 5
	anchors := []dsl.TupleID{
		{Root: 1, Edge: 11, Roots: firstRoots},
		{Root: 2, Edge: 12, Roots: []uint64{3, 1}}, // 1 is already a root
		{},                  // untracked: ignored
		{Root: 5, Edge: 13}, // 5 is already a root
	}
	if err := r.Emit(word{"x"}, anchors, 0); err != nil {
		t.Fatal(err)
	}
	id := dsl.TupleID{Root: 1, Edge: 100, Roots: []uint64{5, 2, 3}}
	want := []call{
		{Kind: "anchor", Root: 1, Edge: 100},
		{Kind: "anchor", Root: 5, Edge: 100},
		{Kind: "anchor", Root: 2, Edge: 100},
		{Kind: "anchor", Root: 3, Edge: 100},
		{Kind: "deliver", Task: tasksOf(p, "dst")[0], ID: id, Value: word{"x"}},
	}
	if !reflect.DeepEqual(s.calls, want) {
		t.Errorf("sink calls\n got %+v\nwant %+v", s.calls, want)
	}
	if spare := firstRoots[:4]; spare[1] != 0 || spare[2] != 0 {
		t.Errorf("the router wrote into an input's Roots: %v", spare)
	}
}

func TestBoltEmitWithUntrackedAnchorsIsUntracked(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		relay := b.Bolt("relay", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }))
		b.Anchored(b.Spout("src", unreliable[num]()), relay, dsl.Shuffle[num]())
		b.Anchored(relay, b.Bolt("dst", sink[word]()), dsl.Shuffle[word]())
	})
	r, s := routerOf(p, "relay", 0)
	if err := r.Emit(word{"x"}, []dsl.TupleID{{}}, 0); err != nil {
		t.Fatal(err)
	}
	if want := []call{{Kind: "deliver", Task: tasksOf(p, "dst")[0], Value: word{"x"}}}; !reflect.DeepEqual(s.calls, want) {
		t.Errorf("sink calls %+v, want %+v", s.calls, want)
	}
}

func TestNoSubscriberMeansNothingDeliveredOrTracked(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		relay := b.Bolt("relay", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }))
		b.Anchored(b.Spout("src", reliable[num]()), relay, dsl.Shuffle[num]())
		b.Spout("lonely", reliable[word]()) // nobody subscribes to its stream
	})
	r, s := routerOf(p, "lonely", 0)
	root, err := r.EmitSpout(word{"x"}, true, 0)
	if err != nil || root != 0 {
		t.Errorf("EmitSpout to no subscriber = %d, %v; want 0 (complete at once), nil", root, err)
	}
	br, bs := routerOf(p, "relay", 0)
	if err := br.Emit(word{"x"}, []dsl.TupleID{{Root: 1, Edge: 2}}, 0); err != nil {
		t.Errorf("bolt Emit to no subscriber: %v", err)
	}
	if len(s.calls)+len(bs.calls) != 0 {
		t.Errorf("sink calls for a stream nobody subscribes to: %+v %+v", s.calls, bs.calls)
	}
}

// TestDeliveredTuplesNameTheirEmitterAndStream: the header a sink copies
// carries the emitting component and task and the tuple's stream, whichever
// stream was emitted last (the router looks the last one up first).
func TestDeliveredTuplesNameTheirEmitterAndStream(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		relay := b.Bolt("relay", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
		b.Anchored(b.Spout("src", unreliable[num]()), relay, dsl.Shuffle[num]())
		b.Anchored(relay, b.Bolt("nums", sink[num]()), dsl.Shuffle[num]())
		b.Anchored(relay, b.Bolt("words", sink[word]()), dsl.Shuffle[word]())
	})
	r, s := routerOf(p, "relay", 1)
	emitter := tasksOf(p, "relay")[1]
	emits := []any{num{1}, word{"a"}, word{"b"}, num{2}}
	for _, v := range emits {
		if err := r.Emit(v, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := map[reflect.Type]string{reflect.TypeFor[num](): "nums", reflect.TypeFor[word](): "words"}
	if len(s.tuples) != len(emits) {
		t.Fatalf("%d tuples delivered, want %d", len(s.tuples), len(emits))
	}
	for i, tu := range s.tuples {
		if tu.Source != "relay" || tu.Task != emitter {
			t.Errorf("tuple %d from %s#%d, want relay#%d", i, tu.Source, tu.Task, emitter)
		}
		if tu.Stream == nil || tu.Stream.Type != reflect.TypeOf(emits[i]) || tu.Value != emits[i] {
			t.Errorf("tuple %d = %+v on stream %v, want %v on %T's stream", i, tu.Value, tu.Stream, emits[i], emits[i])
		}
		if got := s.calls[i].Task; got != tasksOf(p, want[reflect.TypeOf(emits[i])])[0] {
			t.Errorf("tuple %d went to task %d, want %s's", i, got, want[reflect.TypeOf(emits[i])])
		}
	}
}

// TestShuffleStartsWhereTheEmittingTaskIndexPoints: emitting tasks of one
// component start their round robin at different targets (index+1), so that
// a few tuples each do not all land on the first task.
func TestShuffleStartsWhereTheEmittingTaskIndexPoints(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		src := b.Spout("src", unreliable[word](), dsl.Parallelism(3))
		b.Anchored(src, b.Bolt("dst", sink[word](), dsl.Parallelism(4)), dsl.Shuffle[word]())
		b.Anchored(src, b.Bolt("three", sink[word](), dsl.Parallelism(3)), dsl.Shuffle[word]())
	})
	dst, three := tasksOf(p, "dst"), tasksOf(p, "three")
	for index := 0; index < 3; index++ {
		r, s := routerOf(p, "src", index)
		for range 2 {
			if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
				t.Fatal(err)
			}
		}
		// dst is the first subscription (j=0), three the second (j=1).
		want := []int{dst[(index+1)%4], three[(index+2)%3], dst[(index+2)%4], three[(index+3)%3]}
		if got := s.deliveries(); !reflect.DeepEqual(got, want) {
			t.Errorf("task index %d delivered to %v, want %v", index, got, want)
		}
	}
}

// TestAPanickingKeyFailsTheSpoutTuplesTree: a grouping key that panics is user
// code: the spout emit returns an error naming the stream and fails the tree
// it tracked (once, with the same root); a key that does not panic opens and
// fails nothing.
func TestAPanickingKeyFailsTheSpoutTuplesTree(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		b.Anchored(b.Spout("src", reliable[word]()), b.Bolt("dst", sink[word](), dsl.Parallelism(2)),
			dsl.Fields(func(w word) string {
				if w.W == "" {
					panic("no key")
				}
				return w.W
			}, "W"))
	})
	r, s := routerOf(p, "src", 0)
	root, err := r.EmitSpout(word{"ok"}, true, 0)
	if err != nil || root == 0 {
		t.Fatalf("EmitSpout = %d, %v; want a tree and no error", root, err)
	}
	for _, c := range s.calls {
		if c.Kind == "fail" {
			t.Fatalf("a routed tuple failed its tree: %+v", s.calls)
		}
	}
	s.calls = nil
	root, err = r.EmitSpout(word{""}, true, 0)
	var emitErr *component.EmitError
	if !errors.As(err, &emitErr) || !strings.Contains(emitErr.Reason, "no key") || emitErr.Stream != "word" {
		t.Fatalf("EmitSpout error = %v, want an EmitError on stream word with the panic", err)
	}
	want := []call{{Kind: "track", Root: root, Task: tasksOf(p, "src")[0]}, {Kind: "fail", Root: root}}
	if root == 0 || !reflect.DeepEqual(s.calls, want) {
		t.Errorf("root %d, sink calls %+v; want %+v", root, s.calls, want)
	}
}

// rootedIDs numbers roots apart from its other ids, as the runtime's source
// does (ids.Roots).
type rootedIDs struct{ root, id uint64 }

func (r *rootedIDs) Next() uint64     { r.id++; return r.id }
func (r *rootedIDs) NextRoot() uint64 { r.root++; return r.root }

// A source that numbers roots apart gives a spout's trees their roots, also
// the tree of a tuple that cannot be routed, and its other ids the edges.
func TestSpoutRootsComeFromTheRootSequence(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		b.Anchored(b.Spout("src", reliable[word]()), b.Bolt("dst", sink[word]()), dsl.Shuffle[word]())
	})
	task := tasksOf(p, "src")[0]
	s := &recordingSink{}
	r := p.NewRouter(taskOf(p, task), s, &rootedIDs{root: 1000, id: 100})
	first, err := r.EmitSpout(word{"x"}, true, 0)
	if err != nil || first != 1001 {
		t.Fatalf("first root %d, %v; want 1001, the root sequence's", first, err)
	}
	if second, _ := r.EmitSpout(word{"y"}, true, 0); second != 1002 {
		t.Errorf("second root %d, want 1002", second)
	}
	if failed, err := r.EmitSpout(3.5, true, 0); err == nil || failed != 1003 {
		t.Errorf("an unroutable tuple's tree %d (%v), want 1003 and an error", failed, err)
	}
	if got := s.calls[1]; got.Kind != "anchor" || got.Root != 1001 || got.Edge != 101 {
		t.Errorf("the first edge %+v, want anchor 101 in tree 1001", got)
	}
}
