package sheltertest_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// handOut calls Next n times by hand and returns the ids, failing the test
// if the source runs dry.
func handOut[T any](t *testing.T, src *sheltertest.Source[T], n int) []int {
	t.Helper()
	var ids []int
	for range n {
		id, _, ok := sheltertest.Feed(src).Next()
		if !ok {
			t.Fatalf("Next() handed out nothing after %v", ids)
		}
		ids = append(ids, id)
	}
	return ids
}

// drained expects the source to hand out nothing more.
func drained[T any](t *testing.T, src *sheltertest.Source[T]) {
	t.Helper()
	if id, _, ok := sheltertest.Feed(src).Next(); ok {
		t.Fatalf("Next() handed out %d, want nothing", id)
	}
}

func TestGenerateMakesNValuesThenTheQueueComesFirst(t *testing.T) {
	src := sheltertest.Generate(3, func(i int) string { return strings.Repeat("x", i+1) })
	id, v, ok := sheltertest.Feed(src).Next()
	if !ok || id != 1 || v != "x" {
		t.Fatalf("Next() = %d, %q, %v; want 1, x, true", id, v, ok)
	}
	src.Push("pushed") // before the generator's remaining values
	var got []string
	for range 3 {
		_, v, _ := sheltertest.Feed(src).Next()
		got = append(got, v)
	}
	if want := []string{"pushed", "xx", "xxx"}; !reflect.DeepEqual(got, want) {
		t.Errorf("values %q, want %q", got, want)
	}
	drained(t, src)
}

