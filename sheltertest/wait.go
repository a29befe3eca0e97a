package sheltertest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// WaitIdle waits until r is idle: its current incarnation is up, no tuple is
// sent and not yet executed, no tuple tree is open, and every kit [Source]
// feeding r (through [Source.Spout], or each of [SpoutPerTask]'s) is
// settled as [Source.WaitSettled]
// means it: nothing left to hand out, no Next in progress, every message
// handed out acked or nacked. So it cannot return before the first emit,
// between a Next and its emit, or between two trees. Spouts of other kinds
// are seen through the in-flight count only: before their first emit and
// between their trees, nothing is in flight either.
//
// It returns ctx's cause, with what is still busy, if ctx ends first, and an
// error wrapping [supervision.ErrStopped] if the topology stopped.
func WaitIdle(ctx context.Context, r *supervision.Running) error {
	sources := sourcesOf(r)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		// A snapshot holds only if no source changed while the stats were
		// read: then at that instant the sources were settled and nothing
		// was in flight.
		before, settled := snapshot(sources)
		s := r.Stats()
		after, _ := snapshot(sources)
		if settled && s.InFlight == 0 && len(s.Tasks) > 0 && before == after {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sheltertest: %d still in flight%s: %w", s.InFlight, busy(sources), context.Cause(ctx))
		case <-r.Done():
			return fmt.Errorf("sheltertest: the topology stopped while waiting: %w", supervision.ErrStopped)
		case <-tick.C: // the runtime's count has no signal to wait on
		}
	}
}

// settler is a Source of any type, as WaitIdle sees it.
type settler interface {
	// settledState reports whether the source is settled, the version of its
	// state and, if it is not settled, what it waits for.
	settledState() (settled bool, version uint64, waiting string)
	// postsOf returns the TaskInfo.Post of every task the source feeds.
	postsOf() []func(func(dsl.Collector))
}

// sourceGroup is the sources of a spout made by SpoutPerTask, by task index.
type sourceGroup []settler

// namedSource is a kit source and the spout it feeds.
type namedSource struct {
	spout string
	src   settler
}

// sourcesOf returns the kit sources among r's spouts, each once.
func sourcesOf(r *supervision.Running) []namedSource {
	var out []namedSource
	seen := map[settler]bool{}
	for _, c := range r.Topology().Components {
		if c.Spout == nil {
			continue
		}
		switch impl := c.Spout.Impl.(type) {
		case sourceGroup:
			for i, s := range impl {
				if !seen[s] {
					seen[s] = true
					out = append(out, namedSource{fmt.Sprintf("%s (task index %d)", c.ID, i), s})
				}
			}
		case settler:
			if !seen[impl] {
				seen[impl] = true
				out = append(out, namedSource{c.ID, impl})
			}
		}
	}
	return out
}

// snapshot returns the sum of the sources' versions (each only grows) and
// whether all are settled.
func snapshot(sources []namedSource) (version uint64, settled bool) {
	settled = true
	for _, n := range sources {
		ok, v, _ := n.src.settledState()
		version += v
		settled = settled && ok
	}
	return version, settled
}

// busy describes the sources that are not settled, for WaitIdle's error.
func busy(sources []namedSource) string {
	var b strings.Builder
	for _, n := range sources {
		if ok, _, waiting := n.src.settledState(); !ok {
			fmt.Fprintf(&b, "; spout %q waits for %s", n.spout, waiting)
		}
	}
	return b.String()
}

// WaitOutcomes waits until the source has recorded at least n outcomes (acks
// and nacks, duplicates included). It returns ctx's cause, with the count, if
// ctx ends first.
func (s *Source[T]) WaitOutcomes(ctx context.Context, n int) error {
	return s.wait(ctx, func() bool { return len(s.outcomes) >= n }, func() string {
		return fmt.Sprintf("%d outcomes, want %d", len(s.outcomes), n)
	})
}

// WaitSettled waits until the source is settled: nothing left to hand out
// (after [Source.Close], what is left does not count), no Next in progress,
// every message handed out acked or nacked. A source fed by a spout that is
// not running, or [Generate]d without end, never settles. It returns ctx's
// cause, with what the source waits for, if ctx ends first.
func (s *Source[T]) WaitSettled(ctx context.Context) error {
	return s.wait(ctx, s.settledLocked, s.waitingLocked)
}

// wait waits until done, called with s.mu held, holds; waiting describes the
// state when ctx ends.
func (s *Source[T]) wait(ctx context.Context, done func() bool, waiting func() string) error {
	for {
		s.mu.Lock()
		ok, changed := done(), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s.mu.Lock()
			defer s.mu.Unlock()
			return fmt.Errorf("sheltertest: %s: %w", waiting(), context.Cause(ctx))
		}
	}
}

func (s *Source[T]) settledState() (settled bool, version uint64, waiting string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settledLocked() {
		return true, s.version, ""
	}
	return false, s.version, s.waitingLocked()
}

func (s *Source[T]) settledLocked() bool {
	return s.outstanding == 0 && s.taking == 0 && (s.closed || s.leftLocked() == 0)
}

// leftLocked counts the messages left to hand out; -1 means without end.
func (s *Source[T]) leftLocked() int {
	if s.gen != nil && s.genLeft < 0 {
		return -1
	}
	n := len(s.ready) + len(s.queue)
	if s.gen != nil {
		n += s.genLeft
	}
	return n
}

// waitingLocked says what keeps the source from being settled.
func (s *Source[T]) waitingLocked() string {
	var parts []string
	if s.outstanding > 0 {
		parts = append(parts, fmt.Sprintf("%d outstanding", s.outstanding))
	}
	if s.taking > 0 {
		parts = append(parts, fmt.Sprintf("%d Next in progress", s.taking))
	}
	if !s.closed {
		switch n := s.leftLocked(); {
		case n < 0:
			parts = append(parts, "values without end to hand out")
		case n > 0:
			parts = append(parts, fmt.Sprintf("%d to hand out", n))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
