package jetstream_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// tries records when a bolt saw a message, safe for concurrent use.
type tries struct {
	mu sync.Mutex // mu guards at
	at []time.Time
}

func (t *tries) add() { t.mu.Lock(); t.at = append(t.at, time.Now()); t.mu.Unlock() }
func (t *tries) list() []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]time.Time(nil), t.at...)
}

// poisonTopology is IN -> spout (parallelism 2) -> count: a stateful bolt
// named as statecrash.Counts reads it back, counting each message under its
// stream sequence, taking pace per message, and failing the message at
// stream sequence poison every time (recorded in poisoned).
func poisonTopology(url string, poison uint64, poisoned *tries, pace time.Duration, opts ...jetstream.Option) (*dsl.Topology, error) {
	bl := dsl.New("jetstream-poison", dsl.Conf{dsl.MaxSpoutPending: 64, dsl.CheckpointInterval: 20 * time.Millisecond})
	bl.Streams(jetstream.Message{})
	in := bl.Spout("in", jetstream.Spout[jetstream.Message](url, "IN", "poison", nil, opts...), dsl.Parallelism(2))
	count := bl.Bolt("count", dsl.Stateful(func(m jetstream.Message, st *dsl.State[string, int], _ dsl.Emitter) error {
		if m.StreamSeq == poison {
			poisoned.add()
			return fmt.Errorf("message %d always fails", poison)
		}
		if pace > 0 {
			time.Sleep(pace) // a slow bolt: many messages in flight when a rollback comes
		}
		k := fmt.Sprint(m.StreamSeq)
		v, _ := st.Get(k)
		st.Put(k, v+1)
		return nil
	}), dsl.Parallelism(statecrash.Tasks))
	bl.Anchored(in, count, dsl.Shuffle[jetstream.Message]())
	return bl.Build()
}

// lostDup compares committed counts with every stream sequence 1..n but
// skip counted once: lost (counted 0 times), duplicated (beyond the first).
func lostDup(got map[string]int, n, skip int) (lost, dup int) {
	for seq := 1; seq <= n; seq++ {
		switch v := got[fmt.Sprint(seq)]; {
		case seq == skip:
			Expect(got).NotTo(HaveKey(fmt.Sprint(seq)), "the message given up is in no count")
		case v == 0:
			lost++
		default:
			dup += v - 1
		}
	}
	return lost, dup
}

