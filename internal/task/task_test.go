package task_test

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/task"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// numIn is the input type of the tests' bolts and the output of their spouts.
type numIn struct{ N int }

func noNums() (numIn, bool) { return numIn{}, false }

func nopBolt() *dsl.BoltSpec { return dsl.AutoAck(func(numIn, dsl.Emitter) error { return nil }) }

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

func spoutTaskWith(spec *dsl.SpoutSpec, info dsl.TaskInfo) dsl.SpoutTask {
	return task.NewSpout(&dsl.Component{ID: "spout", Spout: spec}, info)
}

func boltTask(t *testing.T, spec *dsl.BoltSpec) dsl.BoltTask {
	t.Helper()
	return task.NewBolt(&dsl.Component{ID: "bolt", Bolt: spec}, dsl.TaskInfo{Component: "bolt"})
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
		if err == nil || !strings.Contains(err.Error(), "input of type string is not task_test.numIn") {
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

// spoutEmitter is a fake dsl.SpoutEmitter that hands out roots 1, 2, ...
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

func spoutTask(t *testing.T, spec *dsl.SpoutSpec) dsl.SpoutTask {
	t.Helper()
	return task.NewSpout(&dsl.Component{ID: "spout", Spout: spec}, dsl.TaskInfo{Settings: dsl.Settings{MaxSpoutPending: 8}})
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
	made := spoutTaskWith(spec, info)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(made)
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

// deactivateOnly records its Deactivate; it has no Activate.
type deactivateOnly struct {
	hookSourceBase
	deactivated *int
}

type hookSourceBase struct{}

func (hookSourceBase) Next() (int, numIn, bool) { return 0, numIn{}, false }
func (hookSourceBase) Ack(int)                  {}
func (hookSourceBase) Nack(int)                 {}

func (s deactivateOnly) Deactivate() { *s.deactivated++ }

func TestSourceHooksAreIndependent(t *testing.T) {
	var n int
	spec := dsl.ReliableFrom(func(dsl.TaskInfo) deactivateOnly { return deactivateOnly{deactivated: &n} })
	act := spoutTask(t, spec).(interface {
		Activate()
		Deactivate()
	})
	act.Activate() // none: nothing to call
	act.Deactivate()
	if n != 1 {
		t.Errorf("Deactivate called %d times, want 1 without an Activate", n)
	}
}

// Each kind's task has the optional parts of the contract its semantics
// need, and no others: the runtime acks in place for auto-ack and stateful
// tasks only, checkpoints stateful ones, and positions and activates
// reliable spouts.
func TestTasksImplementTheirKindsOptionalContract(t *testing.T) {
	type parts struct{ autoAck, state bool }
	for _, tt := range []struct {
		spec *dsl.BoltSpec
		want parts
	}{
		{nopBolt(), parts{autoAck: true}},
		{dsl.Terminator(func(numIn) {}), parts{}},
		{dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[numIn] { return &manualTicking{} }), parts{}},
		{dsl.Stateful(func(numIn, *dsl.State[string, int], dsl.Emitter) error { return nil }), parts{autoAck: true, state: true}},
	} {
		b := boltTask(t, tt.spec)
		_, autoAck := b.(component.AutoAcker)
		_, state := b.(component.StateTask)
		if got := (parts{autoAck, state}); got != tt.want {
			t.Errorf("%s task: %+v, want %+v", tt.spec.Kind, got, tt.want)
		}
	}
	reliable := spoutTask(t, dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {}))
	if _, ok := reliable.(component.PositionedSpout); !ok {
		t.Error("a reliable task is not a component.PositionedSpout")
	}
	if _, ok := reliable.(component.Activator); !ok {
		t.Error("a reliable task is not a component.Activator")
	}
	unreliable := spoutTask(t, dsl.Unreliable(func() (numIn, bool) { return numIn{}, false }))
	if _, ok := unreliable.(component.PositionedSpout); ok {
		t.Error("an unreliable task claims positions")
	}
}

// A spec that makes no task panics naming its component: the runtime turns
// the panic into the task's failure.
func TestASpecThatMakesNoTaskPanicsNamingTheComponent(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func()
		want string
	}{
		{"empty spout", func() { spoutTaskWith(&dsl.SpoutSpec{}, dsl.TaskInfo{}) }, `spout "spout": its spec made no task`},
		{"nil spout task", func() {
			spoutTaskWith(&dsl.SpoutSpec{NewTask: func(dsl.TaskInfo) dsl.SpoutTask { return nil }}, dsl.TaskInfo{})
		}, `spout "spout": its spec made no task`},
		{"empty bolt", func() { boltTask(t, &dsl.BoltSpec{}) }, `bolt "bolt": its spec made no task`},
		{"nil bolt task", func() { boltTask(t, &dsl.BoltSpec{NewTask: func(dsl.TaskInfo) dsl.BoltTask { return nil }}) }, `bolt "bolt": its spec made no task`},
		{"typed bolt of no kind", func() {
			spec := nopBolt()
			spec.Kind = "odd"
			boltTask(t, spec)
		}, `bolt "bolt": its spec made no task (a typed bolt of kind "odd")`},
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if err == nil || err.Error() != tt.want {
					t.Errorf("%s: panic %v, want %q", tt.name, err, tt.want)
				}
			}()
			tt.make()
		}()
	}
}

