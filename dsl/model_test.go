package dsl_test

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

type numIn struct{ N int }

func noNums() (numIn, bool) { return numIn{}, false }

func nopBolt() *dsl.BoltSpec { return dsl.AutoAck(func(numIn, dsl.Emitter) error { return nil }) }

func TestBuildNumbersTasksByComponentIDThenAckers(t *testing.T) {
	b := dsl.New("numbering", dsl.Conf{dsl.AckerTasks: 2})
	zeta := b.Spout("zeta", dsl.Unreliable(noNums), dsl.Parallelism(2))
	alpha := b.Bolt("alpha", nopBolt(), dsl.Parallelism(3))
	mid := b.Bolt("mid", nopBolt())
	b.Anchored(zeta, alpha, dsl.Shuffle[numIn]())
	b.Anchored(zeta, mid, dsl.Shuffle[numIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Components keep their definition order; task ids follow the ids' byte order.
	want := map[string][]int{"alpha": {1, 2, 3}, "mid": {4}, "zeta": {5, 6}}
	for i, c := range topo.Components {
		if c.Index != i {
			t.Errorf("component %q has Index %d, want %d", c.ID, c.Index, i)
		}
		if !reflect.DeepEqual(c.Tasks, want[c.ID]) {
			t.Errorf("component %q Tasks = %v, want %v", c.ID, c.Tasks, want[c.ID])
		}
		if len(c.Tasks) != c.Parallelism {
			t.Errorf("component %q has %d tasks, parallelism %d", c.ID, len(c.Tasks), c.Parallelism)
		}
	}
	if !reflect.DeepEqual(topo.AckerTasks, []int{7, 8}) {
		t.Errorf("AckerTasks = %v, want [7 8]", topo.AckerTasks)
	}
}

func TestBuildWithoutAckersHasNoAckerTasks(t *testing.T) {
	b := dsl.New("no-ackers", dsl.Conf{dsl.AckerTasks: 0})
	b.Anchored(b.Spout("s", dsl.Unreliable(noNums)), b.Bolt("b", nopBolt(), dsl.Parallelism(2)), dsl.Shuffle[numIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.AckerTasks) != 0 {
		t.Errorf("AckerTasks = %v, want none", topo.AckerTasks)
	}
	if got := topo.Component("b").Tasks; !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("tasks of b = %v, want [1 2]", got)
	}
	if got := topo.Component("s").Tasks; !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("tasks of s = %v, want [3]", got)
	}
}

// A Terminator fails every input: Build rejects it where its inputs can be
// tracked (from a reliable spout, on any edge) and accepts it where nothing
// is, whatever the edge's anchoring (an unreliable spout's, anchored or not).
func TestBuildRejectsATerminatorOnATrackedEdge(t *testing.T) {
	build := func(reliable, anchored bool) error {
		b := dsl.New("sink", nil)
		spec := dsl.Unreliable(noNums)
		if reliable {
			spec = dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {})
		}
		spout := b.Spout("numbers", spec)
		sink := b.Bolt("sink", dsl.Terminator(func(numIn) {}))
		if anchored {
			b.Anchored(spout, sink, dsl.Shuffle[numIn]())
		} else {
			b.Unanchored(spout, sink, dsl.Shuffle[numIn]())
		}
		_, err := b.Build()
		return err
	}
	for _, anchored := range []bool{false, true} {
		if err := build(false, anchored); err != nil {
			t.Fatalf("a Terminator fed by an unreliable spout (anchored %v): %v", anchored, err)
		}
		err := build(true, anchored)
		var invalid *dsl.ValidationError
		if !errors.As(err, &invalid) {
			t.Fatalf("a Terminator fed by a reliable spout (anchored %v): error %v, want a *dsl.ValidationError", anchored, err)
		}
		want := `edge "numbers" -> "sink": bolt "sink" is a Terminator`
		if len(invalid.Problems) != 1 || !strings.Contains(invalid.Problems[0], want) {
			t.Errorf("problems %q, want one containing %q", invalid.Problems, want)
		}
	}
}

func TestBuildReportsTheDestinationsKind(t *testing.T) {
	problems := func(define func(b *dsl.Builder, spout string)) []string {
		b := dsl.New("destinations", nil)
		define(b, b.Spout("s", dsl.Unreliable(noNums)))
		_, err := b.Build()
		var invalid *dsl.ValidationError
		if !errors.As(err, &invalid) {
			t.Fatalf("Build error %v, want a *dsl.ValidationError", err)
		}
		return invalid.Problems
	}
	got := problems(func(b *dsl.Builder, s string) { b.Anchored(s, b.Bolt("x", nil), dsl.Shuffle[numIn]()) })
	if want := []string{`bolt "x" has no definition (nil spec)`}; !reflect.DeepEqual(got, want) {
		t.Errorf("an edge to a bolt without a spec: problems %q, want only %q", got, want)
	}
	got = problems(func(b *dsl.Builder, s string) {
		b.Anchored(s, b.Spout("t", dsl.Unreliable(noNums)), dsl.Shuffle[numIn]())
	})
	if want := `edge "s" -> "t": destination "t" is a spout; only bolts subscribe to streams`; len(got) != 1 || got[0] != want {
		t.Errorf("an edge to a spout: problems %q, want only %q", got, want)
	}
}

