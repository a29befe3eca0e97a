package specs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// Stage tuples of the backpressure topology.
type Raw struct{ N int }
type Cooked struct{ N int }

// countingSource is an endless reliable source that counts its callbacks.
type countingSource struct {
	next         atomic.Int64
	acked, nackd atomic.Int64
	mu           sync.Mutex
	outcomes     map[int64]int // message -> callbacks received
}

func (s *countingSource) Next() (int64, Raw, bool) {
	n := s.next.Add(1)
	return n, Raw{int(n)}, true
}

func (s *countingSource) settle(id int64) {
	s.mu.Lock()
	s.outcomes[id]++
	s.mu.Unlock()
}

func (s *countingSource) Ack(id int64)  { s.acked.Add(1); s.settle(id) }
func (s *countingSource) Nack(id int64) { s.nackd.Add(1); s.settle(id) }

var _ = Describe("Tiny rings under full load", Label("backpressure-deadlock"), func() {

	It("keeps flowing and stops cleanly with rings of 8, max pending 10,000 and fan-out", func() {
		src := &countingSource{outcomes: map[int64]int{}}
		b := dsl.New("backpressure", dsl.Conf{
			dsl.ReceiveBufferSize: 8,
			dsl.MaxSpoutPending:   10000,
			dsl.BatchSize:         16,
		})
		b.Streams(Cooked{})
		spout := b.Spout("source", dsl.Reliable(src.Next, src.Ack, src.Nack), dsl.Parallelism(2))
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
		topo, err := b.Build()
		Expect(err).NotTo(HaveOccurred())

		r, err := supervision.Run(context.Background(), topo, supervision.WithoutRestarts())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stopQuietly, r)

		By("running at full speed: acks keep arriving, second after second")
		for i := 0; i < 3; i++ {
			before := src.acked.Load()
			Eventually(src.acked.Load).WithTimeout(5*time.Second).Should(BeNumerically(">", before+1000), "stalled in second %d", i)
		}

		By("stopping within the drain bound")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		Expect(r.Stop(ctx)).To(Succeed())
		Expect(r.Wait()).To(Succeed())

		By("settling every message exactly once")
		emitted := src.next.Load()
		src.mu.Lock()
		defer src.mu.Unlock()
		// Every message handed out was emitted and settled exactly once: acked,
		// failed, or nacked back when the stop abandoned its open tree.
		for id, n := range src.outcomes {
			Expect(n).To(Equal(1), "message %d settled %d times", id, n)
		}
		Expect(int64(len(src.outcomes))).To(Equal(emitted))
		Expect(eaten.Load()).To(BeNumerically(">", 0))
	})
})
