package actors

import (
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"
)

// The barrier makes a test's manual clock (clock.Manual) wait for the tasks,
// so that moving the clock is a step a test can reason about: the timers it
// makes due (acker rotations, tick tuples, spout back-offs) only post
// messages, and without it a rotation could overtake a Track still queued for
// the acker (or held in a spout's outbox), and Advance would return before any
// tree was nacked.
//
// Before the clock runs its first due callback, and after each one, it calls
// settle, which passes a settle message through every task, group by group:
//
//   - spouts: what they were sent before (acks, a back-off's next) is handled
//     and their outboxes are flushed: their trees' Tracks reach the ackers'
//     lanes and their tuples the bolts' lanes;
//   - bolts: the inputs queued before are executed, a pending tick is handled,
//     and their acks, fails and emits are flushed;
//   - ackers: every operation sent before is applied, a pending rotation
//     expires what it must, and outcomes are sent to the spouts;
//   - spouts again: they hand those outcomes to the source (Ack, Nack).
//
// A bolt's settle message travels on the data lane, behind the inputs queued
// before it; the mailbox serves the control lane before the data lane, so
// control messages sent before it are served first too. Spouts and ackers
// get theirs on the control lane, where all their work arrives (a spout's
// data lane is unused, and would starve behind a steady flow of next or acker
// operations). The mailbox serves a pending tick right before a settle message
// (mailbox.tickBefore), however ticks and other messages interleave.
//
// A spout's Next is not always waited for: a source may block there until the
// test gives it data (or answers it), so a barrier that waited for it would
// wait for the test. A spout passes a barrier when it handles the settle
// message, or when it is about to call Next, or is in Next, with nothing it
// emitted before still held in its outbox and nothing queued for it
// (nextGate): what that Next emits comes after the barrier. When acks or
// nacks are queued for it (the outcomes of the trees a rotation expired), the
// barrier waits for the Next under way to return, unless the spout's goroutine
// is seen blocked in it (on a channel, a lock, a sleep): those outcomes reach
// the source when that Next returns. And a spout about to call Next with acks
// or nacks queued that a barrier waits for ends its burst to serve them first.
// So a test that advances the clock after a message was handed out, but before
// it could be seen downstream, may find that Advance did not wait for it: wait
// for a bolt to receive it first.
//
// Called from inside a task (a bolt's Execute or Tick, a spout's Next, a
// Post'ed function), settle waits for nothing: the task cannot handle a settle
// message while it waits, and the others may be parked sending to it (a full
// ring), so any wait could deadlock. Advance there only runs the callbacks, as
// a clock without a barrier does. A goroutine of a component that the task
// itself waits for must not call Advance either: that wait cannot be seen.
type barrier struct {
	inc    *incarnation
	groups [][]int      // task ids: spouts, bolts, ackers, spouts
	bolts  map[int]bool // bolt task ids: their settle messages go on the data lane
	spouts map[int]bool // spout task ids: they may pass the barrier at a Next
}

// settle is the message of the barrier: the task handles what was queued
// before it, flushes what it holds and closes done.
type settle struct{ done chan struct{} }

// nextGate is where a barrier meets a spout task around its Next calls.
type nextGate struct {
	mu      sync.Mutex // mu guards every field below
	inNext  bool       // the spout is in Next with nothing held from before
	seq     uint64     // Next calls entered, to tell one from the next
	goid    string     // the goroutine running the current Next
	waiting []waiter   // barriers waiting for the spout
}

// waiter is a barrier waiting for a spout to take the first mark messages its
// control lane ever got (all those sent before the barrier came).
type waiter struct {
	done chan struct{}
	mark uint64
}

// wait registers a barrier's done, or closes it if the spout is in a Next with
// nothing held and nothing queued for it: then it reports false, and no settle
// message is needed. If something is queued for a spout in Next (acks and
// nacks), wait waits until that Next returns, unless the spout is seen blocked
// in it (waiting for the test, maybe), or halted closes.
func (g *nextGate) wait(done chan struct{}, control *queue, halted <-chan struct{}) bool {
	for {
		g.mu.Lock()
		pushed, popped := control.marks()
		if !g.inNext {
			g.waiting = append(g.waiting, waiter{done: done, mark: pushed})
			g.mu.Unlock()
			return true
		}
		seq, goid := g.seq, g.goid
		g.mu.Unlock()
		if pushed == popped || blocked(goid) {
			close(done)
			return false
		}
		for g.inSameNext(seq) { // running: it returns soon
			select {
			case <-halted:
				close(done)
				return false
			case <-time.After(20 * time.Microsecond):
			}
			if blocked(goid) {
				break
			}
		}
	}
}

func (g *nextGate) inSameNext(seq uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inNext && g.seq == seq
}

// release lets go the barriers whose control messages the spout has all taken
// (handled, or being handled: the message it is in); the spout calls it with
// nothing held.
func (g *nextGate) release(control *queue) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, popped := control.marks()
	kept := g.waiting[:0]
	for _, w := range g.waiting {
		if w.mark <= popped {
			close(w.done)
		} else {
			kept = append(kept, w)
		}
	}
	clear(g.waiting[len(kept):])
	g.waiting = kept
}