func TestBuildQuotesTheComponentsOfACycle(t *testing.T) {
	b := dsl.New("cycle", nil)
	spout := b.Spout("s", dsl.Unreliable(noNums))
	relay := func(in numIn, out dsl.Emitter) error { out.Emit(in); return nil }
	x := b.Bolt("x", dsl.AutoAck(relay))
	y := b.Bolt("y", dsl.AutoAck(relay))
	b.Anchored(spout, x, dsl.Shuffle[numIn]())
	b.Anchored(x, y, dsl.Shuffle[numIn]())
	b.Anchored(y, x, dsl.Shuffle[numIn]())
	_, err := b.Build()
	if err == nil || !strings.Contains(err.Error(), `cycle "x" -> "y" -> "x": topologies must be acyclic`) {
		t.Errorf("Build error %v, want the cycle with quoted ids", err)
	}
}

func TestIsTickChecksTheValue(t *testing.T) {
	stream := &dsl.Stream{Name: "Tick", Type: reflect.TypeFor[dsl.Tick]()}
	tests := []struct {
		name string
		in   dsl.Tuple
		want bool
	}{
		{"a tick from the system", dsl.Tuple{Value: dsl.Tick{RateSecs: 1, Period: time.Second}, Source: "__system", Task: -1}, true},
		{"a zero tick", dsl.Tuple{Value: dsl.Tick{}}, true},
		{"an activation tuple (no stream, another value)", dsl.Tuple{Value: numIn{1}, Source: "__system", Task: -1}, false},
		{"a Tick value on a user stream", dsl.Tuple{Value: dsl.Tick{RateSecs: 1}, Stream: stream}, false},
		{"a pointer to a Tick", dsl.Tuple{Value: &dsl.Tick{}}, false},
		{"no value", dsl.Tuple{}, false},
	}
	for _, tt := range tests {
		if got := tt.in.IsTick(); got != tt.want {
			t.Errorf("%s: IsTick() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTaskInfoContext(t *testing.T) {
	var info dsl.TaskInfo
	if info.Context() == nil || info.Context().Done() != nil {
		t.Fatalf("a zero TaskInfo's Context = %v, want a context that never ends", info.Context())
	}
	ctx, cancel := context.WithCancel(context.Background())
	with := info.WithContext(ctx)
	if with.Context() != ctx {
		t.Errorf("WithContext(ctx).Context() = %v, want ctx", with.Context())
	}
	if info.Context() == ctx {
		t.Error("WithContext changed the TaskInfo it was called on")
	}
	cancel()
	select {
	case <-with.Context().Done():
	default:
		t.Error("the task's Context did not end with ctx")
	}
}

// collector is a fake dsl.Collector that records what a bolt task does.
type collector struct {
	emitted []any
	anchors [][]dsl.Tuple
	acked   []dsl.Tuple
	failed  []dsl.Tuple
}

func (c *collector) Emit(tuple any)                    { c.emitted = append(c.emitted, tuple) }
func (c *collector) EmitDirect(_ int, tuple any)       { c.emitted = append(c.emitted, tuple) }
func (c *collector) Ack(in dsl.Tuple)                  { c.acked = append(c.acked, in) }
func (c *collector) Fail(in dsl.Tuple)                 { c.failed = append(c.failed, in) }
func (c *collector) EmitAnchored(a []dsl.Tuple, v any) { c.EmitDirectAnchored(0, a, v) }

// EmitDirectAnchored copies the anchors, as the runtime reads them at once:
// the caller may reuse the slice.
func (c *collector) EmitDirectAnchored(_ int, a []dsl.Tuple, v any) {
	if a != nil {
		a = append([]dsl.Tuple{}, a...)
	}
	c.anchors = append(c.anchors, a)
	c.Emit(v)
}

func boltTask(t *testing.T, spec *dsl.BoltSpec) component.BoltTask {
	t.Helper()
	task, ok := spec.NewTask(dsl.TaskInfo{Component: "bolt"}).(component.BoltTask)
	if !ok {
		t.Fatalf("%s bolt's NewTask made a %T, not a component.BoltTask", spec.Kind, spec.NewTask(dsl.TaskInfo{}))
	}
	return task
}

// ticking is an auto-ack and manual handler that also wants tick tuples.
type ticking struct{ ticks []dsl.Tick }

func (h *ticking) Execute(numIn, dsl.Emitter) error { return nil }
func (h *ticking) Tick(tk dsl.Tick, _ dsl.Collector) error {
	h.ticks = append(h.ticks, tk)
	return nil
}

type manualTicking struct{ ticking }

func (h *manualTicking) Execute(_ numIn, in dsl.Tuple, c dsl.Collector) error {
	c.Emit(numIn{99})
	return nil // acks later
}

func TestBoltTasksAckAndFailAsTheirKindSays(t *testing.T) {
	in := dsl.Tuple{Value: numIn{1}, ID: dsl.TupleID{Root: 1, Edge: 2}}
	boom := errors.New("boom")
	tests := []struct {
		name          string
		spec          *dsl.BoltSpec
		kind          string
		wantErr       error
		acked, failed int
	}{
		{"auto-ack acks after a nil error", dsl.AutoAck(func(n numIn, out dsl.Emitter) error { out.Emit(n); return nil }), "auto-ack", nil, 1, 0},
		{"auto-ack fails on an error", dsl.AutoAck(func(numIn, dsl.Emitter) error { return boom }), "auto-ack", boom, 0, 1},
		{"terminator fails its input", dsl.Terminator(func(numIn) {}), "terminator", nil, 0, 1},
		{"manual leaves the ack to the handler", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[numIn] { return &manualTicking{} }), "manual", nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.Kind != tt.kind || tt.spec.Input != reflect.TypeFor[numIn]() {
				t.Errorf("spec kind %q, input %v; want %q, numIn", tt.spec.Kind, tt.spec.Input, tt.kind)
			}
			c := &collector{}
			err := boltTask(t, tt.spec).Execute(&in, c)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Execute error %v, want %v", err, tt.wantErr)
			}
			if len(c.acked) != tt.acked || len(c.failed) != tt.failed {
				t.Errorf("acked %d, failed %d; want %d, %d", len(c.acked), len(c.failed), tt.acked, tt.failed)
			}
		})
	}
}

