package actors

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/routing"
)

func TestPerEdgeSlotsDivideTheReceiveBuffer(t *testing.T) {
	for _, tt := range []struct{ slots, senders, want int }{
		{256, 1, 256}, // one sender keeps the whole buffer, as before lanes per edge
		{256, 0, 256}, // a task nobody sends to (a spout): no lane is ever made
		{256, 2, 128},
		{256, 3, 64}, // rounded down: the lanes together stay within the buffer
		{256, 128, 2},
		{256, 129, 2}, // at least 2, so one batch fills while another executes
		{256, 4096, 2},
		{2, 1, 2},
		{1 << 20, 1, 1 << 20},
	} {
		if got := perEdgeSlots(tt.slots, tt.senders); got != tt.want {
			t.Errorf("perEdgeSlots(%d, %d) = %d, want %d", tt.slots, tt.senders, got, tt.want)
		}
	}
}

func TestSendersOfCountsEveryTaskFeedingAComponent(t *testing.T) {
	b := dsl.New("senders", nil)
	a := b.Spout("a", dsl.Unreliable(func() (num, bool) { return num{}, false }), dsl.Parallelism(3))
	c := b.Spout("c", dsl.Unreliable(func() (num, bool) { return num{}, false }), dsl.Parallelism(2))
	sink := b.Bolt("sink", dsl.Terminator(func(num) {}), dsl.Parallelism(2))
	b.Unanchored(a, sink, dsl.Shuffle[num]())
	b.Unanchored(c, sink, dsl.Shuffle[num]())
	plan := routing.Compile(build(t, b))
	for _, id := range plan.Topology.Component("sink").Tasks {
		if n := sendersOf(plan, id); n != 5 {
			t.Errorf("sink task %d: %d senders, want 5 (3 of a, 2 of c)", id, n)
		}
	}
	if n := sendersOf(plan, plan.Topology.Component("a").Tasks[0]); n != 0 {
		t.Errorf("a spout has %d senders, want 0", n)
	}
	if n := sendersOf(plan, plan.Ackers[0]); n != 0 {
		t.Errorf("an acker has %d data senders, want 0", n)
	}
}

// Senders are served in turn, one message each, whatever order they sent in:
// a busy sender cannot starve a quiet one.
func TestLanesAreServedInTurn(t *testing.T) {
	m, rec, d := newMailbox(256, 3), &recorder{}, &manualDispatcher{}
	m.RegisterHandlers(rec, d)
	batches := map[int][]*tupleBatch{}
	for _, from := range []int{7, 8, 9} {
		for range 3 {
			b := &tupleBatch{task: from}
			batches[from] = append(batches[from], b)
			m.putData(from, b)
		}
	}
	d.runAll()
	var want []any
	for i := range 3 {
		for _, from := range []int{7, 8, 9} {
			want = append(want, batches[from][i])
		}
	}
	want = append(want, idle{})
	got := rec.got()
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			b, _ := got[i].(*tupleBatch)
			t.Fatalf("message %d came from %v, want the lanes in turn", i, b)
		}
	}
}

// A full lane parks its own sender only: another sender's batches still go in.
func TestAFullLaneParksOnlyItsSender(t *testing.T) {
	m, rec, d := newMailbox(4, 2), &recorder{}, &manualDispatcher{} // 2 slots a lane
	m.RegisterHandlers(rec, d)
	m.putData(1, &tupleBatch{})
	m.putData(1, &tupleBatch{})
	lane := m.lane(1)
	parked := make(chan bool)
	go func() { parked <- m.putData(1, &tupleBatch{}) }()
	testsupport.WaitUntil(t, 5*time.Second, "the third batch to park", lane.parked.Load)
	select {
	case ok := <-parked:
		t.Fatalf("a third batch went into a lane of 2 (ok=%v)", ok)
	default:
	}
	if !m.putData(2, &tupleBatch{}) { // another lane has room
		t.Fatal("sender 2 was refused")
	}
	if n := m.depth(); n != 3 {
		t.Fatalf("depth %d, want 3", n)
	}
	d.runAll() // frees lane 1's slots: the parked sender goes in
	if !testsupport.Recv(t, parked, 5*time.Second, "the parked sender") {
		t.Fatal("the parked sender was refused")
	}
	d.runAll()
	if n := m.depth(); n != 0 {
		t.Fatalf("depth %d after serving, want 0", n)
	}
}