// A stateful task acks as an auto-ack one does, fails an input whose handler
// returns an error or that is of another type, ignores ticks, and reaches its
// State through RestoreState and SnapshotState.
func TestStatefulTaskRunsItsHandlerOverItsState(t *testing.T) {
	boom := errors.New("boom")
	spec := dsl.Stateful(func(n numIn, st *dsl.State[string, int], out dsl.Emitter) error {
		if n.N < 0 {
			return boom
		}
		old, _ := st.Get("sum")
		st.Put("sum", old+n.N)
		out.Emit(n)
		return nil
	})
	b := boltTask(t, spec)
	st := b.(component.StateTask)
	if err := st.RestoreState([]byte("sum"), []byte{0x14}); err != nil { // varint 10
		t.Fatal(err)
	}
	c := &collector{}
	for _, in := range []dsl.Tuple{
		{Value: numIn{5}, ID: dsl.TupleID{Root: 1, Edge: 1}},
		{Value: numIn{-1}, ID: dsl.TupleID{Root: 2, Edge: 2}},
		{Value: "odd", ID: dsl.TupleID{Root: 3, Edge: 3}},
		{Value: dsl.Tick{RateSecs: 1}, Source: "__system", Task: -1},
	} {
		err := b.Execute(&in, c)
		switch in.ID.Root {
		case 2:
			if !errors.Is(err, boom) {
				t.Errorf("Execute(-1) = %v, want boom", err)
			}
		case 3:
			if err == nil {
				t.Error("an input of another type passed")
			}
		default:
			if err != nil {
				t.Errorf("Execute(%v) = %v", in.Value, err)
			}
		}
	}
	if len(c.acked) != 1 || c.acked[0].ID.Root != 1 || len(c.failed) != 2 || len(c.emitted) != 1 {
		t.Errorf("acked %v, failed %v, emitted %v; want 1 acked, 2 and 3 failed, one emit", c.acked, c.failed, c.emitted)
	}
	snap := map[string][]byte{}
	size, err := st.SnapshotState(func(k, v []byte) { snap[string(k)] = append([]byte(nil), v...) })
	if err != nil || size != 4 || len(snap) != 1 || string(snap["sum"]) != "\x1e" { // varint 15
		t.Errorf("snapshot %q (size %d, %v), want sum=15 in 4 bytes", snap, size, err)
	}
	if ack, err := b.(component.AutoAcker).ExecuteAuto(&dsl.Tuple{Value: numIn{1}}, c); !ack || err != nil {
		t.Errorf("ExecuteAuto = %v, %v; want the ack left to the caller", ack, err)
	}
	if len(c.acked) != 1 {
		t.Error("ExecuteAuto acked the input itself")
	}
}