func TestBoltTasksFailAnInputOfTheWrongType(t *testing.T) {
	for _, spec := range []*dsl.BoltSpec{
		nopBolt(),
		dsl.Terminator(func(numIn) {}),
		dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[numIn] { return &manualTicking{} }),
	} {
		c := &collector{}
		err := boltTask(t, spec).Execute(&dsl.Tuple{Value: "not a numIn"}, c)
		if err == nil || !strings.Contains(err.Error(), "input of type string is not dsl_test.numIn") {
			t.Errorf("%s: Execute error %v, want one naming both types", spec.Kind, err)
		}
		if len(c.failed) != 1 || len(c.acked) != 0 {
			t.Errorf("%s: acked %d, failed %d; want the input failed once", spec.Kind, len(c.acked), len(c.failed))
		}
	}
}

func TestTicksReachHandlersThatAreTickers(t *testing.T) {
	tick := dsl.Tuple{Value: dsl.Tick{RateSecs: 1, Period: 500 * time.Millisecond}, Source: "__system", Task: -1}
	auto := &ticking{}
	manual := &manualTicking{}
	for _, spec := range []*dsl.BoltSpec{
		dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[numIn] { return auto }),
		dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[numIn] { return manual }),
		nopBolt(), // not a Ticker: the tick is dropped
	} {
		c := &collector{}
		if err := boltTask(t, spec).Execute(&tick, c); err != nil {
			t.Errorf("%s: Execute(tick) = %v", spec.Kind, err)
		}
		if len(c.acked)+len(c.failed)+len(c.emitted) != 0 {
			t.Errorf("%s: a tick was acked, failed or emitted: %+v", spec.Kind, c)
		}
	}
	want := []dsl.Tick{{RateSecs: 1, Period: 500 * time.Millisecond}}
	if !reflect.DeepEqual(auto.ticks, want) || !reflect.DeepEqual(manual.ticks, want) {
		t.Errorf("ticks: auto-ack %v, manual %v; want %v each", auto.ticks, manual.ticks, want)
	}
}

// spoutEmitter is a fake component.SpoutEmitter that hands out roots 1, 2, ...
// for tracked emits, or 0 when untracked says nobody tracks the tuple.
type spoutEmitter struct {
	untracked bool
	next      uint64
	emitted   []any
	tracked   []bool
}

func (e *spoutEmitter) Emit(tuple any, tracked bool) uint64 {
	e.emitted, e.tracked = append(e.emitted, tuple), append(e.tracked, tracked)
	if e.untracked {
		return 0
	}
	e.next++
	return e.next
}

