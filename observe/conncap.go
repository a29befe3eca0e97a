package observe

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// connCap bounds the connections a server holds open without letting idle
// ones lock out the rest. A listener that counts every connection against
// its cap (netutil.LimitListener) serves nobody once that many keep-alive
// clients sit idle, until the idle timeout frees them: the cap shuts out the
// people it is there to protect. connCap counts every open connection too,
// so file descriptors stay bounded, but when the cap is reached it closes
// the connection idle the longest to serve the newcomer. Only when every
// connection is reading or answering a request does a newcomer wait, and the
// clients behind it wait to be accepted.
//
// Its listener's Accept and the server's ConnState hook (set to track) share
// it; neither blocks the other.
type connCap struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed with the listener: Accept stops waiting
	// idled wakes an Accept waiting for a slot when a connection goes idle,
	// to close it and take its slot. One token is enough: Accept looks at the
	// whole idle list each time it wakes.
	idled chan struct{}

	mu   sync.Mutex
	idle list.List // of *cappedConn, idle the longest first
	shut sync.Once
}

func newConnCap(ln net.Listener, n int) *connCap {
	return &connCap{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), idled: make(chan struct{}, 1)}
}

// Accept accepts a connection, then gives it a slot, closing the longest idle
// connection when none is free. Taking the slot first would close an idle
// connection for a newcomer that may never come; so a newcomer waiting for
// busy connections to finish holds one descriptor more than the cap.
func (l *connCap) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := l.acquire(); err != nil {
		_ = c.Close()
		return nil, err
	}
	return &cappedConn{Conn: c, owner: l}, nil
}

func (l *connCap) acquire() error {
	for {
		select {
		case l.slots <- struct{}{}:
			return nil
		default:
		}
		if c := l.oldestIdle(); c != nil {
			// Closing releases its slot at once; its server goroutine sees the
			// closed connection and ends. A client that sent its next request
			// at this very moment sees the connection close, as with any
			// server's idle timeout; HTTP clients retry an idempotent request
			// on a fresh connection.
			_ = c.Close()
			continue
		}
		select {
		case l.slots <- struct{}{}:
			return nil
		case <-l.idled:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// oldestIdle takes the connection idle the longest off the idle list, or
// returns nil when none is idle.
func (l *connCap) oldestIdle() *cappedConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.idle.Front()
	if e == nil {
		return nil
	}
	c := e.Value.(*cappedConn)
	l.idle.Remove(e)
	c.idle = nil
	return c
}

// Close stops a waiting Accept as well as the listener.
func (l *connCap) Close() error {
	l.shut.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// track is the server's ConnState hook: it keeps the idle list in the order
// connections went idle.
func (l *connCap) track(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*cappedConn)
	if !ok { // not one of ours: nothing to track
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.idle != nil {
		l.idle.Remove(c.idle)
		c.idle = nil
	}
	if state != http.StateIdle {
		return
	}
	c.idle = l.idle.PushBack(c)
	select {
	case l.idled <- struct{}{}:
	default:
	}
}

// cappedConn is a connection holding one of connCap's slots until it closes.
type cappedConn struct {
	net.Conn
	owner *connCap
	idle  *list.Element // its place on owner.idle while idle; guarded by owner.mu
	once  sync.Once
}

// Close gives the slot back the first time, whoever closes: the server, or
// connCap making room.
func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.owner.slots })
	return err
}