// Many senders on small lanes, with the receiver running on the workers as in
// a topology: every message arrives once, in its sender's order, and no
// sender stays parked (a lost wake-up would hang it).
func TestLanesUnderConcurrentSenders(t *testing.T) {
	const senders, each = 4, 20000
	m := newMailbox(2, senders) // 2 slots a lane: senders park often
	w := newWorkers()
	defer w.close()
	m.workers, m.processFn = w, m.process
	next := make([]int, senders+1)
	done := make(chan struct{})
	var errs []string
	got := 0
	m.RegisterHandlers(&funcInvoker{fn: func(msg any) {
		b, ok := msg.(*tupleBatch)
		if !ok {
			return // idle
		}
		if b.len() != 1 || b.values[0] != next[b.task] {
			errs = append(errs, "out of order")
		}
		next[b.task]++
		if got++; got == senders*each {
			close(done)
		}
	}}, nil)
	var wg sync.WaitGroup
	for s := 1; s <= senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lane := m.lane(s)
			for i := range each {
				m.send(lane, &tupleBatch{task: s, values: []any{i}})
			}
		}()
	}
	testsupport.Recv(t, done, 30*time.Second, "every message")
	wg.Wait()
	if len(errs) != 0 {
		t.Fatalf("%d messages out of their sender's order", len(errs))
	}
	for s := 1; s <= senders; s++ {
		if next[s] != each {
			t.Errorf("sender %d: %d messages arrived, want %d", s, next[s], each)
		}
	}
}

// The sizes actors' doc comment states for a lane, and the distance that
// keeps what the sender writes off the receiver's cache line.
func TestEdgeLayout(t *testing.T) {
	var e edge
	if s := unsafe.Sizeof(e); s != 192 {
		t.Errorf("an edge is %d bytes, the doc says 192", s)
	}
	if d := unsafe.Offsetof(e.head) - unsafe.Offsetof(e.tail); d < cacheLine {
		t.Errorf("head is %d bytes after tail, want a cache line (%d) at least", d, cacheLine)
	}
	// The sender reads the fixed fields on every batch: they must not share
	// the line the receiver writes, wherever the edge starts in memory.
	if d := unsafe.Offsetof(e.head) - (unsafe.Offsetof(e.from) + unsafe.Sizeof(e.from)); d < cacheLine {
		t.Errorf("head is %d bytes after the fixed fields, want a cache line (%d) at least", d, cacheLine)
	}
}

// A lane of n slots takes n messages without waiting, and parks the n+1st:
// with the stop already signalled, that one reports false.
func TestEdgeHoldsExactlyItsSlots(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		e := newEdge(1, n)
		closed := make(chan struct{})
		close(closed)
		for i := range n {
			if !e.put(i, closed) {
				t.Fatalf("%d slots: put %d of %d waited for room", n, i+1, n)
			}
		}
		if e.put(n, closed) {
			t.Fatalf("%d slots: put %d found room in a full lane", n, n+1)
		}
		if got := e.len(); got != n {
			t.Fatalf("%d slots: len = %d after filling it", n, got)
		}
		// A parked sender goes on as soon as one slot is free.
		done, stop := make(chan bool, 1), make(chan struct{})
		go func() { done <- e.put(n, stop) }()
		testsupport.WaitUntil(t, 5*time.Second, "the sender parked", e.parked.Load)
		if e.take() != 0 {
			t.Fatalf("%d slots: take did not return the oldest", n)
		}
		if !testsupport.Recv(t, done, 5*time.Second, "the parked put after one take") {
			t.Fatalf("%d slots: the parked put gave up", n)
		}
		close(stop)
	}
}
