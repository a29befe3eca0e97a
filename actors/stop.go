package actors

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// errStuck is the error of a task that did not stop within the grace period: it
// is still running user code (a Next, an Execute, a hook that blocks), and Go
// has no way to stop a goroutine from outside. Stop returns stuck tasks only,
// and supervision reports each as a TaskError with its ErrStuck.
var errStuck = errors.New("still running user code after the grace period; it cannot be stopped, only abandoned")

// errStopped is the cause of a task's Context when its incarnation stops it
// before it deactivated.
var errStopped = errors.New("actors: the task is stopping")

// Stop ends the incarnation in Storm's order: the system task's timers and the
// spouts are deactivated; a drain waits until nothing is in flight, at most the
// drain timeout and no longer than ctx; if it ends with tuples still in flight,
// the mailboxes close, so a task parked on a full one (upstream of a failed or
// stuck bolt) drops the batch it held and goes on; the bolts are deactivated;
// then every actor is stopped: spouts (which nack what is still open to their
// source, dropped batches' trees included), bolts, ackers, the system task.
// Tasks that failed are skipped where they would be waited for. The wait for
// the bolts to deactivate is bounded by a grace of twice the drain timeout (a
// second at least), and so is each group's wait to stop: Stop takes a few
// drain timeouts at most, and about one when no task is stuck in user code.
// The tasks still busy then are returned as stuck. Stop never leaves a
// goroutine of its own behind. It may be called more than once; later calls
// return the first result.
func (t *Topology) Stop(ctx context.Context) (stuck []Failure) {
	t.stopOnce.Do(func() { t.stuck = t.stop(ctx) })
	return t.stuck
}

func (t *Topology) stop(ctx context.Context) []Failure {
	defer t.host.forget(t)
	defer t.inc.workers.close() // after every task has stopped or was given up
	order := t.activationOrder()
	ackers, bolts, spouts, system := order[0], order[1], order[2], order[3]
	timeout := t.drainTimeout()
	drain, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	late := map[int]bool{}       // tasks that did not answer in time
	t.await(drain, system, late) // the timers first, as Storm does
	t.await(drain, spouts, late)
	if t.checkpointing {
		t.inc.ckpt.beginDrain() // held acks go out as checkpoints commit
	}
	drained := t.drain(drain)
	if t.checkpointing && drained {
		t.inc.ckpt.awaitQuiet(drain)
	}
	if !drained {
		// What is still in flight will not complete: a task parked on a full
		// mailbox (upstream of a failed or stuck bolt) would otherwise hold
		// the bolts' deactivation, and so the stop or the restart, for the
		// whole grace below. Released now, it drops the batch it held; the
		// trees in it stay open and are nacked with the rest when the spouts
		// stop.
		t.release()
	}
	// The grace does not derive from ctx: once the drain is over the stop goes
	// on, bounded, even if the caller stopped waiting for it. It is longer than
	// the drain, so a task that is only slow (a long Execute) is not abandoned.
	graceFor := max(2*timeout, time.Second)
	grace, cancelGrace := context.WithTimeout(context.Background(), graceFor)
	defer cancelGrace()
	t.await(grace, bolts, late)
	t.release()
	// The tasks stop now: a task that did not deactivate may be waiting on its
	// Context in user code (a Next, an Execute, its constructor). Ending every
	// task's Context lets it return and stop rather than be abandoned.
	t.inc.end(errStopped)
	if t.checkpointing {
		t.awaitCheckpointer(graceFor)
	}
	// Group by group, so ackers outlive the bolts: what a bolt acks or fails
	// while it stops (a dying shell child's inputs) still reaches them. Each
	// group gets a grace of its own to stop: a task that did not deactivate in
	// time may only have been parked on a full ring (woken now), and stopping
	// closes components, which may block for a bounded time.
	var stuck []Failure
	for _, group := range [][]int{spouts, bolts, ackers, system} {
		for _, id := range group {
			t.host.actors.Root.Stop(t.pids[id])
		}
		closing, cancel := context.WithTimeout(context.Background(), graceFor)
		for _, id := range group {
			if !t.terminated(id, closing.Done()) {
				stuck = append(stuck, t.stuckFailure(id))
			}
		}
		cancel()
	}
	if len(stuck) > 0 {
		t.host.abandoned.Store(true)
		t.inc.log.Error("tasks did not stop", zap.Int("stuck", len(stuck)), zap.Error(stuck[0].Err))
	}
	return stuck
}