// Auto-ack's ExecuteAuto leaves the ack of a handled input to its caller,
// and fails the others itself.
func TestAutoAckLeavesTheAckToItsCaller(t *testing.T) {
	boom := errors.New("boom")
	b := boltTask(t, dsl.AutoAck(func(n numIn, _ dsl.Emitter) error {
		if n.N < 0 {
			return boom
		}
		return nil
	})).(component.AutoAcker)
	c := &collector{}
	if ack, err := b.ExecuteAuto(&dsl.Tuple{Value: numIn{1}}, c); !ack || err != nil {
		t.Errorf("ExecuteAuto(1) = %v, %v; want ack", ack, err)
	}
	if ack, err := b.ExecuteAuto(&dsl.Tuple{Value: numIn{-1}}, c); ack || !errors.Is(err, boom) {
		t.Errorf("ExecuteAuto(-1) = %v, %v; want no ack and boom", ack, err)
	}
	if ack, err := b.ExecuteAuto(&dsl.Tuple{Value: "odd"}, c); ack || err == nil {
		t.Errorf("ExecuteAuto(odd) = %v, %v; want no ack and an error", ack, err)
	}
	if ack, _ := b.ExecuteAuto(&dsl.Tuple{Value: dsl.Tick{}, Source: "__system", Task: -1}, c); ack {
		t.Error("a tick was left to be acked")
	}
	if len(c.acked) != 0 || len(c.failed) != 2 {
		t.Errorf("acked %d, failed %d; want 0 and 2", len(c.acked), len(c.failed))
	}
}

// A handler that is a type of its own (not a function) is called through
// its Execute method.
type doubler struct{ seen []int }

func (d *doubler) Execute(n numIn, out dsl.Emitter) error {
	d.seen = append(d.seen, n.N)
	out.Emit(numIn{2 * n.N})
	return nil
}

func TestAutoAckCallsAHandlerType(t *testing.T) {
	d := &doubler{}
	b := boltTask(t, dsl.AutoAckFrom(func(dsl.TaskInfo) *doubler { return d }))
	c := &collector{}
	if err := b.Execute(&dsl.Tuple{Value: numIn{3}}, c); err != nil {
		t.Fatal(err)
	}
	if err := b.Execute(&dsl.Tuple{Value: "odd"}, c); err == nil {
		t.Error("an input of another type passed")
	}
	if !reflect.DeepEqual(d.seen, []int{3}) || !reflect.DeepEqual(c.emitted, []any{numIn{6}}) || len(c.acked) != 1 || len(c.failed) != 1 {
		t.Errorf("seen %v, emitted %v, acked %d, failed %d", d.seen, c.emitted, len(c.acked), len(c.failed))
	}
}

// positioned is a Source with positions: its position is how many messages
// it handed out.
type positioned struct {
	recordingSource
	rewound []string
}

func (p *positioned) Position() []byte { return []byte{byte(len(p.acked) + len(p.nacked))} }
func (p *positioned) Rewind(pos []byte) error {
	p.rewound = append(p.rewound, string(pos))
	return nil
}

func TestReliableTaskPositionsAndRewindsItsSource(t *testing.T) {
	src := &positioned{recordingSource: recordingSource{queue: []string{"a", "b"}}}
	r := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) *positioned { return src })).(component.PositionedSpout)
	r.(dsl.SpoutTask).Next(&spoutEmitter{})
	if pos, ok := r.SourcePosition(); !ok || !reflect.DeepEqual(pos, []byte{0}) {
		t.Errorf("SourcePosition = %v, %v; want [0], true", pos, ok)
	}
	if err := r.RewindSource([]byte("p")); err != nil || !reflect.DeepEqual(src.rewound, []string{"p"}) {
		t.Errorf("RewindSource: %v, rewound %v", err, src.rewound)
	}
	r.(dsl.SpoutTask).Ack(1) // forgotten by the rewind: the source replays it
	r.(dsl.SpoutTask).Abandon()
	if len(src.acked)+len(src.nacked) != 0 {
		t.Errorf("after a rewind: acked %v, nacked %v; want nothing", src.acked, src.nacked)
	}

	plain := &recordingSource{queue: []string{"a"}}
	p := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) *recordingSource { return plain })).(component.PositionedSpout)
	p.(dsl.SpoutTask).Next(&spoutEmitter{})
	if pos, ok := p.SourcePosition(); ok || pos != nil {
		t.Errorf("SourcePosition of a source without positions = %v, %v", pos, ok)
	}
	if err := p.RewindSource([]byte("p")); err != nil {
		t.Fatal(err)
	}
	p.(dsl.SpoutTask).Ack(1) // not forgotten: there was no rewind
	if !reflect.DeepEqual(plain.acked, []string{"a"}) {
		t.Errorf("acked %v, want [a]", plain.acked)
	}
}

