package actors

import (
	"reflect"
	"runtime"
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
}

// settle is the message of the barrier: the task handles what was queued
// before it, flushes what it holds and closes done.
type settle struct{ done chan struct{} }

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
	b := &barrier{inc: inc, groups: [][]int{spouts, bolts, ackers, spouts}, bolts: map[int]bool{}}
	for _, id := range bolts {
		b.bolts[id] = true
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
		if !b.bolts[id] {
			box.PostUserMessage(msg)
		} else if !box.putDataUnless(msg, b.inc.halted) {
			return false
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
