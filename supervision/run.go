package supervision

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// teardownTimeout bounds how long a failed incarnation may take to stop.
const teardownTimeout = 10 * time.Second

// Running is a hosted topology. Its methods are safe for concurrent use.
type Running struct {
	opts   options
	plan   *routing.Plan
	system *actors.System
	log    *zap.Logger

	failures chan actors.Failure
	restart  chan int // incarnation number whose back-off ended
	stable   chan int // incarnation number that ran for the stable period
	stopReq  chan context.Context
	stopRes  chan error
	done     chan struct{}
	err      error // final result, set before done closes

	mu          sync.Mutex // mu guards current, stopping, number, restarts and stableTimer
	current     *actors.Topology
	stopping    *actors.Topology // the incarnation Stop is stopping: a task failing meanwhile breaks it
	stableTimer clock.Timer
	number      int
	restarts    int
	since       time.Time         // when the current incarnation became active; guarded by mu
	events      []Event           // the latest maxEvents events, for Stats; guarded by mu
	lastErrors  map[int]TaskStats // by task id: failed incarnations' last errors (replaced, never modified); guarded by mu
}

// maxEvents bounds the event history Stats returns: enough for a page to show
// a crash loop, small enough to copy on every snapshot.
const maxEvents = 64

// Run starts topology t and returns once its first incarnation is active. When a
// task fails, the topology is restarted with back-off (see the package doc) unless
// [WithoutRestarts] is given.
func Run(ctx context.Context, t *dsl.Topology, opts ...Option) (*Running, error) {
	o := defaults()
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.logger == nil {
		o.logger = defaultLogger()
	}
	r := &Running{
		opts: o, plan: routing.Compile(t), log: o.logger.With(zap.String("topology", t.Name)),
		failures: make(chan actors.Failure, 64), restart: make(chan int, 1), stable: make(chan int, 1),
		stopReq: make(chan context.Context), stopRes: make(chan error, 1), done: make(chan struct{}),
	}
	r.system = actors.NewSystem(o.logger, r.onFailure)
	if err := r.startIncarnation(ctx); err != nil {
		r.shutdown()
		return nil, err
	}
	go r.loop()
	return r, nil
}

// startIncarnation spawns and activates a fresh incarnation.
func (r *Running) startIncarnation(ctx context.Context) error {
	r.mu.Lock()
	r.number++
	n := r.number
	r.mu.Unlock()
	r.mu.Lock()
	r.current = nil
	r.mu.Unlock()
	inc, err := r.system.Start(ctx, r.plan, actors.Config{
		Name: fmt.Sprintf("i%d/", n), Logger: r.opts.logger, Clock: r.opts.clock,
		IDs: idSources(r.opts.ids), Trace: traceFunc(r.opts.trace), DrainTimeout: r.opts.drainTimeout,
	})
	r.mu.Lock()
	r.current = inc
	r.mu.Unlock()
	if err != nil {
		r.dropCurrent()
		stopCtx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
		defer cancel()
		return errors.Join(fmt.Errorf("starting topology %q: %w", r.plan.Topology.Name, err), inc.Stop(stopCtx))
	}
	r.mu.Lock()
	r.since = time.Now()
	r.mu.Unlock()
	r.emit(Event{Kind: Started, Incarnation: n})
	r.stopStableTimer()
	if p := r.opts.restarts.StablePeriod; p > 0 {
		t := r.opts.clock.AfterFunc(p, func() { offer(r.stable, n) })
		r.mu.Lock()
		r.stableTimer = t
		r.mu.Unlock()
	}
	return nil
}

func offer(ch chan int, v int) {
	select {
	case ch <- v:
	default:
	}
}

func (r *Running) dropCurrent() *actors.Topology {
	r.mu.Lock()
	defer r.mu.Unlock()
	inc := r.current
	r.current = nil
	return inc
}

// onFailure runs on the actor system's supervisor: the failed incarnation is
// already broken (nothing waits on it); the loop decides what follows.
func (r *Running) onFailure(f actors.Failure) {
	if f.Stack != nil {
		r.log.Error("task panicked", zap.String("component", f.Component), zap.Int("task", f.Task),
			zap.Error(f.Err), zap.ByteString("stack", f.Stack))
	}
	select {
	case r.failures <- f:
	default:
		r.log.Warn("task failure coalesced: failure queue full", zap.Error(f.Err))
	}
}

