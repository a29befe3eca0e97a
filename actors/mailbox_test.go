package actors

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// recorder is a MessageInvoker that records what it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []any
	hook func(any)
}

func (r *recorder) InvokeSystemMessage(m any) { r.InvokeUserMessage(m) }
func (r *recorder) InvokeUserMessage(m any) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(m)
	}
}
func (r *recorder) EscalateFailure(reason, _ any) { r.InvokeUserMessage(reason) }

func (r *recorder) got() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.msgs...)
}

// manualDispatcher runs scheduled mailboxes only when told to.
type manualDispatcher struct {
	mu  sync.Mutex
	fns []func()
}

func (d *manualDispatcher) Schedule(fn func()) {
	d.mu.Lock()
	d.fns = append(d.fns, fn)
	d.mu.Unlock()
}
func (d *manualDispatcher) Throughput() int { return 300 }

func (d *manualDispatcher) runAll() {
	d.mu.Lock()
	fns := d.fns
	d.fns = nil
	d.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func TestControlIsServedBeforeDataAndIdleFollows(t *testing.T) {
	m, rec, d := newMailbox(4, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	data := &tupleBatch{}
	m.putData(1, data)
	m.PostUserMessage(tick{})
	m.PostSystemMessage("sys")
	d.runAll()
	got := rec.got()
	want := []any{"sys", tick{}, data, idle{}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d: got %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}

func TestFullDataLaneParksTheSenderUntilThereIsRoom(t *testing.T) {
	m, rec, d := newMailbox(2, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	m.putData(1, &tupleBatch{})
	m.putData(1, &tupleBatch{})
	sent := make(chan struct{})
	go func() {
		m.putData(1, &tupleBatch{}) // the lane is full: this parks
		close(sent)
	}()
	testsupport.WaitUntil(t, 5*time.Second, "the sender to park", m.lane(1).parked.Load)
	select {
	case <-sent:
		t.Fatal("a third batch was accepted by a two-slot lane")
	default:
	}
	d.runAll() // drains the lane, which lets the parked sender in
	testsupport.Recv(t, sent, 5*time.Second, "the parked sender")
	d.runAll()
	if n := len(rec.got()); n < 4 { // three batches and at least one idle
		t.Fatalf("got %d messages: %v", n, rec.got())
	}
}

func TestCloseWakesAParkedSender(t *testing.T) {
	m, rec, d := newMailbox(2, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	m.putData(1, &tupleBatch{})
	m.putData(1, &tupleBatch{})
	result := make(chan bool)
	go func() { result <- m.putData(1, &tupleBatch{}) }()
	m.close()
	if ok := testsupport.Recv(t, result, 5*time.Second, "the parked sender's answer"); ok {
		t.Fatal("putData on a closed, full mailbox reported success")
	}
}

func TestControlLaneIsNeverFull(t *testing.T) {
	m, rec, d := newMailbox(1, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	for i := 0; i < 10000; i++ {
		m.PostUserMessage(tick{})
	}
	d.runAll()
	if n := len(rec.got()); n != 10001 {
		t.Fatalf("got %d messages, want 10000 ticks and one idle", n)
	}
}

func TestSuspendedMailboxServesOnlySystemMessages(t *testing.T) {
	m, rec, d := newMailbox(1, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	m.PostSystemMessage(&actor.SuspendMailbox{})
	m.PostUserMessage(tick{})
	m.PostSystemMessage("stop")
	d.runAll()
	got := rec.got()
	if len(got) != 1 || got[0] != "stop" {
		t.Fatalf("a suspended mailbox delivered %v", got)
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	d.runAll()
	if got := rec.got(); len(got) != 3 || got[1] != (tick{}) {
		t.Fatalf("after resume got %v", got)
	}
}

func TestPanicIsEscalatedWithItsStack(t *testing.T) {
	m, rec, d := newMailbox(1, 1), &recorder{}, &manualDispatcher{}
	rec.hook = func(msg any) {
		if msg == (tick{}) {
			panic("boom")
		}
	}
	m.RegisterHandlers(rec, d)
	m.PostUserMessage(tick{})
	d.runAll()
	var pe *panicError
	for _, msg := range rec.got() {
		if p, ok := msg.(*panicError); ok {
			pe = p
		}
	}
	if pe == nil || pe.value != "boom" || len(pe.stack) == 0 {
		t.Fatalf("no panicError with a stack in %v", rec.got())
	}
	if pe.Error() != "panic: boom" || pe.Unwrap() != nil {
		t.Errorf("panicError: Error() %q, Unwrap() %v; want \"panic: boom\", nil", pe.Error(), pe.Unwrap())
	}
}

// A queue counts what waits in it, so that popping an empty one takes no lock.
func TestQueueCountsWhatWaits(t *testing.T) {
	var q queue
	q.push(1)
	q.push(2)
	if n := q.waiting.Load(); n != 2 {
		t.Fatalf("waiting %d after two pushes", n)
	}
	if m := q.pop(); m != 1 {
		t.Fatalf("popped %v, want 1", m)
	}
	if n := q.waiting.Load(); n != 1 {
		t.Fatalf("waiting %d after a pop of two", n)
	}
	q.pop()
	if m, n := q.pop(), q.waiting.Load(); m != nil || n != 0 {
		t.Fatalf("an empty queue popped %v with %d waiting", m, n)
	}
}

// A timer's beats are served in order with the control messages sent before
// them (an acker rotates after the Tracks sent to it before the timer fired)
// and ahead of the data lane; the beats posted meanwhile join the tick.
func TestTickIsServedInOrderWithTheControlLane(t *testing.T) {
	m, rec, d := newMailbox(4, 1), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	data := &tupleBatch{}
	m.putData(1, data)
	m.PostUserMessage("before")
	m.postTick(1)
	m.PostUserMessage("after")
	m.postTick(2)
	d.runAll()
	want := []any{"before", tick{n: 3}, "after", data, idle{}}
	if got := rec.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A tick that posts the next tick (its work outlasts the period, or a test
// advances its clock from it) lets one input through between the two: ticks
// never starve inputs, nor inputs ticks.
func TestTicksAndInputsTakeTurns(t *testing.T) {
	m, rec, d := newMailbox(4, 1), &recorder{}, &manualDispatcher{}
	ticks := 0
	rec.hook = func(msg any) {
		if _, ok := msg.(tick); ok && ticks < 3 {
			ticks++
			m.postTick(1)
		}
	}
	m.RegisterHandlers(rec, d)
	first, second := &tupleBatch{}, &tupleBatch{}
	m.putData(1, first)
	m.putData(1, second)
	m.postTick(1)
	d.runAll()
	want := []any{tick{n: 1}, first, tick{n: 1}, second, tick{n: 1}, tick{n: 1}, idle{}}
	if got := rec.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A mailbox that keeps finding messages yields its core after each time
// slice, and not before. A slice starts at a check of the clock (one every
// sliceCheck messages) and ends at the first check past it: on a clock that
// moves 20 µs a message, 2 checks later (320 µs), so the core is yielded every
// 3 checks, 24 messages; at 25 µs a message the first check after the start
// reads exactly 200 µs, which is not past it. Without the slice a run would
// hold the core until Go preempts it.
func TestABusyMailboxYieldsItsCoreAfterEachSlice(t *testing.T) {
	const total = 200
	for _, work := range []time.Duration{20 * time.Microsecond, 25 * time.Microsecond} {
		m, rec, d := newMailbox(4, 1), &recorder{}, &manualDispatcher{}
		m.RegisterHandlers(rec, d)
		var served int
		clock := time.Unix(0, 0)
		m.now = func() time.Time { return clock }
		var yields []int // messages served at each yield
		m.yield = func() { yields = append(yields, served) }
		rec.hook = func(msg any) {
			if _, ok := msg.(int); !ok {
				return
			}
			served++
			clock = clock.Add(work)
			if served < total {
				m.PostUserMessage(0) // always one more: the run never runs dry
			}
		}
		m.PostUserMessage(0)
		d.runAll() // this goroutine runs the mailbox: the stand-ins need no lock
		if served != total {
			t.Fatalf("%v: served %d messages, want %d", work, served, total)
		}
		after := int(slice/(sliceCheck*work)) + 1 // checks from a slice's start to its end
		every := (after + 1) * sliceCheck         // messages from one yield to the next
		if every > total/4 {
			t.Fatalf("a slice of %v is %d messages of %v: the run of %d holds too few", slice, every, work, total)
		}
		if len(yields) != total/every {
			t.Fatalf("%v: yielded after %v messages, want every %d of %d", work, yields, every, total)
		}
		for i := 1; i < len(yields); i++ {
			if n := yields[i] - yields[i-1]; n != every {
				t.Errorf("%v: a slice lasted %d messages (yields after %v), want %d", work, n, yields, every)
			}
		}
	}
}
