package specs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

var _ = Describe("Edges: a task's Context reaches its constructor", Label("edges", "lifecycle"), func() {
	// blockedConstructor is a component constructor that waits on its task's
	// Context, as one dialing a service with it would, and records how it ended.
	type blockedConstructor struct {
		waiting  chan struct{} // closed once it waits
		returned chan struct{} // closed once it has returned
		cause    atomic.Value  // context.Cause of the task's Context when it ended
	}
	newBlocked := func() *blockedConstructor {
		return &blockedConstructor{waiting: make(chan struct{}), returned: make(chan struct{})}
	}
	wait := func(c *blockedConstructor, info dsl.TaskInfo) {
		defer close(c.returned)
		close(c.waiting)
		<-info.Context().Done()
		c.cause.Store(context.Cause(info.Context()))
	}

	DescribeTable("Run's ctx ending while a constructor waits on TaskInfo.Context ends that context, and Run returns the ctx's cause at once",
		func(component func(c *blockedConstructor, b *dsl.Builder)) {
			c := newBlocked()
			b := dsl.New("blocked-constructor", nil)
			component(c, b)
			topo := Build(b)

			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			type result struct {
				r   *supervision.Running
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := supervision.Run(ctx, topo, supervision.WithLogger(ginkgoLogger()))
				done <- result{r, err}
			}()
			Eventually(c.waiting).Should(BeClosed(), "the constructor waits on its Context")

			cause := errors.New("the operator pulled the plug")
			cancel(cause)
			var res result
			// The default message timeout is 30 s, so a wait for a stuck task
			// (a grace of twice that) cannot hide under this bound.
			Eventually(done).WithTimeout(Scaled(10*time.Second)).Should(Receive(&res), "Run returns while the start-up is interrupted")
			Expect(res.r).To(BeNil())
			Expect(res.err).To(MatchError(cause), "Run's error carries the ctx's cause")
			Expect(c.returned).To(BeClosed(), "the constructor returned: its Context ended")
			Expect(c.cause.Load()).To(MatchError(cause), "the task's Context ended with Run's ctx's cause")
		},
		Entry("a bolt's constructor", func(c *blockedConstructor, b *dsl.Builder) {
			spout := b.Spout("spout", dsl.Unreliable(func() (Num, bool) { return Num{}, false }))
			bolt := b.Bolt("bolt", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
				wait(c, info)
				return idleHandler{}
			}))
			b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		}),
		Entry("a spout's constructor", func(c *blockedConstructor, b *dsl.Builder) {
			spout := b.Spout("spout", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Num, bool) {
				wait(c, info)
				return func() (Num, bool) { return Num{}, false }
			}))
			b.Unanchored(spout, b.Bolt("sink", dsl.Terminator(func(Num) {})), dsl.Shuffle[Num]())
		}),
	)
})

var _ = Describe("Edges: a task's Context ends when the task is stopped", Label("edges", "lifecycle"), func() {
	It("ends the Context of a bolt busy waiting on it, so Stop stops the bolt instead of abandoning it", func() {
		executing, returned := make(chan struct{}), make(chan struct{})
		b := dsl.New("busy-on-context", nil)
		bolt := b.Bolt("bolt", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
			return handlerFunc(func(Num) {
				close(executing)
				<-info.Context().Done() // a call to a service, bounded by the task's Context
				close(returned)
			})
		}))
		b.Unanchored(b.Spout("spout", CountTo(1)), bolt, dsl.Shuffle[Num]())
		r := Run(Build(b), NewManualClock().Option(), supervision.WithDrainTimeout(10*time.Millisecond))
		Eventually(executing).Should(BeClosed())

		// Busy, the bolt cannot take its deactivation; once its grace is over
		// the stop ends its Context, and it returns and stops within the next.
		Stop(r)
		Expect(returned).To(BeClosed())
	})
})

// handlerFunc is a bolt handler calling fn with each input (auto-acked).
type handlerFunc func(Num)

func (f handlerFunc) Execute(in Num, _ dsl.Emitter) error {
	f(in)
	return nil
}

// idleHandler consumes its input (auto-acked).
type idleHandler struct{}

func (idleHandler) Execute(Num, dsl.Emitter) error { return nil }