func (t *Topology) drainTimeout() time.Duration {
	if d := t.inc.cfg.DrainTimeout; d > 0 {
		return d
	}
	return t.inc.plan.Topology.Settings.MessageTimeout
}

// await deactivates each task of group and waits until each has done so, has
// failed, or ctx ends; tasks that did not answer are added to late and not
// waited for again.
func (t *Topology) await(ctx context.Context, group []int, late map[int]bool) {
	dones := make(map[int]chan struct{}, len(group))
	for _, id := range group {
		if late[id] || t.hasFailed(id) {
			continue
		}
		done := make(chan struct{})
		dones[id] = done
		t.inc.boxes[id].PostUserMessage(deactivate{done: done})
	}
	for _, id := range group {
		done, ok := dones[id]
		for ok {
			changed := t.failureSignal()
			select {
			case <-done:
				ok = false
			case <-changed: // some task failed: stop waiting if it was this one
				ok = !t.hasFailed(id)
			case <-ctx.Done():
				late[id] = true
				ok = false
			}
		}
	}
}

// drain waits until nothing is in flight, ctx ends, or a task fails during the
// drain: what that task held will never complete. (A drain that begins after a
// failure, while a restart backs off, goes on: other trees may complete.) It
// reports whether nothing was left in flight.
func (t *Topology) drain(ctx context.Context) bool {
	failure := t.failureSignal()
	for t.inc.gauge.n.Load() > 0 {
		select {
		case <-failure:
			t.inc.log.Warn("drain ended: a task failed", zap.Int64("in_flight", t.inc.gauge.n.Load()))
			return false
		case <-t.inc.gauge.zero:
		case <-ctx.Done():
			if !t.isBroken() {
				t.inc.log.Warn("drain ended with tuples in flight", zap.Int64("in_flight", t.inc.gauge.n.Load()), zap.Error(context.Cause(ctx)))
			}
			return false
		}
	}
	return true
}

// release closes every mailbox of the incarnation: senders parked on a full
// data lane give up their batch, and later data is refused. Control messages
// (deactivation, acks) still get through.
func (t *Topology) release() {
	for _, b := range t.inc.boxes {
		b.close()
	}
}

// terminated waits until task id's actor has stopped, or the deadline.
func (t *Topology) terminated(id int, deadline <-chan struct{}) bool {
	select {
	case <-t.inc.boxes[id].terminated:
		return true
	case <-deadline:
		select {
		case <-t.inc.boxes[id].terminated:
			return true
		default:
			return false
		}
	}
}

func (t *Topology) stuckFailure(id int) Failure {
	f := Failure{Topology: t, Component: systemComponent, Task: systemTaskID, Err: errStuck}
	if id > 0 {
		task := t.inc.plan.Tasks[id-1]
		f.Component, f.Task = componentName(task), task.ID
	}
	return f
}

func (t *Topology) isBroken() bool {
	select {
	case <-t.broken:
		return true
	default:
		return false
	}
}

// awaitCheckpointer waits for the checkpointer to return: a commit under way
// sees the end of the incarnation's life through its ctx. A store that
// ignores its ctx is given the grace, then abandoned with its goroutine (Go
// cannot stop it), so the stop stays bounded. A commit that lands later is
// still a consistent cut; the next incarnation, which restored the one
// before, then finds its own first commit stale and restarts from it.
func (t *Topology) awaitCheckpointer(grace time.Duration) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-t.inc.ckpt.done:
	case <-timer.C:
		t.host.abandoned.Store(true)
		t.inc.log.Error("the store did not return from a commit within the grace; the checkpoint is abandoned", zap.Duration("grace", grace))
	}
}
