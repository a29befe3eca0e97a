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
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// Running is a hosted topology. Its methods are safe for concurrent use.
type Running struct {
	opts   options
	plan   *routing.Plan
	system *actors.System
	log    *zap.Logger
	events *dispatcher

	failures chan actors.Failure
	stable   chan int // incarnation number that ran for the stable period

	// life ends when the topology is to stop (Stop, Run's ctx): every wait of
	// the loop derives from it, so the loop is never deaf to a stop.
	life    context.Context
	endLife context.CancelFunc

	stopMu     sync.Mutex      // stopMu guards drainCtx, stopCause and stopping
	stopping   bool            // a stop was asked for
	drainCtx   context.Context // bounds the final drain: the first Stop's ctx
	stopCause  error           // why Wait returns: nil for Stop, Run's ctx cause
	finished   chan struct{}   // closed when the loop is over; watchers end
	done       chan struct{}   // closed when everything is over
	err        error           // Wait's result, set before done closes
	stopResult error           // Stop's result, set before done closes
	watchers   sync.WaitGroup

	mu          sync.Mutex // mu guards current, number, restarts, since, stableTimer, history and lastErrors
	current     *actors.Topology
	stableTimer clock.Timer
	number      int
	restarts    int
	since       time.Time         // when the current incarnation became active
	history     []Event           // the latest maxEvents events, for Stats
	lastErrors  map[int]TaskStats // by task id: failed incarnations' last errors (replaced, never modified)
}

// maxEvents bounds the event history Stats returns: enough for a page to show
// a crash loop, small enough to copy on every snapshot.
const maxEvents = 64

// Run starts topology t and returns once its first incarnation is active.
// It first logs each of t's [dsl.Topology.Warnings] at warn level (with no
// logger given, on stderr), so a mistyped conf key is seen without extra work.
// When a task fails, the topology is restarted with back-off (see the package
// doc) unless [WithoutRestarts] is given. Cancelling ctx stops the topology,
// as exec.CommandContext kills its process: Wait then returns ctx's cause.
// If ctx ends before the topology is active, Run stops what it started and
// returns an error wrapping ctx's cause; the tasks' [dsl.TaskInfo] Contexts end
// with that cause, so a constructor waiting on its Context returns.
func Run(ctx context.Context, t *dsl.Topology, opts ...Option) (*Running, error) {
	o := defaults()
	for _, opt := range opts {
		opt.apply(&o)
	}
	o.hops = hops.FromContext(ctx)
	if o.logger == nil {
		o.logger = defaultLogger()
	}
	if o.store == nil && t.HasState() {
		// The host's own option is missing: say so before any task starts.
		return nil, fmt.Errorf("topology %q: %w", t.Name, ErrNoStore)
	}
	r := &Running{
		opts: o, plan: routing.Compile(t), log: o.logger.With(zap.String("topology", t.Name)),
		failures: make(chan actors.Failure, 64), stable: make(chan int, 1),
		finished: make(chan struct{}), done: make(chan struct{}),
	}
	r.events = newDispatcher(o.events, r.log)
	for _, w := range t.Warnings { // once per Run, not per incarnation: Build found them
		r.log.Warn("topology built with a warning", zap.String("warning", w))
	}
	r.life, r.endLife = context.WithCancel(context.Background())
	r.system = actors.NewSystem(o.logger, r.onFailure)
	if err := r.startIncarnation(ctx); err != nil {
		r.endLife()
		r.system.Shutdown()
		r.events.close()
		return nil, err
	}
	if ctx.Done() != nil {
		r.watchers.Add(1)
		go r.watch(ctx)
	}
	go r.loop()
	return r, nil
}

// watch stops the topology when Run's ctx ends.
func (r *Running) watch(ctx context.Context) {
	defer r.watchers.Done()
	select {
	case <-ctx.Done():
		r.beginStop(context.Background(), context.Cause(ctx))
	case <-r.finished:
	}
}

