package supervision

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"go.uber.org/zap"
)

// dispatcher delivers lifecycle events to the user's callback on a goroutine
// of its own, in order: the host never waits for user code, a callback may
// call the Running's methods, and a panic in it is logged, not fatal.
type dispatcher struct {
	fn  func(Event)
	log *zap.Logger

	mu     sync.Mutex // mu guards queue and closed
	queue  []Event
	closed bool
	wake   chan struct{} // a token when queue grows or closes
	done   chan struct{} // closed when the goroutine has delivered everything
}

func newDispatcher(fn func(Event), log *zap.Logger) *dispatcher {
	d := &dispatcher{fn: fn, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if fn == nil {
		close(d.done)
		return d
	}
	go d.run()
	return d
}

func (d *dispatcher) send(e Event) {
	if d.fn == nil {
		return
	}
	d.mu.Lock()
	d.queue = append(d.queue, e)
	d.mu.Unlock()
	d.signal()
}

func (d *dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// close delivers what is queued and waits for the goroutine to end.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.signal()
	<-d.done
}

func (d *dispatcher) run() {
	defer close(d.done)
	for {
		d.mu.Lock()
		batch, closed := d.queue, d.closed
		d.queue = nil
		d.mu.Unlock()
		for _, e := range batch {
			d.deliverEvent(e)
		}
		if closed && len(batch) == 0 {
			return
		}
		if len(batch) == 0 {
			<-d.wake
		}
	}
}

// deliverEvent calls the callback; insideTopology recognises it on the stack.
func (d *dispatcher) deliverEvent(e Event) {
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("event callback panicked", zap.Stringer("event", e.Kind), zap.String("panic", fmt.Sprint(p)))
		}
	}()
	d.fn(e)
}

// Frames that run user code: a task's mailbox (every component call) and the
// event dispatcher. A Stop called beneath one of them would wait for itself.
var insideFrames = []string{
	"github.com/goshelter/goshelter/actors.(*mailbox).run",
	"github.com/goshelter/goshelter/supervision.(*dispatcher).deliverEvent",
}

// insideTopology reports whether the caller runs inside the topology's own
// goroutines: a component's code or an event callback.
func insideTopology() bool {
	pcs := make([]uintptr, 128)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		for _, name := range insideFrames {
			if strings.HasPrefix(f.Function, name) {
				return true
			}
		}
		if !more {
			return false
		}
	}
}
