package specs_test

import (
	"context"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Stage tuples of the backpressure topology.
type Raw struct{ N int }
type Cooked struct{ N int }

var _ = Describe("Tiny rings under full load", Label("backpressure-deadlock"), func() {

	It("keeps flowing and stops cleanly with rings of 8, max pending 10,000 and fan-out", func() {
		var acked atomic.Int64
		src := sheltertest.Generate(-1, func(i int) Raw { return Raw{i + 1} }, // without end
			sheltertest.OnAck(func(int) error { acked.Add(1); return nil }))
		b := dsl.New("backpressure", dsl.Conf{
			dsl.ReceiveBufferSize: 8,
			dsl.MaxSpoutPending:   10000,
			dsl.BatchSize:         16,
		})
		b.Streams(Cooked{})
		spout := b.Spout("source", src.Spout(), dsl.Parallelism(2))
		cook := b.Bolt("cook", dsl.AutoAck(func(r Raw, out dsl.Emitter) error {
			out.Emit(Cooked{r.N})
			return nil
		}), dsl.Parallelism(2))
		var eaten atomic.Int64
		eat := b.Bolt("eat", dsl.AutoAck(func(Cooked, dsl.Emitter) error {
			eaten.Add(1)
			return nil
		}), dsl.Parallelism(3))
		audit := b.Bolt("audit", dsl.AutoAck(func(Cooked, dsl.Emitter) error { return nil }))
		b.Anchored(spout, cook, dsl.Shuffle[Raw]())
		b.Anchored(cook, eat, dsl.All[Cooked]())      // fan-out: every eat task gets every tuple
		b.Anchored(cook, audit, dsl.Global[Cooked]()) // and one more edge per tuple
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithoutRestarts())

		By("running at full speed: acks keep arriving, second after second")
		for i := 0; i < 3; i++ {
			before := acked.Load()
			Eventually(acked.Load).WithTimeout(Scaled(5*time.Second)).Should(BeNumerically(">", before+1000), "stalled in second %d", i)
		}

		By("stopping within the drain bound")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		Expect(r.Stop(ctx)).To(Succeed())
		Expect(r.Wait()).To(Succeed())

		By("settling every message exactly once")
		// Every message handed out was settled exactly once: acked, failed,
		// or nacked back when the stop abandoned its open tree.
		Expect(src.Verify()).To(Succeed())
		Expect(eaten.Load()).To(BeNumerically(">", 0))
	})
})
