package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Stop ends the incarnation in Storm's order: the system task's timers, then the
// spouts (deactivated), then a drain that ends as soon as nothing is in flight and
// at the latest after the drain timeout or when ctx ends, then bolts (deactivated),
// then every actor is stopped exactly once: spouts, bolts, ackers, system. A
// broken incarnation skips the drain. Stop may be called more than once; later
// calls return the first result.
func (t *Topology) Stop(ctx context.Context) error {
	t.stopOnce.Do(func() { t.stopErr = t.stop(ctx) })
	return t.stopErr
}

func (t *Topology) stop(ctx context.Context) error {
	var errs []error
	order := t.activationOrder()
	ackers, bolts, spouts, system := order[0], order[1], order[2], order[3]
	// A task that fails while the incarnation stops breaks it (the host reports
	// the failure); the stop then goes on without waiting for that task.
	deact := func(group []int) error {
		err := t.signal(ctx, group, func(done chan struct{}) any { return deactivate{done} })
		if errors.Is(err, errBroken) {
			return nil
		}
		return err
	}
	healthy := !t.isBroken()
	if healthy {
		errs = append(errs, deact(system), deact(spouts))
		if errs[0] == nil && errs[1] == nil {
			t.drain(ctx)
		}
		errs = append(errs, deact(bolts))
	}
	for _, b := range t.inc.boxes {
		b.close() // wake senders parked on full rings
	}
	for _, group := range [][]int{spouts, bolts, ackers, system} {
		for _, id := range group {
			errs = append(errs, t.stopActor(ctx, id))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping topology %q: %w", t.inc.plan.Topology.Name, err)
	}
	return nil
}

func (t *Topology) isBroken() bool {
	select {
	case <-t.broken:
		return true
	default:
		return false
	}
}

// drain waits until nothing is in flight, the drain timeout passes, ctx ends or
// the incarnation breaks.
func (t *Topology) drain(ctx context.Context) {
	timeout := t.inc.cfg.DrainTimeout
	if timeout <= 0 {
		timeout = t.inc.plan.Topology.Settings.MessageTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for t.inc.gauge.n.Load() > 0 {
		select {
		case <-t.inc.gauge.zero:
		case <-deadline.C:
			t.inc.log.Warn("drain timed out with tuples in flight", zap.Duration("timeout", timeout), zap.Int64("in_flight", t.inc.gauge.n.Load()))
			return
		case <-ctx.Done():
			return
		case <-t.broken:
			return
		}
	}
}

func (t *Topology) stopActor(ctx context.Context, id int) error {
	pid := t.pids[id]
	if pid == nil {
		return nil
	}
	f := t.host.actors.Root.StopFuture(pid)
	done := make(chan error, 1)
	go func() { done <- f.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("task %d: %w: %v", id, errStopTimeout, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("task %d: %w: %v", id, errStopTimeout, context.Cause(ctx))
	}
}
