package specs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

var _ = Describe("A bolt fed by a flooding spout and a quiet one", Label("edges"), func() {

	// Each sender has a lane of its own into the bolt, served in turn: while
	// the flood keeps its lane full, the quiet spout's tuples still go next,
	// one between two of the flood's, instead of waiting behind it.
	It("executes the quiet spout's tuples between the flood's", func() {
		permits, release := make(chan struct{}, 16), make(chan struct{})
		var releasing sync.Once
		free := func() { releasing.Do(func() { close(release) }) }
		var floodNexts, floodDone, quietNexts, quietDone atomic.Int64
		var quietOpen atomic.Bool

		b := dsl.New("fairness", dsl.Conf{dsl.ReceiveBufferSize: 8, dsl.BatchSize: 1}) // 4 slots a lane, a tuple a batch
		flood := b.Spout("flood", dsl.Unreliable(func() (Raw, bool) {
			floodNexts.Add(1)
			return Raw{1}, true
		}))
		quiet := b.Spout("quiet", dsl.Unreliable(func() (Raw, bool) {
			if !quietOpen.Load() {
				return Raw{}, false
			}
			if n := quietNexts.Add(1); n <= 3 {
				return Raw{-int(n)}, true
			}
			return Raw{}, false
		}))
		sink := b.Bolt("sink", dsl.AutoAck(func(r Raw, _ dsl.Emitter) error {
			if r.N < 0 {
				quietDone.Add(1)
				return nil
			}
			select { // the flood's tuples wait for the test
			case <-permits:
			case <-release:
			}
			floodDone.Add(1)
			return nil
		}))
		b.Unanchored(flood, sink, dsl.Shuffle[Raw]())
		b.Unanchored(quiet, sink, dsl.Shuffle[Raw]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithoutRestarts())
		DeferCleanup(free) // before Start's cleanup stops the topology, even if the spec fails

		By("letting the flood fill its lane: one tuple executing, 4 waiting, the 6th parked in its emit")
		Eventually(floodNexts.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeNumerically(">=", 6))
		Expect(floodDone.Load()).To(BeZero())

		By("opening the quiet spout: its 3 tuples wait in their own lane")
		quietOpen.Store(true)
		// A 4th Next comes after the 3rd tuple's emit, which put it in the
		// lane (a batch of one leaves at once, and the lane has room).
		Eventually(quietNexts.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeNumerically(">=", 4))
		Expect(quietDone.Load()).To(BeZero())

		By("letting 4 of the flood's tuples through")
		for range 4 {
			permits <- struct{}{}
		}
		Eventually(floodDone.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeNumerically("==", 4))
		Expect(quietDone.Load()).To(BeNumerically("==", 3), "the quiet spout's tuples waited behind the flood")

		By("stopping: the flood's parked sender lets go")
		free()
		ctx, cancel := context.WithTimeout(context.Background(), Scaled(20*time.Second))
		defer cancel()
		Expect(r.Stop(ctx)).To(Succeed())
	})
})