// enter is called by the spout right before Next. If a barrier waits for
// messages still on the control lane (acks and nacks to hand to the source),
// it reports false: the spout ends its burst and serves them first. Else the
// barriers waiting are let go once what the spout holds is flushed (flush),
// and while Next runs, later barriers pass if nothing is held (held) and
// nothing queued. Whatever Next emits comes after them.
func (g *nextGate) enter(control *queue, flush func(), held func() bool) bool {
	g.mu.Lock()
	_, popped := control.marks()
	waiting := len(g.waiting) > 0
	for _, w := range g.waiting {
		if w.mark > popped {
			g.mu.Unlock()
			return false
		}
	}
	g.mu.Unlock()
	if waiting {
		flush() // unlocked: it may park on a full ring
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !held() { // the spout emits nothing meanwhile: barriers that came since may go too
		g.release0Locked()
		g.inNext, g.seq, g.goid = true, g.seq+1, goroutineID()
	}
	return true
}

// release0Locked lets every waiting barrier go.
func (g *nextGate) release0Locked() {
	for _, w := range g.waiting {
		close(w.done)
	}
	clear(g.waiting)
	g.waiting = g.waiting[:0]
}

// leave is called by the spout when Next returns.
func (g *nextGate) leave() {
	g.mu.Lock()
	g.inNext = false
	g.mu.Unlock()
}

// goroutineID returns the calling goroutine's id, as its stack's header
// ("goroutine 42 [running]:") shows it.
func goroutineID() string {
	var buf [64]byte
	header := buf[:runtime.Stack(buf[:], false)]
	header, _, _ = bytes.Cut(bytes.TrimPrefix(header, []byte("goroutine ")), []byte(" "))
	return string(header)
}

// blocked reports whether goroutine id waits (on a channel, a lock, a timer,
// I/O): it will not go on by itself. A goroutine that is running or ready to
// run, or that no longer exists, does not count.
func blocked(id string) bool {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	_, rest, found := bytes.Cut(buf, []byte("goroutine "+id+" ["))
	if !found {
		return false
	}
	state, _, _ := bytes.Cut(rest, []byte("]"))
	state, _, _ = bytes.Cut(state, []byte(","))
	switch s := string(state); {
	case s == "running", s == "runnable", s == "preempted", s == "syscall",
		strings.HasPrefix(s, "GC"), strings.HasPrefix(s, "garbage collection"):
		return false
	}
	return true
}

// settler is the clock.Manual side of the barrier.
type settler interface {
	Settle(f func()) (remove func())
}

// timerFunc lets a function stand in the system task's timers, which it stops.
type timerFunc func()

func (f timerFunc) Stop() { f() }

func newBarrier(inc *incarnation) *barrier {
	var ackers, bolts, spouts []int
	for _, t := range inc.plan.Tasks {
		switch {
		case t.Component == nil:
			ackers = append(ackers, t.ID)
		case t.Component.Spout != nil:
			spouts = append(spouts, t.ID)
		default:
			bolts = append(bolts, t.ID)
		}
	}
	b := &barrier{inc: inc, groups: [][]int{spouts, bolts, ackers, spouts}, bolts: map[int]bool{}, spouts: map[int]bool{}}
	for _, id := range bolts {
		b.bolts[id] = true
	}
	for _, id := range spouts {
		b.spouts[id] = true
	}
	return b
}

// settle passes a settle message through every group in turn. It gives up
// when the incarnation halts (it stops or a task failed): what it waits for
// may then never happen.
func (b *barrier) settle() {
	if inTask() {
		return
	}
	for _, group := range b.groups {
		if !b.through(group) {
			return
		}
	}
}

// through sends a settle message to every task of group and waits until each
// has handled it; false means the incarnation halted first.
func (b *barrier) through(group []int) bool {
	dones := make([]chan struct{}, len(group))
	for i, id := range group {
		dones[i] = make(chan struct{})
		box, msg := b.inc.boxes[id], settle{done: dones[i]}
		switch {
		case b.bolts[id]:
			if !box.putDataUnless(msg, b.inc.halted) {
				return false
			}
		case b.spouts[id]:
			if box.gate.wait(dones[i], &box.control, b.inc.halted) {
				box.PostUserMessage(msg)
			}
		default:
			box.PostUserMessage(msg)
		}
	}
	for _, done := range dones {
		select {
		case <-done:
		case <-b.inc.halted:
			return false
		}
	}
	return true
}

// runName is the function under which a task handles all its messages.
var runName = runtime.FuncForPC(reflect.ValueOf((*mailbox).run).Pointer()).Name()

// inTask reports whether the caller runs on a task's goroutine, under a
// mailbox's run: Go has no goroutine identity, the stack tells.
func inTask() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs)) // deeper than the buffer: the bottom frames matter
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function == runName {
			return true
		}
		if !more {
			return false
		}
	}
}
