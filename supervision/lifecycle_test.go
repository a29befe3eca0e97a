package supervision

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// These tests pin the host's lifecycle: what each stop path does with the
// incarnation it ends, the stable period, Run's ctx, and what is logged.

// observed returns a logger that records everything, and its records.
func observed() (Option, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return WithLogger(zap.New(core)), logs
}

// logged counts the records with message msg.
func logged(logs *observer.ObservedLogs, msg string) int {
	return logs.FilterMessage(msg).Len()
}

// holdFunc is a manual-ack handler as a function.
type holdFunc func(in num, input dsl.Tuple, c dsl.Collector) error

func (f holdFunc) Execute(in num, input dsl.Tuple, c dsl.Collector) error { return f(in, input, c) }

// holding is a topology whose reliable spout emits one message, once over all
// incarnations, into a bolt that holds it: its tree stays open until a stop
// nacks it. With failTask the bolt then fails its task.
type holding struct {
	nacked atomic.Int32
	acked  atomic.Int32
	held   chan struct{} // a token when the bolt holds the message
}

func holdingTopology(failTask bool) (*dsl.Builder, *holding) {
	h := &holding{held: make(chan struct{}, 1)}
	var emitted atomic.Bool
	b := dsl.New("holding", nil)
	spout := b.Spout("source", dsl.Reliable(func() (int, num, bool) {
		if emitted.Swap(true) {
			return 0, num{}, false
		}
		return 1, num{1}, true
	}, func(int) { h.acked.Add(1) }, func(int) { h.nacked.Add(1) }))
	b.Anchored(spout, b.Bolt("hold", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[num] {
		return holdFunc(func(num, dsl.Tuple, dsl.Collector) error {
			h.held <- struct{}{}
			if failTask {
				info.Fail(errors.New("bolt gave up"))
			}
			return nil
		})
	})), dsl.Shuffle[num]())
	return b, h
}

// seen is a lifecycle event and how many nacks the source had heard when it was
// delivered.
type seen struct {
	Event
	nacked int32
}

type nackEvents struct{ ch chan seen }

func (h *holding) events() (*nackEvents, Option) {
	e := &nackEvents{ch: make(chan seen, 64)}
	return e, WithEvents(func(ev Event) { e.ch <- seen{ev, h.nacked.Load()} })
}

func (e *nackEvents) next(t *testing.T, want EventKind) seen {
	t.Helper()
	select {
	case s := <-e.ch:
		if s.Kind != want {
			t.Fatalf("event %+v, want %v", s.Event, want)
		}
		return s
	case <-time.After(waitFor):
		t.Fatalf("no lifecycle event, want %v", want)
		return seen{}
	}
}

func waitHeld(t *testing.T, h *holding) {
	t.Helper()
	select {
	case <-h.held:
	case <-time.After(waitFor):
		t.Fatal("the bolt never received the message")
	}
}