func TestGenerateWithoutEnd(t *testing.T) {
	src := sheltertest.Generate(-1, func(i int) int { return i })
	if ids := handOut(t, src, 1000); ids[999] != 1000 {
		t.Fatalf("the 1000th id is %d", ids[999])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	err := src.WaitSettled(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1000 outstanding, values without end to hand out") {
		t.Errorf("WaitSettled = %v, want the deadline and what it waits for", err)
	}
}

// A source without end never settles, even when all it holds is a nacked
// message waiting to be replayed: counting the endless generator as -1 more
// to hand out would make that one message and the generator cancel out.
func TestAnEndlessSourceWithAReplayWaitingIsNotSettled(t *testing.T) {
	src := sheltertest.Generate(-1, func(i int) int { return i }, sheltertest.Replay(-1))
	ids := handOut(t, src, 1)
	sheltertest.Feed(src).Nack(ids[0])
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // nothing will settle it
	defer cancel()
	err := src.WaitSettled(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "values without end to hand out") {
		t.Errorf("WaitSettled = %v, want the deadline and the values without end it waits for", err)
	}
}

// A generator with values left is not settled while nothing is out: what
// it has yet to make counts as left to hand out.
func TestAGeneratorWithValuesLeftIsNotSettled(t *testing.T) {
	src := sheltertest.Generate(3, func(i int) int { return i })
	ids := handOut(t, src, 1)
	sheltertest.Feed(src).Ack(ids[0])
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // nothing will settle it
	defer cancel()
	err := src.WaitSettled(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "2 to hand out") {
		t.Errorf("WaitSettled = %v, want the deadline and the 2 values left", err)
	}
}

func TestReplay(t *testing.T) {
	tests := []struct {
		name    string
		opts    []sheltertest.SourceOption
		handout []int // ids handed out while every one is nacked
	}{
		{"off by default", nil, []int{1, 2}},
		{"off", []sheltertest.SourceOption{sheltertest.Replay(0)}, []int{1, 2}},
		{"at most twice, before new messages", []sheltertest.SourceOption{sheltertest.Replay(2)}, []int{1, 1, 1, 2, 2, 2}},
		{"without limit", []sheltertest.SourceOption{sheltertest.Replay(-1)}, []int{1, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := sheltertest.NewSource("a", "b").With(tt.opts...)
			var got []int
			for len(got) < len(tt.handout) {
				id, v, ok := sheltertest.Feed(src).Next()
				if !ok {
					break
				}
				if want := string(rune('a' + id - 1)); v != want {
					t.Fatalf("message %d handed out as %q, want %q", id, v, want)
				}
				got = append(got, id)
				sheltertest.Feed(src).Nack(id)
			}
			if !reflect.DeepEqual(got, tt.handout) {
				t.Fatalf("handed out %v, want %v", got, tt.handout)
			}
			if !reflect.DeepEqual(src.Nacked(), tt.handout) || len(src.Acked()) != 0 {
				t.Errorf("Nacked() = %v, Acked() = %v", src.Nacked(), src.Acked())
			}
			for i, h := range src.Handouts() {
				attempts := 0
				for _, id := range got[:i+1] {
					if id == h.ID {
						attempts++
					}
				}
				if h.Attempt != attempts {
					t.Errorf("handout %d: %+v, want attempt %d", i, h, attempts)
				}
			}
			if err := src.Verify(); err != nil {
				t.Errorf("Verify() = %v, want nil: one outcome per handout", err)
			}
		})
	}
}

func TestVerifyCountsOutcomesPerHandout(t *testing.T) {
	src := sheltertest.NewSource("a").With(sheltertest.Replay(1))
	handOut(t, src, 1)
	sheltertest.Feed(src).Nack(1)
	handOut(t, src, 1) // the replay
	sheltertest.Feed(src).Ack(1)
	sheltertest.Feed(src).Ack(1) // one too many
	err := src.Verify()
	if want := "sheltertest: message 1 has 3 outcomes for 2 handouts"; err == nil || err.Error() != want {
		t.Errorf("Verify() = %v, want %q", err, want)
	}
}

func TestHandoutsAndMaxOutstanding(t *testing.T) {
	src := sheltertest.NewSource(10, 20, 30, 40)
	before := time.Now()
	handOut(t, src, 3)
	sheltertest.Feed(src).Ack(2)
	sheltertest.Feed(src).Nack(1)
	handOut(t, src, 1)
	after := time.Now()
	got := src.Handouts()
	want := []struct{ id, value, outstanding int }{{1, 10, 1}, {2, 20, 2}, {3, 30, 3}, {4, 40, 2}}
	if len(got) != len(want) {
		t.Fatalf("Handouts() = %+v", got)
	}
	for i, w := range want {
		h := got[i]
		if h.ID != w.id || h.Value != w.value || h.Outstanding != w.outstanding || h.Attempt != 1 || h.Task != 0 {
			t.Errorf("handout %d = %+v, want id %d value %d outstanding %d", i, h, w.id, w.value, w.outstanding)
		}
		if h.At.Before(before) || h.At.After(after) {
			t.Errorf("handout %d at %v, not when it happened", i, h.At)
		}
	}
	if n := src.MaxOutstanding(); n != 3 {
		t.Errorf("MaxOutstanding() = %d, want 3", n)
	}
	if !reflect.DeepEqual(src.Acked(), []int{2}) || !reflect.DeepEqual(src.Nacked(), []int{1}) {
		t.Errorf("Acked() = %v, Nacked() = %v; want [2], [1]", src.Acked(), src.Nacked())
	}
}

func TestOnNextThatPanicsHandsOutNothing(t *testing.T) {
	panicked := false
	src := sheltertest.NewSource("a", "b", "c").With(sheltertest.OnNext(func(id int) error {
		if id == 2 && !panicked {
			panicked = true
			panic("Next of 2")
		}
		return nil
	}))
	handOut(t, src, 1)
	func() {
		defer func() {
			if p := recover(); p != "Next of 2" {
				t.Fatalf("recovered %v, want the hook's panic", p)
			}
		}()
		sheltertest.Feed(src).Next()
	}()
	var got []string
	for range 2 {
		id, v, _ := sheltertest.Feed(src).Next()
		got = append(got, v)
		sheltertest.Feed(src).Ack(id)
	}
	sheltertest.Feed(src).Ack(1)
	if !reflect.DeepEqual(got, []string{"b", "c"}) {
		t.Errorf("after the panic Next handed out %q, want b then c", got)
	}
	if ids := []int{src.Handouts()[1].ID, src.Handouts()[2].ID}; !reflect.DeepEqual(ids, []int{2, 3}) {
		t.Errorf("ids %v, want b to keep id 2", ids)
	}
	if err := src.Verify(); err != nil {
		t.Errorf("Verify() = %v: the message whose Next panicked was never handed out", err)
	}
}

func TestOnAckAndOnNackRunAfterTheOutcomeCounts(t *testing.T) {
	var calls []string
	src := sheltertest.NewSource(1, 2).With(
		sheltertest.OnAck(func(id int) error { calls = append(calls, "ack"); panic("ack") }),
		sheltertest.OnNack(func(id int) error { calls = append(calls, "nack"); return errors.New("nack failed") }),
	)
	handOut(t, src, 2)
	for _, settle := range []func(){func() { sheltertest.Feed(src).Ack(1) }, func() { sheltertest.Feed(src).Nack(2) }} {
		func() {
			defer func() { _ = recover() }() // by hand, a hook's error panics too
			settle()
		}()
	}
	if !reflect.DeepEqual(calls, []string{"ack", "nack"}) {
		t.Errorf("hooks ran %v", calls)
	}
	if err := src.Verify(); err != nil {
		t.Errorf("Verify() = %v: both calls count", err)
	}
}

func TestCallsTheRuntimeShouldNotMake(t *testing.T) {
	src := sheltertest.NewSource("a", "b", "c")
	handOut(t, src, 2)
	sheltertest.Feed(src).Ack(1)
	task := sheltertest.Feed(src)
	task.(interface{ Activate() }).Activate()
	handOut(t, src, 0)
	task.(interface{ Deactivate() }).Deactivate()
	if _, _, ok := task.Next(); ok {
		t.Error("a deactivated task's Next handed out a message")
	}
	src.Close()
	drained(t, src)
	sheltertest.Feed(src).Nack(2)
	err := src.Verify()
	want := "sheltertest: message 2 has no outcome; Next of task 0 after its deactivation; Next of task 0 after Close; Nack of message 2 after Close"
	if err == nil || err.Error() != want {
		t.Errorf("Verify() = %v\nwant %s", err, want)
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // nothing will settle it
	defer cancel()
	if err := src.WaitSettled(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitSettled with message 2 outstanding = %v, want the deadline", err)
	}
}

func TestWaitOutcomesAndWaitSettled(t *testing.T) {
	src := sheltertest.NewSource(1, 2, 3)
	short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	// Nothing is out yet: the reason names only what is left to hand out.
	if err := src.WaitSettled(short); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "3 to hand out") || strings.Contains(err.Error(), "outstanding") {
		t.Fatalf("WaitSettled before any Next = %v, want the deadline: 3 to hand out, nothing outstanding", err)
	}
	if err := src.WaitOutcomes(short, 1); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "0 outcomes, want 1") {
		t.Fatalf("WaitOutcomes = %v, want the deadline and the count", err)
	}
	handOut(t, src, 3)
	outcomes, settled := make(chan error), make(chan error)
	go func() { outcomes <- src.WaitOutcomes(ctxFor(t), 2) }()
	go func() { settled <- src.WaitSettled(ctxFor(t)) }()
	sheltertest.Feed(src).Ack(1)
	select {
	case err := <-outcomes:
		t.Fatalf("WaitOutcomes(2) returned %v after one outcome", err)
	case err := <-settled:
		t.Fatalf("WaitSettled returned %v with two outstanding", err)
	default:
	}
	sheltertest.Feed(src).Nack(3)
	if err := testsupport.Recv(t, outcomes, waitFor, "WaitOutcomes(2)"); err != nil {
		t.Fatal(err)
	}
	sheltertest.Feed(src).Ack(2)
	if err := testsupport.Recv(t, settled, waitFor, "WaitSettled"); err != nil {
		t.Fatal(err)
	}
}

