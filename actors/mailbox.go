package actors

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// dataMsg marks the messages that travel on the bounded data lanes.
type dataMsg interface{ dataLane() }

// idle is invoked on an actor when its mailbox has just run dry, so it can flush.
type idle struct{}

var idleMsg any = idle{}

// A mailbox that keeps finding messages yields its core after holding it for
// a time slice, as a ring-buffer consumer thread is preempted by the OS. With
// more busy tasks than cores (a spout, a bolt and an acker on two), the task
// a busy one woke waits on that core's run queue until it yields; a bound of
// 256 messages let a spout catching up hold the core for milliseconds, its
// acker starving meanwhile and its pending window filling. It reads the
// clock once every sliceCheck messages (a message is a whole batch), the
// first read starting the slice, so a run that serves fewer reads none.
const (
	slice      = 200 * time.Microsecond
	sliceCheck = 8
)

// queue is an unbounded FIFO used by the system and control lanes.
type queue struct {
	mu    sync.Mutex // mu guards items and head
	items []any
	head  int
	// waiting counts the messages queued, so that pop on an empty queue (the
	// system lane before every message a task serves) takes no lock. A push
	// it misses is not lost: the pusher schedules the mailbox after pushing.
	waiting atomic.Int64
}

func (q *queue) push(m any) {
	q.mu.Lock()
	q.items = append(q.items, m)
	q.waiting.Add(1)
	q.mu.Unlock()
}

func (q *queue) pop() any {
	if q.waiting.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return nil
	}
	m := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	q.waiting.Add(-1)
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
	return m
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// mailbox is a protoactor-go Mailbox with a system lane, an unbounded control
// lane and bounded data lanes, one per sending task (edge), that park their
// sender when full.
type mailbox struct {
	system    queue
	control   queue
	data      edges
	closed    chan struct{} // closed by close(): parked senders give up
	closeOnce sync.Once
	// terminated is closed once the actor has handled protoactor's Stop: it
	// has stopped and will run no more of its code.
	terminated    chan struct{}
	terminateOnce sync.Once

	scheduled atomic.Bool
	suspended atomic.Bool
	// pending counts the system and control messages posted and not yet
	// taken. The data lanes keep no count a sender writes: a task that is
	// about to sleep asks each lane whether it holds a batch (waiting).
	pending atomic.Int64

	// ticks counts timer beats not yet delivered. Beats coalesce into one tick,
	// so a task slower than its tick period never builds a backlog of them.
	// The first beat puts tickMark on the control lane: the tick is served in
	// order with the control messages sent before it (an acker's rotation
	// comes after the Tracks sent to it before the timer fired, which is what
	// lets a test that moves a manual clock wait for the effect), and ahead of
	// the data lane, but right after a tick one input goes first (afterTick),
	// so ticks never starve inputs nor inputs ticks.
	ticks     atomic.Int32
	afterTick bool // the last message served was a tick; touched only by the goroutine running the mailbox

	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	// workers, when set, runs the mailbox instead of the dispatcher, and
	// processFn is m.process made once (a method value allocates).
	workers   *workers
	processFn func()

	// now and yield are the time slice's clock and its way to give up the
	// core: time.Now and runtime.Gosched, read once every sliceCheck messages.
	// A unit test sets its own to count the slices without the wall clock.
	now   func() time.Time
	yield func()
}

// tickMark stands on the control lane for the beats in mailbox.ticks.
type tickMark struct{}

var tickMarkMsg any = tickMark{}

// newMailbox makes a task's mailbox. Its data lanes share slots batches
// among senders (perEdgeSlots): each lane from one of them holds
// slots/senders, at least 2.
func newMailbox(slots, senders int) *mailbox {
	m := &mailbox{closed: make(chan struct{}), terminated: make(chan struct{}), now: time.Now, yield: runtime.Gosched}
	m.data.perEdge = perEdgeSlots(slots, senders)
	return m
}

// PostUserMessage puts everything on the control lane. Data travels on the
// data lanes (lane and send) instead: a batch needs the sender's identity.
func (m *mailbox) PostUserMessage(msg any) {
	m.pending.Add(1)
	m.control.push(msg)
	m.schedule()
}

// lane returns the data lane from task id to this mailbox, for the sender
// to keep.
func (m *mailbox) lane(from int) *edge { return m.data.from(from) }

// send puts msg on lane e (one of m's), parking while it is full; it reports
// false if the mailbox was closed first. It wakes the receiver only when the
// receiver is not already running or scheduled: while it runs, it finds the
// batch itself before it sleeps.
func (m *mailbox) send(e *edge, msg any) bool {
	if !e.put(msg, m.closed) {
		return false
	}
	if !m.scheduled.Load() {
		m.schedule()
	}
	return true
}

// putData sends msg on the lane from task from; tests and rare senders use
// it, the outbox keeps its lanes.
func (m *mailbox) putData(from int, msg any) bool { return m.send(m.lane(from), msg) }

