package actors

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/internal/stats"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/internal/trace"
	"github.com/goshelter/goshelter/routing"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// System is shut down and every incarnation stopped. Nothing is exempt, not
// even protoactor-go's dead-letter throttle goroutine: NewSystem's interval
// ends it right after its dead letter (TestDeadLetterThrottleEndsRightAfterADeadLetter).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor bounds every wait of these tests, stretched by
// GOSHELTER_TEST_TIMEOUT_SCALE on slow machines.
var waitFor = testsupport.Scaled(waitBound)

// waitBound is waitFor before it is scaled.
const waitBound = 10 * time.Second

type num struct{ N int }

// host is a System whose failures are collected.
type host struct {
	sys      *System
	failures chan Failure
}

func newHost(t *testing.T) *host {
	t.Helper()
	h := &host{failures: make(chan Failure, 16)}
	h.sys = NewSystem(zap.NewNop(), func(f Failure) {
		select {
		case h.failures <- f:
		default:
		}
	})
	t.Cleanup(h.sys.Shutdown)
	return h
}

// start starts topo on h and stops it when the test ends (Stop is idempotent).
func (h *host) start(t *testing.T, topo *dsl.Topology, cfg Config) *Topology {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = t.Name() + "/"
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	top, err := h.sys.Start(ctx, routing.Compile(topo), cfg)
	if top == nil {
		t.Fatalf("Start returned no incarnation (error %v)", err)
	}
	t.Cleanup(func() { stop(t, top) })
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return top
}

func stop(t *testing.T, top *Topology) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := top.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func (h *host) failure(t *testing.T) Failure {
	t.Helper()
	select {
	case f := <-h.failures:
		return f
	case <-time.After(waitFor):
		t.Fatal("no failure was reported")
		return Failure{}
	}
}

func build(t testing.TB, b *dsl.Builder) *dsl.Topology {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// countdown closes done once it has been called n times.
type countdown struct {
	mu   sync.Mutex
	n    int
	done chan struct{}
}

func newCountdown(n int) *countdown { return &countdown{n: n, done: make(chan struct{})} }

func (c *countdown) hit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 {
		close(c.done)
	}
}

// numbers is a reliable spout handing out 1..n, counting acks on acked.
func numbers(n int, acked *countdown, nacked func(int)) *dsl.SpoutSpec {
	next := 0 // touched only by the one spout task
	return dsl.Reliable(func() (int, num, bool) {
		if next == n {
			return 0, num{}, false
		}
		next++
		return next, num{next}, true
	}, func(int) { acked.hit() }, nacked)
}