// TestWaitIdleWaitsForTheSource: a generated source of 100 messages, two
// spout tasks and max pending 1; WaitIdle right after Run returns only when
// all 100 are acked.
func TestWaitIdleWaitsForTheSource(t *testing.T) {
	src := sheltertest.Generate(100, func(i int) item { return item{i} }, bothTasks())
	b := dsl.New("generated", dsl.Conf{dsl.MaxSpoutPending: 1})
	spout := b.Spout("items", src.Spout(), dsl.Parallelism(2))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(item, dsl.Emitter) error { return nil })), dsl.Shuffle[item]())
	r := run(t, b, sheltertest.NewClock(time.Unix(0, 0)).Option())
	if err := sheltertest.WaitIdle(ctxFor(t), r); err != nil {
		t.Fatal(err)
	}
	if n := len(src.Acked()); n != 100 {
		t.Fatalf("WaitIdle returned after %d acks of 100", n)
	}
	if n := src.MaxOutstanding(); n != 1 {
		t.Errorf("MaxOutstanding() = %d with two tasks at max pending 1, want 1 (per task)", n)
	}
	tasks := map[int]bool{}
	for _, h := range src.Handouts() {
		tasks[h.Task] = true
	}
	if len(tasks) != 2 {
		t.Errorf("handed out to tasks %v, want both", tasks)
	}
	if err := src.Verify(); err != nil {
		t.Error(err)
	}
}

// bothTasks holds the Next of message 1 until message 2 is taken, which only
// another task can do: a spout of two tasks then surely pulls from both.
// Without it, a task activated late on a loaded machine could find the
// source drained by the other.
func bothTasks() sheltertest.SourceOption {
	second := make(chan struct{})
	return sheltertest.OnNext(func(id int) error {
		switch id {
		case 1:
			<-second
		case 2:
			close(second)
		}
		return nil
	})
}