// director names the task of each message: its number; a 0 panics.
type director struct{ recordingSource }

func (d *director) DirectTask(n numIn) int {
	if n.N == 0 {
		panic("no task")
	}
	return n.N
}

// directEmitter is a spoutEmitter that can emit direct.
type directEmitter struct {
	spoutEmitter
	tasks []int
}

func (e *directEmitter) EmitDirect(task int, tuple any, tracked bool) uint64 {
	e.tasks = append(e.tasks, task)
	return e.Emit(tuple, tracked)
}

func TestReliableTaskEmitsDirectToTheTaskItsSourceNames(t *testing.T) {
	src := &director{recordingSource{queue: []string{"ab", "abc", ""}}}
	s := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) *director { return src }))
	e := &directEmitter{}
	s.Next(e)
	s.Next(e)
	if !reflect.DeepEqual(e.tasks, []int{2, 3}) {
		t.Errorf("direct tasks %v, want [2 3]", e.tasks)
	}
	func() {
		defer func() {
			if p := recover(); p != "no task" {
				t.Errorf("panic %v, want the source's", p)
			}
		}()
		s.Next(e)
	}()
	if !reflect.DeepEqual(src.nacked, []string{""}) {
		t.Errorf("nacked %v, want the message whose DirectTask panicked", src.nacked)
	}
	s.Ack(1)
	if !reflect.DeepEqual(src.acked, []string{"ab"}) {
		t.Errorf("acked %v, want [ab]", src.acked)
	}

	other := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) *director { return &director{recordingSource{queue: []string{"a"}}} }))
	func() {
		defer func() {
			err, _ := recover().(error)
			if err == nil || err.Error() != "dsl: the runtime cannot emit direct from a spout (task 1)" {
				t.Errorf("panic %v, want one saying the emitter cannot emit direct", err)
			}
		}()
		other.Next(&spoutEmitter{})
	}()
}

// closing is a source with a Close hook.
type closing struct {
	recordingSource
	closed int
	err    error
}

func (c *closing) Close() error { c.closed++; return c.err }

// A reliable task forwards Close to its source's hook, with the hook's error,
// and closes a source without one as a no-op.
func TestReliableTaskClosesItsSource(t *testing.T) {
	src := &closing{err: errors.New("flush failed")}
	r := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) *closing { return src })).(component.Closer)
	if err := r.Close(); !errors.Is(err, src.err) || src.closed != 1 {
		t.Errorf("Close = %v, source closed %d times; want its error, once", err, src.closed)
	}
	plain := spoutTask(t, dsl.ReliableFrom(func(dsl.TaskInfo) *recordingSource { return &recordingSource{} })).(component.Closer)
	if err := plain.Close(); err != nil {
		t.Errorf("Close of a source without a Close hook = %v", err)
	}
}

// A reliable task reports positions only when its source has them.
func TestReliableTaskIsPositionedWhenItsSourceIs(t *testing.T) {
	for _, tt := range []struct {
		spec *dsl.SpoutSpec
		want bool
	}{
		{dsl.ReliableFrom(func(dsl.TaskInfo) *positioned { return &positioned{} }), true},
		{dsl.ReliableFrom(func(dsl.TaskInfo) *recordingSource { return &recordingSource{} }), false},
	} {
		if got := spoutTask(t, tt.spec).(component.PositionedSpout).Positioned(); got != tt.want {
			t.Errorf("Positioned() = %v, want %v", got, tt.want)
		}
	}
}
