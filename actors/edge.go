package actors

import (
	"sync"
	"sync/atomic"
)

// cacheLine is the size the fields of an edge are kept apart by, so that what
// the sender writes and what the receiver writes never share a line.
const cacheLine = 64

// edge is the data lane from one sending task to one receiving task: a ring
// of batches (and barriers) with one writer and one reader. The sender alone
// writes the slots and tail, the receiver alone head, each on a cache line of
// its own; handing a batch over therefore moves the slot's line and the tail's
// line to the receiver and nothing back, with no lock and no counter that both
// sides write. Each side keeps the other's index as last seen and reads the
// real one only when the ring looks full (sender) or empty (receiver).
//
// A sender that finds the ring full parks until the receiver frees a slot:
// it raises parked, looks at head once more, and waits for a token on wake.
// The receiver, after advancing head, looks at parked and sends the token.
// Both write their own word and then read the other's (sync/atomic is
// sequentially consistent), so at least one of them sees the other: the
// sender never sleeps on a ring with room.
type edge struct {
	// Fixed at creation, read by both sides.
	slots []any
	mask  uint64
	wake  chan struct{} // one token: the receiver freed a slot while the sender was parked
	from  int           // the sending task's id
	_     [cacheLine - 48]byte

	// The sender's line.
	tail     atomic.Uint64
	headSeen uint64      // head as the sender last read it
	parked   atomic.Bool // the sender waits on wake for room
	_        [cacheLine - 20]byte

	// The receiver's line.
	head     atomic.Uint64
	tailSeen uint64 // tail as the receiver last read it
	_        [cacheLine - 16]byte
}

func newEdge(from, slots int) *edge {
	return &edge{slots: make([]any, slots), mask: uint64(slots - 1), wake: make(chan struct{}, 1), from: from}
}

// len returns the messages waiting in the ring; any goroutine may ask.
func (e *edge) len() int {
	h := e.head.Load() // first: head never passes a tail read after it
	return int(e.tail.Load() - h)
}

// put appends msg, parking while the ring is full. It reports false, with msg
// not sent, if closed closes first. Only the sender calls it.
func (e *edge) put(msg any, closed <-chan struct{}) bool {
	t := e.tail.Load()
	if t-e.headSeen > e.mask {
		e.headSeen = e.head.Load()
		if t-e.headSeen > e.mask && !e.awaitRoom(t, closed) {
			return false
		}
	}
	e.slots[t&e.mask] = msg
	e.tail.Store(t + 1)
	return true
}

// awaitRoom parks the sender until slot t is free.
func (e *edge) awaitRoom(t uint64, closed <-chan struct{}) bool {
	defer e.parked.Store(false)
	for {
		e.parked.Store(true)
		if e.headSeen = e.head.Load(); t-e.headSeen <= e.mask {
			return true
		}
		select {
		case <-e.wake:
		case <-closed:
			return false
		}
	}
}

// take removes the oldest message, or returns nil when the ring is empty. Only
// the receiver calls it.
func (e *edge) take() any {
	h := e.head.Load()
	if h == e.tailSeen {
		if e.tailSeen = e.tail.Load(); h == e.tailSeen {
			return nil
		}
	}
	msg := e.slots[h&e.mask]
	e.slots[h&e.mask] = nil
	e.head.Store(h + 1)
	if e.parked.Load() {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	return msg
}

// ready reports whether a message waits. It writes nothing: the receiver
// asks it after announcing that it will sleep, when a sender may already have
// scheduled the next run of the mailbox on another goroutine.
func (e *edge) ready() bool {
	h := e.head.Load()
	return e.tail.Load() != h
}

// edges is a task's set of inbound lanes, one per sender, made on a sender's
// first batch. The receiver reads the set with one atomic load per pass; a
// sender adds its lane by publishing a copy.
type edges struct {
	mu      sync.Mutex // mu serializes senders adding a lane
	all     atomic.Pointer[[]*edge]
	perEdge int // slots of each lane
	next    int // the lane the receiver serves first on its next pass (fairness); the receiver's
}

// perEdgeSlots divides a task's receive buffer of slots batches among its
// senders: a power of two, at least 2 per sender so that a sender can fill one
// batch while the receiver executes another. A task's inbound lanes together
// hold at most max(slots, 2 x senders) batches.
func perEdgeSlots(slots, senders int) int {
	per := max(slots/max(senders, 1), 2)
	p := 2
	for p*2 <= per {
		p *= 2
	}
	return p
}

// from returns the lane from task id, making it on first use.
func (s *edges) from(id int) *edge {
	if e := laneFrom(s.lanes(), id); e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.lanes() // again: another sender may have published since
	if e := laneFrom(old, id); e != nil {
		return e
	}
	grown := append(old[:len(old):len(old)], newEdge(id, s.perEdge)) // a copy: readers keep old
	s.all.Store(&grown)
	return grown[len(grown)-1]
}

// laneFrom returns the lane of lanes from task id, or nil.
func laneFrom(lanes []*edge, id int) *edge {
	for _, e := range lanes {
		if e.from == id {
			return e
		}
	}
	return nil
}

// lanes returns the inbound lanes made so far.
func (s *edges) lanes() []*edge {
	if all := s.all.Load(); all != nil {
		return *all
	}
	return nil
}

// take removes one message from the first lane that has one, starting after
// the lane served last, so that every sender is served in turn. Only the
// receiver calls it.
func (s *edges) take() any {
	lanes := s.lanes()
	n := len(lanes)
	for i := 0; i < n; i++ {
		k := s.next + i
		if k >= n {
			k -= n
		}
		if msg := lanes[k].take(); msg != nil {
			if s.next = k + 1; s.next == n {
				s.next = 0
			}
			return msg
		}
	}
	return nil
}

// ready reports whether any lane has a message.
func (s *edges) ready() bool {
	for _, e := range s.lanes() {
		if e.ready() {
			return true
		}
	}
	return false
}

// len returns the messages waiting on every lane.
func (s *edges) len() int {
	n := 0
	for _, e := range s.lanes() {
		n += e.len()
	}
	return n
}
