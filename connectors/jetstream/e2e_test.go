package jetstream_test

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/connectors/jetstream"
)

// distinct counts the different values in all.
func distinct(all []string) int {
	set := map[string]bool{}
	for _, v := range all {
		set[v] = true
	}
	return len(set)
}

var _ = Describe("Spout to sink", Label("connectors", "jetstream"), func() {
	var (
		b *broker
		c *client
	)
	BeforeEach(func() {
		b = newBroker()
		c = connect(b.URL)
		c.stream("IN", "in.>")
		c.stream("OUT", "out.>")
	})

	It("loses nothing when a bolt fails 10% of its inputs: every record reaches the sink once, and every message is acked", func() {
		const n = 1000
		c.publish("in.records", n)
		var mu sync.Mutex
		failed := 0
		p := pipeline{url: b.URL, spoutOpts: []jetstream.Option{jetstream.WithNackBackoff(time.Millisecond, 10*time.Millisecond)},
			fail: func(m jetstream.Message) bool {
				// One delivery in ten, replays included, by a fixed rule.
				if (m.StreamSeq*7+m.Delivered*3)%10 != 0 {
					return false
				}
				mu.Lock()
				failed++
				mu.Unlock()
				return true
			}}
		start(p.topology())
		Eventually(c.count).WithArguments("OUT").Should(BeNumerically("==", n))
		Eventually(func() uint64 {
			info := c.consumerInfo("IN", "pipeline")
			if info.NumAckPending != 0 || info.NumPending != 0 {
				return 0
			}
			return info.AckFloor.Stream
		}).Should(BeNumerically("==", n), "the ack floor passes every message")
		Expect(distinct(c.readAll("OUT"))).To(Equal(n))
		mu.Lock()
		defer mu.Unlock()
		Expect(failed).To(BeNumerically(">=", n/10-n/50), "about 10% of deliveries failed")
		stored, err := c.count("OUT")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("10%% failures: produced=%d failed deliveries=%d stored=%d lost=0\n", n, failed, stored)
	})

	It("loses nothing when the server goes away mid-run and comes back on the same port and store", func() {
		const n = 400
		c.publish("in.records", n)
		// work holds every message after the 50th until the server is back,
		// so the restart comes mid-run with trees open.
		gate := make(chan struct{})
		var once sync.Once
		open := func() { once.Do(func() { close(gate) }) }
		p := pipeline{url: b.URL, spoutOpts: []jetstream.Option{jetstream.WithNackBackoff(time.Millisecond, 50*time.Millisecond), jetstream.WithAckWait(2 * time.Second)},
			conf: map[string]any{"topology.max.spout.pending": 8},
			processed: func(m jetstream.Message) {
				if m.StreamSeq > 50 {
					<-gate
				}
			}}
		start(p.topology())
		DeferCleanup(open) // before the stop, even when the spec fails
		// With 8 trees at most in flight, the 51st message is emitted only once
		// 43 are stored; the two work tasks may then both wait at the gate
		// with some of the first 50 queued behind them.
		Eventually(c.count).WithArguments("OUT").Should(BeNumerically(">=", 40))
		b.restart()
		open()
		c.publish("in.records", n) // records 1..n again, new sequences n+1..2n
		Eventually(c.count).WithArguments("OUT").Should(BeNumerically("==", 2*n))
		Expect(distinct(c.readAll("OUT"))).To(Equal(n), "each data value twice, from two sequences")
		Eventually(func() int { return c.consumerInfo("IN", "pipeline").NumAckPending }).Should(BeZero())
	})
})