// TestAFailedIncarnationStopsDuringTheBackoff: the failed incarnation's spouts
// stop while the back-off elapses, what is still open is nacked once when it is
// over, and only then does the next incarnation start.
func TestAFailedIncarnationStopsDuringTheBackoff(t *testing.T) {
	clk := newArmingClock()
	b, h := holdingTopology(true)
	ev, opt := h.events()
	r := run(t, b, WithClock(clk), opt, WithRestarts(Restarts{Base: time.Millisecond}))
	ev.next(t, Started)
	waitHeld(t, h)
	var te *TaskError
	if e := ev.next(t, Failed); !errors.As(e.Err, &te) || te.Component != "hold" || te.Err.Error() != "bolt gave up" {
		t.Fatalf("failed %+v, want the bolt's error", e.Event)
	}
	if e := ev.next(t, Restarting); e.nacked != 0 || e.Delay != 2*time.Millisecond {
		t.Fatalf("restarting %+v after %d nacks: want a 2ms back-off, the tree still open", e.Event, e.nacked)
	}
	clk.advance(t, 2*time.Millisecond, 2*time.Millisecond)
	if e := ev.next(t, Started); e.Incarnation != 2 || e.nacked != 1 {
		t.Fatalf("started %+v after %d nacks, want incarnation 2 after the open tree was nacked once", e.Event, e.nacked)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev.next(t, Stopped)
	if n, a := h.nacked.Load(), h.acked.Load(); n != 1 || a != 0 {
		t.Errorf("%d nacks and %d acks, want the one message nacked once", n, a)
	}
}

// TestGivingUpStopsTheFailedIncarnationFirst: without restarts the failed
// incarnation is stopped (its open trees nacked) before GaveUp is reported.
func TestGivingUpStopsTheFailedIncarnationFirst(t *testing.T) {
	b, h := holdingTopology(true)
	ev, opt := h.events()
	r := run(t, b, WithoutRestarts(), opt)
	ev.next(t, Started)
	ev.next(t, Failed)
	if e := ev.next(t, GaveUp); e.nacked != 1 {
		t.Fatalf("gave up after %d nacks, want the open tree nacked first", e.nacked)
	}
	var te *TaskError
	if err := r.Wait(); !errors.As(err, &te) || te.Component != "hold" {
		t.Errorf("Wait = %v, want the bolt's *TaskError", err)
	}
}

// TestStopsCtxBoundsTheDrain: Stop with a ctx that has ended does not wait for
// the drain timeout; the open tree is nacked before Stopped is reported.
func TestStopsCtxBoundsTheDrain(t *testing.T) {
	b, h := holdingTopology(false)
	ev, opt := h.events()
	logOpt, logs := observed()
	r := run(t, b, opt, logOpt, WithDrainTimeout(time.Hour))
	ev.next(t, Started)
	waitHeld(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop = %v, want nil or its ctx's cause", err)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stop waited for the drain timeout, not for Stop's ctx")
	}
	if e := ev.next(t, Stopped); e.nacked != 1 {
		t.Errorf("stopped after %d nacks, want the open tree nacked by the stop", e.nacked)
	}
	if err := r.Wait(); err != nil {
		t.Errorf("Wait = %v, want nil after Stop", err)
	}
	if n := logged(logs, "incarnation did not stop cleanly"); n != 0 {
		t.Errorf("%d records of an unclean stop, want none", n)
	}
}

// TestStopDuringTheBackoff: a stop while no incarnation runs ends the back-off
// at once and starts nothing.
func TestStopDuringTheBackoff(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	r := run(t, flakyTopology(1), WithClock(clk), ev.option())
	for _, want := range []EventKind{Started, Failed, Restarting} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatalf("Stop during the back-off = %v", err)
	}
	if e := ev.next(t); e.Kind != Stopped || e.Incarnation != 1 {
		t.Errorf("event %+v, want incarnation 1 stopped", e)
	}
	if err := r.Wait(); err != nil {
		t.Errorf("Wait = %v, want nil", err)
	}
	if s := r.Stats(); s.Restarts != 0 || s.Incarnation != 1 {
		t.Errorf("stats %+v, want no restart", s)
	}
}

// TestStopDuringARestartsActivation: a stop while a restarted incarnation is
// still activating (a bolt blocks on its activation tuple) interrupts the
// activation and ends the topology: the interrupted start is no failure and no
// further restart is tried.
func TestStopDuringARestartsActivation(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	spout, _ := flaky(1)
	blocked, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	var incarnations atomic.Int32
	b := dsl.New("activating", nil)
	src := b.Spout("source", spout)
	b.Unanchored(src, b.Bolt("gate", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[num] {
		n := incarnations.Add(1)
		return handler(func(in num, _ dsl.Emitter) error {
			if n == 2 && in.N < 0 { // incarnation 2's activation tuple
				close(blocked)
				<-release
			}
			return nil
		})
	}), dsl.LifecycleTuples(num{-1}, nil)), dsl.Shuffle[num]())
	r := run(t, b, WithClock(clk), ev.option(), WithRestarts(Restarts{Base: time.Millisecond}),
		WithTrace(func(e TraceEvent) {
			// The failed spout of incarnation 1 is not deactivated: this is the
			// stop of incarnation 2, its start given up.
			if e.Component == "source" && e.Kind == "Deactivate" {
				releaseOnce.Do(func() { close(release) })
			}
		}))
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	for _, want := range []EventKind{Started, Failed, Restarting} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	clk.advance(t, 2*time.Millisecond, 2*time.Millisecond)
	select {
	case <-blocked:
	case <-time.After(waitFor):
		t.Fatal("incarnation 2 never activated its bolt")
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	if e := ev.next(t); e.Kind != Stopped || e.Incarnation != 2 {
		t.Errorf("event %+v, want incarnation 2 stopped (no failure, no restart)", e)
	}
	if err := r.Wait(); err != nil {
		t.Errorf("Wait = %v, want nil", err)
	}
}

type handler func(in num, out dsl.Emitter) error

func (f handler) Execute(in num, out dsl.Emitter) error { return f(in, out) }

// failing is a spout with nothing to emit whose latest task can be failed
// (TaskInfo.Fail) at will.
func failing() (*dsl.SpoutSpec, func(error)) {
	var mu sync.Mutex
	var fail func(error)
	spec := dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (num, bool) {
		mu.Lock()
		fail = info.Fail
		mu.Unlock()
		return func() (num, bool) { return num{}, false }
	})
	return spec, func(err error) {
		mu.Lock()
		f := fail
		mu.Unlock()
		f(err)
	}
}