var _ = Describe("Poison messages with state", Label("connectors", "jetstream", "state", "edges"), func() {
	It("gives a message that always fails up after WithMaxDeliver failures, across the rollbacks, honouring the back-off, and the rest is counted once", func() {
		const poison, n = 40, 200
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.publish("in.records", n)
		store := state.NewMemory()
		gaveUp := make(chan jetstream.Message, 4)
		var poisoned tries
		topo, err := poisonTopology(b.URL, poison, &poisoned, 0,
			jetstream.WithMaxDeliver(4), jetstream.WithNackBackoff(200*time.Millisecond, 400*time.Millisecond),
			jetstream.WithGiveUp(func(m jetstream.Message) { gaveUp <- m }))
		// Each failure rolls the topology back: without a bound the fifth
		// one stops it (the restart limit).
		r := start(topo, err, supervision.WithStore(store),
			supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond, Cap: time.Millisecond, Max: 4, StablePeriod: time.Minute}))

		var got jetstream.Message
		Eventually(gaveUp, scaled(30*time.Second)).Should(Receive(&got))
		Expect(got.Stream).To(Equal("IN"))
		Expect(got.StreamSeq).To(BeNumerically("==", poison))
		Expect(got.Delivered).To(BeNumerically("==", 4), "failed on each of its 4 deliveries")
		// The rest flows and the topology runs on: messages published now too.
		c.publish("in.records", n)
		counts := func() map[string]int {
			got, err := statecrash.Counts(context.Background(), store)
			Expect(err).NotTo(HaveOccurred())
			return got
		}
		Eventually(func() int { return len(counts()) }, scaled(30*time.Second)).Should(Equal(2*n - 1))
		lost, dup := lostDup(counts(), 2*n, poison)
		Expect([]int{lost, dup}).To(Equal([]int{0, 0}), "lost, duplicated")
		Consistently(gaveUp, scaled(100*time.Millisecond)).ShouldNot(Receive(), "reported once")
		Expect(r.Done()).NotTo(BeClosed(), "the topology still runs")
		Eventually(func() any { return metric(r, "in", "jetstream.gave-up") }).Should(BeEquivalentTo(1))
		at := poisoned.list()
		Expect(at).To(HaveLen(4), "the first delivery and 3 retries, each after a rollback")
		for i, least := range []time.Duration{200, 400, 400} { // capped at 400: lower bounds only, TestBackoff checks the cap
			Expect(at[i+1].Sub(at[i])).To(BeNumerically(">=", least*time.Millisecond), "back-off before retry %d", i+1)
		}
	})

	It("counts no message abandoned by a rollback as a failure: with WithMaxDeliver(1) only the poison message is given up", func() {
		const poison, n = 100, 600
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.publish("in.records", n)
		store := state.NewMemory()
		gaveUp := make(chan jetstream.Message, 64)
		var poisoned tries
		topo, err := poisonTopology(b.URL, poison, &poisoned, 200*time.Microsecond,
			jetstream.WithMaxDeliver(1), jetstream.WithGiveUp(func(m jetstream.Message) { gaveUp <- m }))
		r := start(topo, err, supervision.WithStore(store))
		var got jetstream.Message
		Eventually(gaveUp, scaled(30*time.Second)).Should(Receive(&got))
		Expect(got.StreamSeq).To(BeNumerically("==", poison))
		Eventually(func() int {
			got, err := statecrash.Counts(context.Background(), store)
			Expect(err).NotTo(HaveOccurred())
			return len(got)
		}, scaled(30*time.Second)).Should(Equal(n - 1))
		got2, err := statecrash.Counts(context.Background(), store)
		Expect(err).NotTo(HaveOccurred())
		lost, dup := lostDup(got2, n, poison)
		Expect([]int{lost, dup}).To(Equal([]int{0, 0}), "lost, duplicated")
		Expect(gaveUp).NotTo(Receive(), "messages in flight at the rollback are replayed, not given up")
		Expect(poisoned.list()).To(HaveLen(1))
		Expect(r.Done()).NotTo(BeClosed())
	})
})

var _ = Describe("Poison messages without state", Label("connectors", "jetstream", "edges"), func() {
	It("terminates a message whose tree fails on its WithMaxDeliver-th delivery, reports it, and acks the others", func() {
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.publish("in.a", 5)
		gaveUp := make(chan jetstream.Message, 4)
		var poisoned tries
		ok := &seen[uint64]{}
		topo, err := spoutTopology[jetstream.Message](b.URL, nil, nil, dsl.AutoAck(func(m jetstream.Message, _ dsl.Emitter) error {
			if m.StreamSeq == 3 {
				poisoned.add()
				return errOnPurpose
			}
			ok.add(m.StreamSeq)
			return nil
		}), jetstream.WithMaxDeliver(3), jetstream.WithNackBackoff(10*time.Millisecond, 20*time.Millisecond),
			jetstream.WithGiveUp(func(m jetstream.Message) { gaveUp <- m }))
		r := start(topo, err)
		var got jetstream.Message
		Eventually(gaveUp, scaled(10*time.Second)).Should(Receive(&got))
		Expect([]any{got.Stream, got.StreamSeq, got.Delivered}).To(Equal([]any{"IN", uint64(3), uint64(3)}))
		Eventually(func() uint64 {
			info := c.consumerInfo("IN", "specs")
			if info.NumAckPending != 0 || info.NumRedelivered != 0 {
				return 0
			}
			return info.AckFloor.Stream
		}).Should(BeNumerically("==", 5), "the others acked, the message given up terminated")
		Consistently(poisoned.list, scaled(200*time.Millisecond)).Should(HaveLen(3))
		Expect(ok.list()).To(ConsistOf(uint64(1), uint64(2), uint64(4), uint64(5)))
		Eventually(func() any { return metric(r, "in", "jetstream.gave-up") }).Should(BeEquivalentTo(1))
	})
})
