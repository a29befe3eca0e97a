package sheltertest

import (
	"context"
	"fmt"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// poster is a kit component that knows its tasks' TaskInfo.Post: a [Source]
// or a [Recorder].
type poster interface {
	postsOf() []func(func(dsl.Collector))
}

// Quiet advances the clock by period and waits until every kit component of
// r (the tasks of [Source.Spout], [SpoutPerTask] and [Recorder] bolts) has
// handled what the clock sent it before Advance returned: a tick tuple to a
// recording bolt, the next Next of a spout that was backing off, and what
// that Next handed out, is all there when Quiet returns. It is the wait for
// checks that something does not happen during a period (no tick before the
// frequency, no Next while deactivated, no replay without [Replay]), with no
// sleep: move the clock past the period, then check the records.
//
// Quiet waits by posting a no-op to each of those tasks (TaskInfo.Post) and
// awaiting them all: a task runs what was posted to it in order, so each no-op
// runs after the clock's message to its task. The ackers are not kit tasks: a
// tree's timeout is an acker's rotation, whose nack Quiet does not wait for
// (it cannot tell a nack that never comes from one on its way); a held tree
// that must not time out is shown by a later [Clock.Advance] past its timeout
// and [Source.WaitOutcomes], against the outcomes before.
//
// Call it while the topology runs: across a restart, a task of the stopped
// incarnation drops what was posted to it, and Quiet waits until ctx ends.
// It returns ctx's cause, with how many tasks had not answered, if ctx ends
// first, and an error wrapping [supervision.ErrStopped] if r stopped.
func (c *Clock) Quiet(ctx context.Context, r *supervision.Running, period time.Duration) error {
	c.Advance(period)
	posts := kitPosts(r)
	done := make(chan struct{}, len(posts))
	for _, post := range posts {
		post(func(dsl.Collector) { done <- struct{}{} })
	}
	for answered := 0; answered < len(posts); answered++ {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("sheltertest: %d of %d kit tasks handled the clock's messages: %w", answered, len(posts), context.Cause(ctx))
		case <-r.Done():
			return fmt.Errorf("sheltertest: the topology stopped while waiting for quiet: %w", supervision.ErrStopped)
		}
	}
	return nil
}

// kitPosts returns the Post of every task of r's kit components.
func kitPosts(r *supervision.Running) []func(func(dsl.Collector)) {
	var posts []func(func(dsl.Collector))
	seen := map[poster]bool{}
	add := func(impl any) {
		if p, ok := impl.(poster); ok && !seen[p] {
			seen[p] = true
			posts = append(posts, p.postsOf()...)
		}
	}
	for _, c := range r.Topology().Components {
		switch {
		case c.Spout != nil:
			if g, ok := c.Spout.Impl.(sourceGroup); ok {
				for _, s := range g {
					add(s)
				}
				continue
			}
			add(c.Spout.Impl)
		case c.Bolt != nil:
			add(c.Bolt.Impl)
		}
	}
	return posts
}
