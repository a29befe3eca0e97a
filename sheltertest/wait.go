package sheltertest

import (
	"context"
	"fmt"
	"time"

	"github.com/goshelter/goshelter/supervision"
)

// WaitIdle waits until nothing is in flight in r: no tuple sent and not yet
// executed, no tuple tree open. It returns ctx's cause, with the last count,
// if ctx ends first, and an error if the topology stopped.
func WaitIdle(ctx context.Context, r *supervision.Running) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		s := r.Stats()
		if s.InFlight == 0 && len(s.Tasks) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sheltertest: %d still in flight: %w", s.InFlight, context.Cause(ctx))
		case <-r.Done():
			return fmt.Errorf("sheltertest: the topology stopped while waiting: %w", supervision.ErrStopped)
		case <-tick.C:
		}
	}
}