func (r *Running) emit(e Event) {
	e.Time = time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	if len(r.events) > maxEvents {
		r.events = append(r.events[:0:0], r.events[len(r.events)-maxEvents:]...)
	}
	r.mu.Unlock()
	fields := []zap.Field{zap.Stringer("event", e.Kind), zap.Int("incarnation", e.Incarnation)}
	switch e.Kind {
	case Failed, GaveUp:
		r.log.Error("topology "+e.Kind.String(), append(fields, zap.Error(e.Err))...)
	case Restarting:
		r.log.Warn("topology restarting", append(fields, zap.Int("attempt", e.Attempt), zap.Duration("delay", e.Delay))...)
	default:
		r.log.Info("topology "+e.Kind.String(), fields...)
	}
	if r.opts.events != nil {
		r.opts.events(e)
	}
}

// loop owns restarts and stopping; it is the only goroutine that stops incarnations.
func (r *Running) loop() {
	defer close(r.done)
	attempt := 0
	var backoffTimer clock.Timer
	defer func() {
		if backoffTimer != nil {
			backoffTimer.Stop()
		}
		r.stopStableTimer()
	}()
	// fail decides what follows a failure: a restart after back-off, or the end.
	fail := func(err error) (end bool) {
		if r.opts.restartsOff || attempt >= r.opts.restarts.Max {
			if !r.opts.restartsOff {
				err = fmt.Errorf("%w after %d restarts: %w", ErrGaveUp, attempt, err)
			}
			r.finish(err, Event{Kind: GaveUp, Incarnation: r.incarnation(), Err: err})
			return true
		}
		attempt++
		delay := backoff(r.opts.restarts.Base, r.opts.restarts.Cap, attempt)
		n := r.incarnation()
		r.emit(Event{Kind: Restarting, Incarnation: n, Attempt: attempt, Delay: delay})
		backoffTimer = r.opts.clock.AfterFunc(delay, func() { offer(r.restart, n) })
		return false
	}
	for {
		select {
		case f := <-r.failures:
			if err, stale := r.failed(f); !stale && fail(err) {
				return
			}
		case <-r.restart:
			backoffTimer = nil
			r.mu.Lock()
			r.restarts++
			r.mu.Unlock()
			if err := r.startIncarnation(context.Background()); err != nil {
				r.emit(Event{Kind: Failed, Incarnation: r.incarnation(), Err: err})
				if fail(err) {
					return
				}
			}
		case n := <-r.stable:
			if n == r.incarnation() && r.currentTopology() != nil {
				attempt = 0
			}
		case ctx := <-r.stopReq:
			var err error
			if inc := r.dropCurrent(); inc != nil {
				r.mu.Lock()
				r.stopping = inc
				r.mu.Unlock()
				err = inc.Stop(ctx)
			}
			r.stopRes <- err
			r.finish(nil, Event{Kind: Stopped, Incarnation: r.incarnation()})
			return
		}
	}
}

func (r *Running) stopStableTimer() {
	r.mu.Lock()
	t := r.stableTimer
	r.stableTimer = nil
	r.mu.Unlock()
	if t != nil {
		t.Stop()
	}
}

// failed handles a failure report: stale reports (from an incarnation already
// stopped, or coalesced into a restart under way) are logged and skipped.
func (r *Running) failed(f actors.Failure) (err error, stale bool) {
	inc := r.currentTopology()
	if inc == nil || f.Topology != inc {
		r.log.Warn("task failure coalesced into the restart under way", zap.Error(f.Err))
		return nil, true
	}
	te := taskError(r.plan.Topology.Name, f)
	r.emit(Event{Kind: Failed, Incarnation: r.incarnation(), Err: te})
	r.dropCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	if stopErr := inc.Stop(ctx); stopErr != nil {
		r.log.Error("failed incarnation did not stop cleanly", zap.Error(stopErr))
	}
	r.keepErrors(inc)
	return te, false
}

func (r *Running) finish(err error, e Event) {
	r.err = err
	r.emit(e)
	r.shutdown()
}

func (r *Running) shutdown() { r.system.Shutdown() }

func (r *Running) incarnation() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.number
}

func (r *Running) currentTopology() *actors.Topology {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// Stop drains and stops the topology and releases everything it holds. It
// returns ErrStopped if the topology had already stopped.
func (r *Running) Stop(ctx context.Context) error {
	select {
	case r.stopReq <- ctx:
		err := <-r.stopRes
		<-r.done
		return err
	case <-r.done:
		return ErrStopped
	}
}

// Wait blocks until the topology is down and returns why: nil after Stop, the
// task's *TaskError when restarts are off, or an error wrapping ErrGaveUp (and
// the last *TaskError).
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Done is closed when the topology is down.
func (r *Running) Done() <-chan struct{} { return r.done }

// idSources adapts WithIDs' generators to the runtime's id sources.
func idSources(fn func(task int) func() uint64) func(task int) ids.Source {
	if fn == nil {
		return nil
	}
	return func(task int) ids.Source { return ids.Func(fn(task)) }
}