// startIncarnation spawns and activates a fresh incarnation; ctx bounds the
// activation.
func (r *Running) startIncarnation(ctx context.Context) error {
	r.mu.Lock()
	r.number++
	n := r.number
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.life, cancel) // a stop interrupts the activation
	defer stop()
	inc, err := r.system.Start(ctx, r.plan, actors.Config{
		Name: fmt.Sprintf("i%d/", n), Logger: r.opts.logger, Clock: r.opts.clock,
		IDs: idSources(r.opts.ids), Trace: r.opts.trace, DrainTimeout: r.opts.drainTimeout,
		Store: r.opts.store, Hops: r.opts.hops,
	})
	if err != nil {
		stuck := inc.Stop(ctx) // ctx has ended: no drain
		return errors.Join(fmt.Errorf("starting topology %q: %w", r.plan.Topology.Name, err), r.stuckError(stuck))
	}
	r.mu.Lock()
	r.current, r.since = inc, time.Now()
	r.mu.Unlock()
	r.stopStableTimer()
	if p := r.opts.restarts.StablePeriod; p > 0 { // armed before the event, as in backOff
		t := r.opts.clock.AfterFunc(p, func() { offer(r.stable, n) })
		r.mu.Lock()
		r.stableTimer = t
		r.mu.Unlock()
	}
	r.emit(Event{Kind: Started, Incarnation: n})
	return nil
}

func offer(ch chan int, v int) {
	select {
	case ch <- v:
	default:
	}
}

// onFailure runs on the actor system's supervisor: the failed incarnation
// already waits for that task no more; the loop decides what follows.
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
	r.history = append(r.history, e)
	if len(r.history) > maxEvents {
		r.history = append(r.history[:0:0], r.history[len(r.history)-maxEvents:]...)
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
	r.events.send(e)
}

// loop owns restarts and stopping; it is the only goroutine that stops
// incarnations.
func (r *Running) loop() {
	attempt := 0
	for {
		select {
		case f := <-r.failures:
			inc := r.currentTopology()
			if inc == nil || f.Topology != inc {
				r.log.Warn("task failure coalesced into the restart under way", zap.Error(f.Err))
				continue
			}
			var err error = taskError(r.plan.Topology.Name, f)
			r.emit(Event{Kind: Failed, Incarnation: r.incarnation(), Err: err})
			r.keepErrors(inc) // Storm UI's last error survives the restart
			r.dropCurrent()
			for {
				if r.opts.restartsOff || attempt >= r.opts.restarts.Max || fatal(err) {
					if inc != nil {
						r.stopIncarnation(inc, ended) // the topology is down: no drain
					}
					r.giveUp(err, attempt)
					return
				}
				attempt++
				if !r.backOff(inc, attempt) {
					r.finishStop()
					return
				}
				inc = nil
				if err = r.startIncarnation(r.life); err == nil {
					break
				}
				if r.life.Err() != nil {
					r.finishStop()
					return
				}
				r.emit(Event{Kind: Failed, Incarnation: r.incarnation(), Err: err}) // a start that fails is a failure too
			}
		case n := <-r.stable:
			if n == r.incarnation() && r.currentTopology() != nil {
				attempt = 0
			}
		case <-r.life.Done():
			r.finishStop()
			return
		}
	}
}

// ended is a context that has ended: a drain bounded by it does not wait.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// backOff waits out the back-off before restart attempt. Meanwhile the failed
// incarnation inc (if any) stops in Storm's order: its spouts stop emitting,
// what is in flight may finish until the back-off is over (and no longer than
// the drain timeout), then its tasks stop and what is still open is nacked
// once. A task parked on a full mailbox is released when that drain ends, so
// the stop is over by the back-off's end unless a task is stuck in user code.
// It reports false when a stop was asked for meanwhile.
func (r *Running) backOff(inc *actors.Topology, attempt int) bool {
	delay := backoff(r.opts.restarts.Base, r.opts.restarts.Cap, attempt)
	over, end := context.WithCancel(r.life)
	defer end()
	// The timer is armed before the event goes out, so whoever moves the
	// clock on seeing the event (a test's manual clock) cannot miss it.
	timer := r.opts.clock.AfterFunc(delay, end)
	defer timer.Stop()
	r.emit(Event{Kind: Restarting, Incarnation: r.incarnation(), Attempt: attempt, Delay: delay})
	if inc != nil {
		r.stopIncarnation(inc, over)
	}
	<-over.Done()
	if r.life.Err() != nil {
		return false
	}
	r.mu.Lock()
	r.restarts++
	r.mu.Unlock()
	return true
}