// TestAStablePeriodResetsTheRestartCount: an incarnation that ran for the
// stable period without failing starts the count of restarts over.
func TestAStablePeriodResetsTheRestartCount(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	logOpt, logs := observed()
	spout, fail := failing()
	b := dsl.New("stable", nil)
	b.Unanchored(b.Spout("source", spout), b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	r := run(t, b, WithClock(clk), ev.option(), logOpt,
		WithRestarts(Restarts{Base: time.Millisecond, Max: 1, StablePeriod: time.Minute}))
	if e := ev.next(t); e.Kind != Started {
		t.Fatalf("event %+v, want started", e)
	}
	fail(errors.New("first"))
	for _, want := range []EventKind{Failed, Restarting} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	clk.advance(t, 2*time.Millisecond, 2*time.Millisecond)
	if e := ev.next(t); e.Kind != Started || e.Incarnation != 2 {
		t.Fatalf("event %+v, want incarnation 2 started", e)
	}
	clk.advance(t, time.Minute, 0) // incarnation 1's stable timer
	clk.advance(t, time.Minute, time.Minute)
	// Advance has offered the stable period's end; once the loop has taken
	// it, the count is back to zero before the loop reads another failure.
	testsupport.WaitUntil(t, 10*time.Second, "the loop to take the stable period's end", func() bool { return len(r.stable) == 0 })
	fail(errors.New("second"))
	if e := ev.next(t); e.Kind != Failed {
		t.Fatalf("event %+v, want failed", e)
	}
	if e := ev.next(t); e.Kind != Restarting || e.Attempt != 1 {
		t.Fatalf("event %+v, want restarting attempt 1 again: the count restarts after a stable period", e)
	}
	if n := logged(logs, "task panicked"); n != 0 {
		t.Errorf("%d task panics logged; TaskInfo.Fail is no panic", n)
	}
}

// TestAnUnstableIncarnationKeepsTheCount: without a stable period the next
// failure counts on, and Max ends the restarts.
func TestAnUnstableIncarnationKeepsTheCount(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	spout, fail := failing()
	b := dsl.New("unstable", nil)
	b.Unanchored(b.Spout("source", spout), b.Bolt("sink", dsl.Terminator(func(num) {})), dsl.Shuffle[num]())
	r := run(t, b, WithClock(clk), ev.option(),
		WithRestarts(Restarts{Base: time.Millisecond, Max: 1, StablePeriod: time.Minute}))
	ev.next(t)
	fail(errors.New("first"))
	ev.next(t)
	ev.next(t)
	clk.advance(t, 2*time.Millisecond, time.Minute-time.Nanosecond) // the back-off, and less than a stable period
	if e := ev.next(t); e.Kind != Started || e.Incarnation != 2 {
		t.Fatalf("event %+v, want incarnation 2 started", e)
	}
	fail(errors.New("second"))
	for _, want := range []EventKind{Failed, GaveUp} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	if err := r.Wait(); !errors.Is(err, ErrGaveUp) {
		t.Errorf("Wait = %v, want ErrGaveUp", err)
	}
}

// TestCancellingRunsCtxStopsTheTopology: Wait returns the ctx's cause.
func TestCancellingRunsCtxStopsTheTopology(t *testing.T) {
	topo, err := flakyTopology().Build()
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvents()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r, err := Run(ctx, topo, WithLogger(zap.NewNop()), ev.option())
	if err != nil {
		t.Fatal(err)
	}
	if e := ev.next(t); e.Kind != Started {
		t.Fatalf("event %+v, want started", e)
	}
	shutdown := errors.New("shutting down")
	cancel(shutdown)
	select {
	case <-r.Done():
	case <-time.After(waitFor):
		_ = r.Stop(context.Background())
		t.Fatal("cancelling Run's ctx did not stop the topology")
	}
	if err := r.Wait(); !errors.Is(err, shutdown) {
		t.Errorf("Wait = %v, want the ctx's cause", err)
	}
	if e := ev.next(t); e.Kind != Stopped {
		t.Errorf("event %+v, want stopped", e)
	}
}

// TestPanicsAreLoggedWithTheirStack: a task's panic is logged at error with
// its stack; the last error survives the restart in Stats; a clean stop logs
// no stuck task.
func TestPanicsAreLoggedWithTheirStack(t *testing.T) {
	clk := newArmingClock()
	ev := newEvents()
	logOpt, logs := observed()
	r := run(t, flakyTopology(1), WithClock(clk), ev.option(), logOpt)
	for _, want := range []EventKind{Started, Failed, Restarting} {
		if e := ev.next(t); e.Kind != want {
			t.Fatalf("event %+v, want %v", e, want)
		}
	}
	panics := logs.FilterMessage("task panicked").All()
	if len(panics) != 1 || panics[0].Level != zapcore.ErrorLevel || !strings.Contains(panics[0].ContextMap()["stack"].(string), "goroutine") {
		t.Fatalf("task panic records %+v, want one error with the stack", panics)
	}
	clk.advance(t, 2*time.Second, 2*time.Second)
	if e := ev.next(t); e.Kind != Started {
		t.Fatalf("event %+v, want started", e)
	}
	var source TaskStats
	for _, task := range r.Stats().Tasks {
		if task.Component == "source" {
			source = task
		}
	}
	if source.LastError != "panic: source broke" || source.LastErrorTask != source.Task || source.LastErrorTime.IsZero() {
		t.Errorf("source after the restart %+v, want the panic that caused it as its last error", source)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := logged(logs, "incarnation did not stop cleanly"); n != 0 {
		t.Errorf("%d records of an unclean stop, want none", n)
	}
}

// TestHistoryKeepsTheLatestEvents: at most maxEvents, oldest first.
func TestHistoryKeepsTheLatestEvents(t *testing.T) {
	r := &Running{log: zap.NewNop(), events: newDispatcher(nil, nil)}
	for i := 1; i <= maxEvents+6; i++ {
		r.emit(Event{Kind: Started, Incarnation: i})
	}
	if len(r.history) != maxEvents || r.history[0].Incarnation != 7 || r.history[maxEvents-1].Incarnation != maxEvents+6 {
		t.Errorf("history of %d events from %d, want the latest %d", len(r.history), r.history[0].Incarnation, maxEvents)
	}
}

// TestAPanickingCallbackIsLoggedAndTheOthersAreDelivered.
func TestAPanickingCallbackIsLoggedAndTheOthersAreDelivered(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	var got []EventKind
	d := newDispatcher(func(e Event) {
		if e.Kind == Failed {
			panic("callback broke")
		}
		got = append(got, e.Kind)
	}, zap.New(core))
	d.send(Event{Kind: Started})
	d.send(Event{Kind: Failed})
	d.send(Event{Kind: Stopped})
	d.close()
	if len(got) != 2 || got[0] != Started || got[1] != Stopped {
		t.Errorf("delivered %v, want started and stopped", got)
	}
	records := logs.FilterMessage("event callback panicked").All()
	if len(records) != 1 || records[0].ContextMap()["event"] != "failed" || records[0].ContextMap()["panic"] != "callback broke" {
		t.Errorf("records %+v, want one for the failed event's panic", records)
	}
}

// TestAnIdleDispatcherWaits: with nothing to deliver its goroutine is parked,
// not spinning.
func TestAnIdleDispatcherWaits(t *testing.T) {
	delivered := make(chan struct{}, 1)
	d := newDispatcher(func(Event) { delivered <- struct{}{} }, zap.NewNop())
	defer d.close()
	d.send(Event{Kind: Started})
	<-delivered
	parked := func() bool {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		found := false
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "supervision.(*dispatcher).run(") {
				found = true
				if !strings.Contains(strings.SplitN(g, "\n", 2)[0], "[chan receive") {
					return false
				}
			}
		}
		return found
	}
	testsupport.WaitUntil(t, 2*time.Second, "the idle dispatcher to wait for a wake", parked)
}