// recordingSource is a dsl.Source and dsl.Activator that hands out "a", "b", ...
type recordingSource struct {
	queue                   []string
	acked, nacked, activity []string
}

func (s *recordingSource) Next() (string, numIn, bool) {
	if len(s.queue) == 0 {
		return "", numIn{}, false
	}
	id := s.queue[0]
	s.queue = s.queue[1:]
	return id, numIn{len(id)}, true
}
func (s *recordingSource) Ack(id string)  { s.acked = append(s.acked, id) }
func (s *recordingSource) Nack(id string) { s.nacked = append(s.nacked, id) }
func (s *recordingSource) Activate()      { s.activity = append(s.activity, "activate") }
func (s *recordingSource) Deactivate()    { s.activity = append(s.activity, "deactivate") }

func spoutTask(t *testing.T, spec *dsl.SpoutSpec) component.SpoutTask {
	t.Helper()
	task, ok := spec.NewTask(dsl.TaskInfo{Settings: dsl.Settings{MaxSpoutPending: 8}}).(component.SpoutTask)
	if !ok {
		t.Fatalf("%s spout's NewTask does not make a component.SpoutTask", spec.Kind)
	}
	return task
}

func TestReliableTaskMapsRootsToMessageIDs(t *testing.T) {
	src := &recordingSource{queue: []string{"a", "b", "c", "d"}}
	spec := dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[string, numIn] { return src })
	if !spec.Reliable || spec.Kind != "reliable" || spec.Output != reflect.TypeFor[numIn]() {
		t.Fatalf("spec = %+v", spec)
	}
	task := spoutTask(t, spec)
	act, ok := task.(interface {
		Activate()
		Deactivate()
	})
	if !ok {
		t.Fatal("a reliable task does not pass activation on")
	}
	act.Activate()
	e := &spoutEmitter{}
	for range 4 {
		if !task.Next(e) {
			t.Fatal("Next found nothing with messages queued")
		}
	}
	if task.Next(e) {
		t.Fatal("Next found a message in an empty source")
	}
	if !reflect.DeepEqual(e.tracked, []bool{true, true, true, true}) {
		t.Errorf("emits tracked = %v, want all tracked", e.tracked)
	}
	task.Ack(2)    // b
	task.Nack(1)   // a
	task.Ack(2)    // again: already settled
	task.Ack(99)   // unknown root
	task.Abandon() // c and d
	act.Deactivate()
	if !reflect.DeepEqual(src.acked, []string{"b"}) {
		t.Errorf("acked %v, want [b]", src.acked)
	}
	if len(src.nacked) != 3 || src.nacked[0] != "a" || !sameSet(src.nacked[1:], []string{"c", "d"}) {
		t.Errorf("nacked %v, want a, then c and d (abandoned)", src.nacked)
	}
	if !reflect.DeepEqual(src.activity, []string{"activate", "deactivate"}) {
		t.Errorf("activity %v", src.activity)
	}
}

func TestReliableTaskAcksAMessageNobodyTracks(t *testing.T) {
	src := &recordingSource{queue: []string{"a"}}
	task := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[string, numIn] { return src }))
	task.Next(&spoutEmitter{untracked: true})
	if !reflect.DeepEqual(src.acked, []string{"a"}) {
		t.Errorf("acked %v, want [a] at once", src.acked)
	}
	task.Abandon()
	if len(src.nacked) != 0 {
		t.Errorf("nacked %v after Abandon, want nothing pending", src.nacked)
	}
}

func TestUnreliableTaskEmitsUntracked(t *testing.T) {
	n := 0
	spec := dsl.Unreliable(func() (numIn, bool) { n++; return numIn{n}, n <= 2 })
	if spec.Reliable || spec.Kind != "unreliable" {
		t.Fatalf("spec = %+v", spec)
	}
	task := spoutTask(t, spec)
	e := &spoutEmitter{}
	for task.Next(e) {
	}
	if !reflect.DeepEqual(e.emitted, []any{numIn{1}, numIn{2}}) || !reflect.DeepEqual(e.tracked, []bool{false, false}) {
		t.Errorf("emitted %v tracked %v, want two untracked emits", e.emitted, e.tracked)
	}
	task.Ack(1)
	task.Nack(1)
	task.Abandon() // no-ops
}

// TestReliablePendingMapIsNotSizedByMaxSpoutPending: "unlimited" max pending
// (2^31-1) must not cost memory up front.
func TestReliablePendingMapIsNotSizedByMaxSpoutPending(t *testing.T) {
	spec := dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {})
	info := dsl.TaskInfo{Settings: dsl.Settings{MaxSpoutPending: 1<<31 - 1}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	task := spec.NewTask(info)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(task)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("NewTask with max spout pending 2^31-1 allocated %d bytes, want well under 1 MiB", grew)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