// giveUp ends the topology after a failure that is not restarted.
func (r *Running) giveUp(err error, attempts int) {
	if !r.opts.restartsOff {
		err = fmt.Errorf("%w after %d restarts: %w", ErrGaveUp, attempts, err)
	}
	r.finish(err, nil, Event{Kind: GaveUp, Incarnation: r.incarnation(), Err: err})
}

// stopIncarnation stops inc, its drain bounded by drain, and logs what stuck.
func (r *Running) stopIncarnation(inc *actors.Topology, drain context.Context) error {
	err := r.stuckError(inc.Stop(drain))
	if err != nil {
		r.log.Error("incarnation did not stop cleanly", zap.Error(err))
	}
	return err
}

// stuckError describes tasks that did not stop, one *TaskError each.
func (r *Running) stuckError(stuck []actors.Failure) error {
	var errs []error
	for _, f := range stuck {
		errs = append(errs, stuckTask(r.plan.Topology.Name, f))
	}
	return errors.Join(errs...)
}

// finishStop ends the loop after a stop was asked for: the current incarnation
// drains (bounded by the first Stop's ctx and the drain timeout) and stops.
func (r *Running) finishStop() {
	r.stopMu.Lock()
	drain, cause := r.drainCtx, r.stopCause
	r.stopMu.Unlock()
	if drain == nil {
		drain = context.Background()
	}
	var stopErr error
	if inc := r.dropCurrent(); inc != nil {
		stopErr = r.stopIncarnation(inc, drain)
	}
	r.finish(cause, stopErr, Event{Kind: Stopped, Incarnation: r.incarnation()})
}

// finish records the results, reports e, releases everything and closes done.
func (r *Running) finish(err, stopErr error, e Event) {
	r.err, r.stopResult = err, stopErr
	r.stopStableTimer()
	r.endLife()
	r.emit(e)
	r.system.Shutdown()
	close(r.finished)
	r.watchers.Wait()
	r.events.close()
	close(r.done)
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

func (r *Running) dropCurrent() *actors.Topology {
	r.mu.Lock()
	defer r.mu.Unlock()
	inc := r.current
	r.current = nil
	return inc
}

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

// beginStop asks the loop to stop, once: drain bounds the final drain and
// cause is what Wait will return.
func (r *Running) beginStop(drain context.Context, cause error) {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if r.stopping {
		return
	}
	r.stopping, r.drainCtx, r.stopCause = true, drain, cause
	r.endLife()
}

// Stop drains and stops the topology, and releases everything it holds: it
// waits until nothing is in flight (at most the drain timeout, and no longer
// than ctx allows), then stops every task. It returns by ctx's deadline in
// every state, with ctx's cause if the stop has not finished by then (it goes
// on, bounded, and Done closes when it ends). A task still running user code a
// grace period after the drain is abandoned and named in the returned error
// (a *TaskError each): Go cannot stop a goroutine.
//
// Called from inside the topology — a component's code or a WithEvents
// callback — Stop cannot wait for the stop, which waits for that very code: it
// starts the stop and returns ErrStopping at once. It returns ErrStopped if the
// topology had already stopped.
func (r *Running) Stop(ctx context.Context) error {
	select {
	case <-r.done:
		return ErrStopped
	default:
	}
	if insideTopology() {
		r.beginStop(context.Background(), nil)
		return ErrStopping
	}
	r.beginStop(ctx, nil)
	select {
	case <-r.done:
		return r.stopResult
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Wait blocks until the topology is down and returns why: nil after Stop, the
// cause of Run's ctx when it ended, the task's *TaskError when restarts are
// off, or an error wrapping ErrGaveUp (and the last *TaskError).
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Done is closed when the topology is down.
func (r *Running) Done() <-chan struct{} { return r.done }

// Topology returns the topology r runs, as Run was given it. Tools that watch
// a running topology read its components from it (sheltertest.WaitIdle finds
// the kit's sources among its spouts); it must not be modified.
func (r *Running) Topology() *dsl.Topology { return r.plan.Topology }

// idSources adapts WithIDs' generators to the runtime's id sources.
func idSources(fn func(task int) func() uint64) func(task int) ids.Source {
	if fn == nil {
		return nil
	}
	return func(task int) ids.Source { return ids.Func(fn(task)) }
}