func TestStartRunsAndStopDrains(t *testing.T) {
	const n = 20
	acked := newCountdown(n)
	var mu sync.Mutex
	sum := 0
	b := dsl.New("pipeline", dsl.Conf{dsl.AckerTasks: 2})
	spout := b.Spout("numbers", numbers(n, acked, func(id int) { t.Errorf("message %d nacked", id) }))
	add := b.Bolt("add", dsl.AutoAck(func(in num, _ dsl.Emitter) error {
		mu.Lock()
		sum += in.N
		mu.Unlock()
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(spout, add, dsl.Shuffle[num]())
	topo := build(t, b)
	top := newHost(t).start(t, topo, Config{})
	wait(t, acked.done, "every message acked")
	stop(t, top)
	if err := top.Stop(context.Background()); err != nil {
		t.Errorf("a second Stop = %v, want the first result, nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if sum != n*(n+1)/2 {
		t.Errorf("sum = %d, want %d", sum, n*(n+1)/2)
	}

	// Stats: every task in task id order, named and kinded.
	snaps, inFlight := top.Stats()
	if inFlight != 0 {
		t.Errorf("%d in flight after the drain", inFlight)
	}
	var got []string
	byKind := map[string]stats.Task{}
	for i, s := range snaps {
		if s.Task != i+1 {
			t.Errorf("snapshot %d is task %d", i, s.Task)
		}
		got = append(got, fmt.Sprintf("%s/%s#%d", s.Kind, s.Component, s.Task))
		sum := byKind[s.Kind]
		sum.Acked += s.Acked
		sum.Executed += s.Executed
		sum.Emitted += s.Emitted
		byKind[s.Kind] = sum
	}
	want := []string{"bolt/add#1", "bolt/add#2", "spout/numbers#3", "acker/__acker#4", "acker/__acker#5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tasks %v, want %v", got, want)
	}
	if s := byKind["spout"]; s.Acked != n || s.Emitted != n {
		t.Errorf("spout acked %d, emitted %d; want %d each", s.Acked, s.Emitted, n)
	}
	if s := byKind["bolt"]; s.Executed != n || s.Acked != n {
		t.Errorf("bolts executed %d, acked %d; want %d each", s.Executed, s.Acked, n)
	}
	if s := byKind["acker"]; s.Acked != n {
		t.Errorf("ackers completed %d trees, want %d", s.Acked, n)
	}
}

// TestTraceNamesEveryMessage follows one tree through the trace, with ids from
// Config.IDs.
func TestTraceNamesEveryMessage(t *testing.T) {
	acked := newCountdown(1)
	var mu sync.Mutex
	var events []trace.Event
	b := dsl.New("traced", dsl.Conf{dsl.AckerTasks: 1})
	spout := b.Spout("numbers", numbers(1, acked, func(int) {}))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(num, dsl.Emitter) error { return nil })), dsl.Shuffle[num]())
	topo := build(t, b)
	top := newHost(t).start(t, topo, Config{
		IDs: func(task int) ids.Source { return ids.Sequence(uint64(task)*100, 1) },
		Trace: func(e trace.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	wait(t, acked.done, "the message acked")
	stop(t, top)

	spoutTask, boltTask, ackerTask := topo.Component("numbers").Tasks[0], topo.Component("sink").Tasks[0], topo.AckerTasks[0]
	root := uint64(spoutTask) * 100 // the spout's first id
	edge := root + 1                // its second, for the one delivery
	input := dsl.Tuple{Value: num{1}, Stream: topo.Streams[0], Source: "numbers", Task: spoutTask, ID: dsl.TupleID{Root: root, Edge: edge}}
	// Each task's events, in the order that task must record them (tasks
	// record concurrently, so only each task's own order is fixed).
	want := map[int][]trace.Event{
		spoutTask: {
			{Component: "numbers", Task: spoutTask, Kind: "Activate"},
			{Component: "numbers", Task: spoutTask, Kind: "Next"},
			{Component: "numbers", Task: spoutTask, Out: true, Kind: "Emit", Value: num{1}, Anchors: []dsl.TupleID{{Root: root}}},
			{Component: "numbers", Task: spoutTask, Kind: "Ack", Root: root},
		},
		boltTask: {
			{Component: "sink", Task: boltTask, Kind: "Activate"},
			{Component: "sink", Task: boltTask, Kind: "Tuple", Input: input},
			{Component: "sink", Task: boltTask, Out: true, Kind: "Ok", ID: input.ID},
		},
		ackerTask: {
			{Component: "__acker", Task: ackerTask, Kind: "Activate"},
			{Component: "__acker", Task: ackerTask, Kind: "AckerStep", Op: "Track", Root: root, Spout: spoutTask},
			{Component: "__acker", Task: ackerTask, Kind: "AckerStep", Op: "Anchor", Root: root, Edge: edge, XOR: edge},
			{Component: "__acker", Task: ackerTask, Kind: "AckerStep", Op: "Ok", Root: root, Edge: edge, Outcome: "complete"},
		},
	}
	mu.Lock()
	defer mu.Unlock()
	for task, seq := range want {
		i := 0
		for _, e := range events {
			if i < len(seq) && reflect.DeepEqual(e, seq[i]) {
				i++
			}
		}
		if i < len(seq) {
			t.Errorf("task %d: trace lacks %+v (in order) among:\n%s", task, seq[i], eventList(events))
		}
	}
}

func eventList(events []trace.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %+v\n", e)
	}
	return b.String()
}

func TestASpoutPanicIsAFailureWithItsStack(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name   string
		panics any
		is     error
	}{
		{"a value", "source broke", nil},
		{"an error", boom, boom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := dsl.New("fragile", nil)
			spout := b.Spout("flaky", dsl.Unreliable(func() (num, bool) { panic(tt.panics) }))
			b.Unanchored(spout, b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
			h := newHost(t)
			topo := build(t, b)
			top := h.start(t, topo, Config{})
			f := h.failure(t)
			if want := topo.Component("flaky").Tasks[0]; f.Topology != top || f.Component != "flaky" || f.Task != want {
				t.Errorf("failure of %q task %d (topology %p), want flaky task %d of %p", f.Component, f.Task, f.Topology, want, top)
			}
			if want := fmt.Sprintf("panic: %v", tt.panics); f.Err == nil || f.Err.Error() != want {
				t.Errorf("Err = %v, want %q", f.Err, want)
			}
			if tt.is != nil && !errors.Is(f.Err, tt.is) {
				t.Errorf("Err %v does not unwrap to the panic's error", f.Err)
			}
			if !strings.Contains(string(f.Stack), "panic") {
				t.Errorf("Stack %q is not the panic's", f.Stack)
			}
		})
	}
}

func TestTaskInfoFailIsAFailureWithTheComponentsError(t *testing.T) {
	gone := errors.New("the service went away")
	b := dsl.New("failing", nil)
	spout := b.Spout("numbers", dsl.Unreliable(func() (num, bool) { return num{1}, true }))
	bolt := b.Bolt("caller", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[num] {
		once := sync.Once{}
		return handlerFunc(func(num, dsl.Emitter) error {
			once.Do(func() { info.Fail(gone) })
			return nil
		})
	}), dsl.Parallelism(1))
	b.Unanchored(spout, bolt, dsl.Shuffle[num]())
	h := newHost(t)
	h.start(t, build(t, b), Config{})
	f := h.failure(t)
	if f.Component != "caller" || f.Task != 1 || f.Err != gone || f.Stack != nil {
		t.Errorf("failure %+v, want caller task 1 with the component's own error and no stack", f)
	}
}