// postTick records timer beats (several when a manual clock's Advance passed
// them at once); it never blocks and never queues more than one tick message.
// The count saturates rather than wraps: a task that sleeps through a long
// Advance must not see its beats turn negative.
func (m *mailbox) postTick(beats int) {
	add := int32(min(beats, math.MaxInt32))
	for {
		old := m.ticks.Load()
		if m.ticks.CompareAndSwap(old, old+min(add, math.MaxInt32-old)) {
			if old == 0 {
				m.pending.Add(1)
				m.control.push(tickMarkMsg)
				m.schedule()
			}
			return
		}
	}
}

// takeTick returns the coalesced beats as one message, or false if none; the
// mailbox calls it when it takes tickMark off the control lane.
func (m *mailbox) takeTick() (tick, bool) {
	n := m.ticks.Swap(0)
	if n == 0 {
		return tick{}, false
	}
	m.pending.Add(-1)
	return tick{n: n}, true
}

func (m *mailbox) markTerminated() { m.terminateOnce.Do(func() { close(m.terminated) }) }

// close wakes parked senders; later data is refused.
func (m *mailbox) close() { m.closeOnce.Do(func() { close(m.closed) }) }

func (m *mailbox) PostSystemMessage(msg any) {
	m.pending.Add(1)
	m.system.push(msg)
	m.schedule()
}

func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
}

func (m *mailbox) Start() {}

// UserMessageCount returns the messages waiting on the control and data lanes
// (a pending tick counts once, as its tickMark).
func (m *mailbox) UserMessageCount() int {
	return m.control.len() + m.data.len()
}

// waiting reports whether a message, a tick or a batch waits, without a
// lock and writing nothing: a task in a loop of its own asks it to know when
// to yield, and process before the mailbox sleeps.
func (m *mailbox) waiting() bool { return m.pending.Load() != 0 || m.data.ready() }

// depth returns the number of data batches waiting.
func (m *mailbox) depth() int { return m.data.len() }

func (m *mailbox) schedule() {
	if m.scheduled.CompareAndSwap(false, true) {
		if m.workers != nil {
			m.workers.schedule(m.processFn)
			return
		}
		m.dispatcher.Schedule(m.process)
	}
}

func (m *mailbox) process() {
	for {
		m.run()
		// Announce the sleep first, then look: a sender stores its batch
		// and then reads scheduled, so one of the two sees the other.
		m.scheduled.Store(false)
		if !m.waiting() || (m.suspended.Load() && m.system.len() == 0) {
			return
		}
		if !m.scheduled.CompareAndSwap(false, true) {
			return
		}
	}
}

func (m *mailbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			var reason any = &panicError{value: r, stack: debug.Stack()}
			if f, ok := r.(taskFailure); ok {
				reason = f.err // dsl.TaskInfo.Fail: the component's own error
			}
			m.invoker.EscalateFailure(reason, msg)
		}
	}()
	served, dirty := 0, false
	var began time.Time // the slice's start, read at its first check: most runs end sooner
	for {
		if served++; served%sliceCheck == 0 {
			if now := m.now(); began.IsZero() {
				began = now
			} else if now.Sub(began) > slice {
				m.yield()
				began = time.Time{}
			}
		}
		if msg = m.system.pop(); msg != nil {
			m.pending.Add(-1)
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended.Store(true)
			case *actor.ResumeMailbox:
				m.suspended.Store(false)
			case *actor.Stop:
				m.invoker.InvokeSystemMessage(msg)
				m.markTerminated()
			default:
				m.invoker.InvokeSystemMessage(msg)
			}
			continue
		}
		if m.suspended.Load() {
			return
		}
		if msg = m.control.pop(); msg != nil {
			if msg == tickMarkMsg {
				m.serveTick(&msg)
			} else {
				m.pending.Add(-1)
				m.afterTick = false
				m.invoker.InvokeUserMessage(msg)
			}
			dirty = true
			continue
		}
		if msg = m.data.take(); msg != nil {
			m.afterTick = false
			m.invoker.InvokeUserMessage(msg)
			dirty = true
			continue
		}
		if !dirty {
			return
		}
		dirty = false
		msg = idleMsg
		m.invoker.InvokeUserMessage(idleMsg)
	}
}

// serveTick serves the beats tickMark stood for. If the message served last
// was a tick too (a task whose tick outlasts its period, or a test that
// advances its clock from the tick), one input waiting on the data lane goes
// first. It sets *msg to each message before serving it, for run's recover.
func (m *mailbox) serveTick(msg *any) {
	if m.afterTick {
		if *msg = m.data.take(); *msg != nil {
			m.invoker.InvokeUserMessage(*msg)
		}
	}
	if t, ok := m.takeTick(); ok {
		*msg = t
		m.afterTick = true
		m.invoker.InvokeUserMessage(t)
	}
}

// panicError is a panic recovered from a task, with the stack where it happened.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// Unwrap returns the panic value if it was an error.
func (p *panicError) Unwrap() error {
	err, _ := p.value.(error)
	return err
}