func TestDefaultLoggerLogsWarnings(t *testing.T) {
	l := defaultLogger()
	if !l.Core().Enabled(zapcore.WarnLevel) || l.Core().Enabled(zapcore.InfoLevel) {
		t.Error("the default logger must log warnings and errors, nothing below")
	}
}

// armingClock is a manual clock that tells when a timer is armed: the host
// emits Restarting (Started) before it arms the back-off (stable period)
// timer, so a test that advances the clock on seeing the event must first wait
// for the timer.
type armingClock struct {
	*clock.Manual
	mu      sync.Mutex // mu guards armed and changed
	armed   map[time.Duration]int
	changed chan struct{}
}

func newArmingClock() *armingClock {
	return &armingClock{Manual: clock.NewManual(time.Unix(0, 0)), armed: map[time.Duration]int{}, changed: make(chan struct{})}
}

func (c *armingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := c.Manual.AfterFunc(d, f)
	c.mu.Lock()
	c.armed[d]++
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return t
}

// advance waits until a timer of d not yet waited for is armed, then moves the
// clock by by.
func (c *armingClock) advance(t *testing.T, d, by time.Duration) {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		c.mu.Lock()
		n, changed := c.armed[d], c.changed
		if n > 0 {
			c.armed[d]--
		}
		c.mu.Unlock()
		if n > 0 {
			c.Advance(by)
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no timer of %v was armed", d)
		}
	}
}