type handlerFunc func(num, dsl.Emitter) error

func (f handlerFunc) Execute(in num, out dsl.Emitter) error { return f(in, out) }

func TestASpecThatMakesNoTaskFailsTheTask(t *testing.T) {
	b := dsl.New("bad-adapter", nil)
	spec := &dsl.SpoutSpec{Output: reflect.TypeFor[num](), Kind: "odd", NewTask: func(dsl.TaskInfo) dsl.SpoutTask { return nil }}
	spout := b.Spout("odd", spec)
	b.Unanchored(spout, b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	h := newHost(t)
	h.start(t, build(t, b), Config{}) // the failure breaks activation; Start still returns nil
	f := h.failure(t)
	want := `spout "odd": its spec made no task`
	if f.Component != "odd" || f.Err == nil || !strings.Contains(f.Err.Error(), want) {
		t.Errorf("failure %+v, want one of odd containing %q", f, want)
	}
}

func TestNewTaskChecksTheContract(t *testing.T) {
	c := &dsl.Component{ID: "c",
		Spout: &dsl.SpoutSpec{NewTask: func(dsl.TaskInfo) dsl.SpoutTask { return nil }},
		Bolt:  &dsl.BoltSpec{}}
	for _, tt := range []struct {
		name string
		call func()
		want string
	}{
		{"spout", func() { newSpoutTask(c, dsl.TaskInfo{}) }, `spout "c": its spec made no task`},
		{"bolt", func() { newBoltTask(c, dsl.TaskInfo{}) }, `bolt "c": its spec made no task`},
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if err == nil || err.Error() != tt.want {
					t.Errorf("%s: panic %v, want %q", tt.name, err, tt.want)
				}
			}()
			tt.call()
		}()
	}
}