// TestWaitIdleSaysWhatTheSourceWaitsFor: a Next blocked in its hook keeps
// WaitIdle waiting, and its error says so.
//
// The sink holds message 1 until the release: its ack must not depend on the
// spout's task being busy. The spout calls Next for message 2 right after
// message 1's unless something already waits in its mailbox, so about 1 run
// in 100 message 1 was acked first and the error had no "1 outstanding".
func TestWaitIdleSaysWhatTheSourceWaitsFor(t *testing.T) {
	release, blocked := make(chan struct{}), make(chan struct{})
	src := sheltertest.NewSource(item{1}, item{2}).With(sheltertest.OnNext(func(id int) error {
		if id == 2 {
			close(blocked)
			<-release
		}
		return nil
	}))
	b := dsl.New("blocked", nil)
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(in item, _ dsl.Emitter) error {
		if in.N == 1 {
			<-release
		}
		return nil
	})), dsl.Shuffle[item]())
	r := run(t, b, sheltertest.NewClock(time.Unix(0, 0)).Option())
	testsupport.Recv(t, blocked, waitFor, "Next of message 2") // message 1 is handed out and held by the sink
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := sheltertest.WaitIdle(ctx, r)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `spout "items" waits for 1 outstanding, 1 Next in progress`) {
		t.Errorf("WaitIdle = %v, want the deadline and the Next in progress", err)
	}
	close(release)
	if err := sheltertest.WaitIdle(ctxFor(t), r); err != nil {
		t.Fatal(err)
	}
	if err := src.Verify(); err != nil {
		t.Error(err)
	}
}

// TestOnNextErrorFailsTheTask: a hook's error fails the spout's task, the
// topology restarts, and the message is handed out after the restart with
// its id.
func TestOnNextErrorFailsTheTask(t *testing.T) {
	var failed atomic.Bool
	src := sheltertest.NewSource(item{1}, item{2}).With(sheltertest.OnNext(func(id int) error {
		if id == 2 && failed.CompareAndSwap(false, true) {
			return errors.New("broker down")
		}
		return nil
	}))
	// Max pending 1: message 1 is acked before Next is asked for message 2.
	b := dsl.New("failing", dsl.Conf{dsl.MaxSpoutPending: 1})
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(item, dsl.Emitter) error { return nil })), dsl.Shuffle[item]())
	r := run(t, b, supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond, Cap: time.Millisecond}))
	if err := sheltertest.WaitIdle(ctxFor(t), r); err != nil {
		t.Fatal(err, r.Wait())
	}
	if s := r.Stats(); s.Restarts != 1 || !strings.Contains(s.Components["items"].LastError, "sheltertest: Next of message 2: broker down") {
		t.Errorf("restarts %d, last error %q; want one restart for the hook's error", s.Restarts, s.Components["items"].LastError)
	}
	if ids := src.Acked(); !reflect.DeepEqual(ids, []int{1, 2}) {
		t.Errorf("Acked() = %v, want [1 2]", ids)
	}
	if err := src.Verify(); err != nil {
		t.Error(err)
	}
}

// Replay(n) hands a nacked message out again up to n times, then no more.
func TestReplayHandsANackedMessageOutUpToNTimes(t *testing.T) {
	src := sheltertest.NewSource("a").With(sheltertest.Replay(2))
	feed := sheltertest.Feed(src)
	for handout := 1; handout <= 3; handout++ {
		id, v, ok := feed.Next()
		if !ok || v != "a" {
			t.Fatalf("handout %d: Next = %d, %q, %v; want the message again", handout, id, v, ok)
		}
		feed.Nack(id)
	}
	if id, _, ok := feed.Next(); ok {
		t.Errorf("message %d handed out a fourth time after 2 replays", id)
	}
}

// An OnAck or OnNack hook's error fails the task, naming the call; a hook
// that returns nil fails nothing.
func TestSettleHooksFailTheTaskOnlyOnAnError(t *testing.T) {
	refuse := errors.New("refused")
	hook := func(id int) error {
		if id == 2 {
			return refuse
		}
		return nil
	}
	src := sheltertest.NewSource("a", "b").With(sheltertest.OnAck(hook), sheltertest.OnNack(hook))
	feed := sheltertest.Feed(src) // a hook's error panics
	handOut(t, src, 2)
	feed.Ack(1) // nil: nothing
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, refuse) || !strings.Contains(err.Error(), "sheltertest: Nack of message 2") {
			t.Errorf("the task failed with %v, want the hook's error naming the Nack", err)
		}
	}()
	feed.Nack(2)
}