func TestStartReturnsTheCauseWhenCtxEndsFirst(t *testing.T) {
	release := make(chan struct{})
	activated := make(chan struct{})
	b := dsl.New("slow-start", nil)
	spout := b.Spout("numbers", dsl.Unreliable(func() (num, bool) { return num{}, false }))
	slow := b.Bolt("slow", dsl.AutoAck(func(in num, _ dsl.Emitter) error {
		if in.N == -1 { // the activation tuple
			close(activated)
			<-release
		}
		return nil
	}), dsl.LifecycleTuples(num{-1}, nil))
	b.Unanchored(spout, slow, dsl.Shuffle[num]())
	topo := build(t, b)
	h := newHost(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("the caller gave up")
	go func() {
		<-activated
		cancel(cause)
	}()
	top, err := h.sys.Start(ctx, routing.Compile(topo), Config{Name: "slow/", DrainTimeout: time.Second})
	close(release)
	if top == nil {
		t.Fatal("Start returned no incarnation to stop")
	}
	defer stop(t, top)
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), `activating topology "slow-start"`) {
		t.Errorf("Start error %v, want the activation error wrapping ctx's cause", err)
	}
}

// TestTimersRunOnTheConfiguredClock: with a manual clock, tick tuples and tree
// expiry happen only when the clock is advanced.
func TestTimersRunOnTheConfiguredClock(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	ticks := make(chan dsl.Tick, 8)
	held := make(chan struct{}, 1)
	nacked := make(chan int, 1)
	b := dsl.New("clocked", dsl.Conf{dsl.MessageTimeout: 30 * time.Second, dsl.AckerTasks: 1})
	spout := b.Spout("numbers", numbers(1, newCountdown(1), func(id int) { nacked <- id }))
	holder := b.Bolt("holder", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[num] {
		return &holdingHandler{ticks: ticks, held: held}
	}), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 500 * time.Millisecond}))
	b.Anchored(spout, holder, dsl.Shuffle[num]())
	h := newHost(t)
	top := h.start(t, build(t, b), Config{Clock: clk})
	wait(t, held, "the bolt to hold its input")
	waitUntil(t, "the acker to track the tree", func() bool {
		snaps, _ := top.Stats()
		return snaps[len(snaps)-1].Pending == 1
	})

	clk.Advance(500 * time.Millisecond)
	select {
	case tk := <-ticks:
		if want := (dsl.Tick{RateSecs: 1, Period: 500 * time.Millisecond, Time: time.Unix(0, 0).Add(500 * time.Millisecond)}); !tk.Time.Equal(want.Time) || tk.RateSecs != want.RateSecs || tk.Period != want.Period {
			t.Errorf("tick %+v, want %+v", tk, want)
		}
	case <-time.After(waitFor):
		t.Fatal("no tick after the clock moved by the tick frequency")
	}

	clk.Advance(45 * time.Second) // three acker rotations: the tree expires
	select {
	case id := <-nacked:
		if id != 1 {
			t.Errorf("nacked %d, want 1", id)
		}
	case <-time.After(waitFor):
		t.Fatal("the held tree did not expire")
	}
	waitUntil(t, "the expiry in the stats", func() bool {
		snaps, inFlight := top.Stats()
		spout := snaps[1]
		return inFlight == 0 && spout.Component == "numbers" && spout.Expired == 1 && spout.Failed == 1 && snaps[2].Expired == 1
	})
}

type holdingHandler struct {
	ticks chan<- dsl.Tick
	held  chan<- struct{}
}

func (h *holdingHandler) Execute(num, dsl.Tuple, dsl.Collector) error {
	offer(h.held, struct{}{}) // never acked: only expiry ends the tree
	return nil
}

func (h *holdingHandler) Tick(tk dsl.Tick, _ dsl.Collector) error {
	offer(h.ticks, tk) // the later ticks of a long Advance are dropped
	return nil
}

func offer[T any](ch chan<- T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// waitUntil waits for figures that announce no change (stats, depths),
// with testsupport's one wait, bounded as every wait here (waitFor).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsupport.WaitUntil(t, waitBound, what, cond)
}

// TestTaskInfoDescribesTheTask: what a component is told about its task, and
// that its Context ends when the task is deactivated.
func TestTaskInfoDescribesTheTask(t *testing.T) {
	infos := make(chan dsl.TaskInfo, 4)
	b := dsl.New("described", dsl.Conf{"my.key": "topology", dsl.AckerTasks: 1})
	spout := b.Spout("numbers", dsl.Unreliable(func() (num, bool) { return num{}, false }))
	bolt := b.Bolt("bolt", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[num] {
		infos <- info
		return handlerFunc(func(num, dsl.Emitter) error { return nil })
	}), dsl.Parallelism(2), dsl.WithConf(dsl.Conf{"my.key": "component", "other": 1}))
	b.Unanchored(spout, bolt, dsl.Shuffle[num]())
	topo := build(t, b)
	top := newHost(t).start(t, topo, Config{})
	got := map[int]dsl.TaskInfo{}
	for range 2 {
		select {
		case info := <-infos:
			got[info.Index] = info
		case <-time.After(waitFor):
			t.Fatal("a bolt task was not created")
		}
	}
	for index, info := range got {
		if info.Topology != "described" || info.Component != "bolt" || info.Parallelism != 2 ||
			info.Task != topo.Component("bolt").Tasks[index] || info.Model != topo || info.Logger == nil ||
			info.Post == nil || info.Fail == nil || info.Metric == nil {
			t.Errorf("task %d info %+v", index, info)
		}
		if info.Conf["my.key"] != "component" || info.Conf["other"] != 1 || info.Conf[dsl.AckerTasks] != 1 {
			t.Errorf("task %d conf %v, want the topology's conf under the component's", index, info.Conf)
		}
		if info.Context().Err() != nil {
			t.Errorf("task %d: the Context ended while the task runs", index)
		}
	}
	stop(t, top)
	for index, info := range got {
		if info.Context().Err() == nil {
			t.Errorf("task %d: the Context did not end when the task stopped", index)
		}
	}
}

func TestTickOf(t *testing.T) {
	for f, want := range map[time.Duration]dsl.Tick{
		250 * time.Millisecond:  {RateSecs: 1, Period: 250 * time.Millisecond},
		time.Second:             {RateSecs: 1, Period: time.Second},
		2500 * time.Millisecond: {RateSecs: 2, Period: 2500 * time.Millisecond},
		time.Minute:             {RateSecs: 60, Period: time.Minute},
	} {
		if got := tickOf(f); got != want {
			t.Errorf("tickOf(%v) = %+v, want %+v", f, got, want)
		}
	}
}

// TestEmitDirectAnchored: a bolt sends to a task it names, anchored to its
// input, so the spout hears of its message only once that task acks.
func TestEmitDirectAnchored(t *testing.T) {
	acked := newCountdown(3)
	type delivery struct {
		task    int
		value   num
		tracked bool
	}
	got := make(chan delivery, 3)
	b := dsl.New("direct", nil)
	spout := b.Spout("numbers", numbers(3, acked, func(id int) { t.Errorf("message %d nacked", id) }))
	relay := b.Bolt("relay", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[num] {
		targets := info.Model.Component("target").Tasks
		return manualFunc(func(in num, input dsl.Tuple, c dsl.Collector) error {
			c.EmitDirectAnchored(targets[in.N%len(targets)], []dsl.Tuple{input}, in)
			c.Ack(input)
			return nil
		})
	}))
	target := b.Bolt("target", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[num] {
		return manualFunc(func(in num, input dsl.Tuple, c dsl.Collector) error {
			got <- delivery{info.Task, in, input.ID.Edge != 0}
			c.Ack(input)
			return nil
		})
	}), dsl.Parallelism(3))
	b.Anchored(spout, relay, dsl.Shuffle[num]())
	b.Anchored(relay, target, dsl.Direct[num]())
	topo := build(t, b)
	newHost(t).start(t, topo, Config{})
	wait(t, acked.done, "every message acked")
	tasks := topo.Component("target").Tasks
	for range 3 {
		d := <-got
		if want := tasks[d.value.N%len(tasks)]; d.task != want || !d.tracked {
			t.Errorf("%+v went to task %d (tracked %v), want task %d, tracked", d.value, d.task, d.tracked, want)
		}
	}
}

type manualFunc func(in num, input dsl.Tuple, c dsl.Collector) error

func (f manualFunc) Execute(in num, input dsl.Tuple, c dsl.Collector) error { return f(in, input, c) }
