package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
)

// pipeline is spout -> work, anchored: work's error fails the record's tree.
func pipeline(spout *dsl.SpoutSpec, work func(kafka.Record) error) (*dsl.Topology, error) {
	b := dsl.New("kafka-spec", conf())
	s := b.Spout("kafka", spout)
	w := b.Bolt("work", dsl.AutoAck(func(r kafka.Record, _ dsl.Emitter) error { return work(r) }))
	b.Anchored(s, w, dsl.Shuffle[kafka.Record]())
	return b.Build()
}

var errUnlucky = errors.New("failed on purpose")

var _ = Describe("Kafka spout", Label("connectors", "kafka"), func() {
	const topic, group = "in", "g"

	It("emits each record's topic, partition, offset, key, value, headers and timestamp, through a translator", func() {
		b := newBroker(kfake.SeedTopics(1, topic))
		ts := time.UnixMilli(1_700_000_000_123)
		ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second)) // a failure ends the wait
		defer cancel()
		Expect(b.cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte("v"), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("hv")}}}).FirstErr()).To(Succeed())
		type Line struct{ Text string }
		got := make(chan kafka.Record, 1)
		lines := make(chan Line, 1)
		spout := kafka.SpoutOf(func(r kafka.Record) Line {
			got <- r
			return Line{Text: string(r.Key) + "=" + string(r.Value)}
		}, b.seeds, group, []string{topic}, fast())
		tb := dsl.New("fields", conf())
		s := tb.Spout("kafka", spout)
		w := tb.Bolt("work", dsl.AutoAck(func(l Line, _ dsl.Emitter) error { lines <- l; return nil }))
		tb.Anchored(s, w, dsl.Shuffle[Line]())
		run(tb.Build())
		var r kafka.Record
		Eventually(got, scaled(20*time.Second)).Should(Receive(&r))
		Expect(r.Topic).To(Equal(topic))
		Expect(r.Partition).To(Equal(int32(0)))
		Expect(r.Offset).To(Equal(int64(0)))
		Expect(string(r.Key)).To(Equal("k"))
		Expect(string(r.Value)).To(Equal("v"))
		Expect(r.Headers).To(Equal([]kafka.Header{{Key: "h", Value: []byte("hv")}}))
		Expect(r.Timestamp.Equal(ts)).To(BeTrue(), "timestamp %v", r.Timestamp)
		Eventually(lines, scaled(20*time.Second)).Should(Receive(Equal(Line{Text: "k=v"})))
	})

	It("loses nothing when the bolt fails 10% of its inputs, and never commits past an unprocessed record", func() {
		const parts, per = 4, 250
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		done := newLedger()
		var fails atomic.Int64
		var attempts sync.Map // first attempts of every 10th record fail
		spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(5*time.Millisecond),
			kafka.WithRetry(time.Millisecond, time.Millisecond, 20*time.Millisecond, 1000))
		run(pipeline(spout, func(r kafka.Record) error {
			if r.Offset%10 == 3 {
				if _, again := attempts.LoadOrStore(fmt.Sprint(r.Partition, r.Offset), true); !again {
					fails.Add(1)
					return errUnlucky
				}
			}
			done.add(r)
			return nil
		}))
		// The check: whatever the group has committed, every record below it
		// was processed (the commit is read first, so a record processed
		// later cannot make it pass).
		violations := 0
		Eventually(func(g Gomega) {
			for p := range int32(parts) {
				at := b.committed(group, topic, p)
				for o := int64(0); o < at; o++ {
					if !done.has(topic, p, o) {
						violations++
					}
				}
			}
			g.Expect(done.distinct()).To(Equal(parts * per))
			for p := range int32(parts) {
				g.Expect(b.committed(group, topic, p)).To(Equal(int64(per)))
			}
		}, scaled(60*time.Second), 20*time.Millisecond).Should(Succeed())
		Expect(violations).To(BeZero(), "committed offsets passed unprocessed records")
		Expect(fails.Load()).To(Equal(int64(parts * per / 10)))
	})

	It("retries a failed record with exponential back-off, then commits past it and reports it", func() {
		b := newBroker(kfake.SeedTopics(1, topic))
		b.produce(topic, 1, 3)
		var mu sync.Mutex
		var tries []time.Time // of offset 1, which always fails
		gaveUp := make(chan kafka.Record, 4)
		done := newLedger()
		spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(5*time.Millisecond),
			kafka.WithRetry(0, 10*time.Millisecond, 40*time.Millisecond, 4), kafka.WithGiveUp(func(r kafka.Record) { gaveUp <- r }))
		run(pipeline(spout, func(r kafka.Record) error {
			if r.Offset == 1 {
				mu.Lock()
				tries = append(tries, time.Now())
				mu.Unlock()
				return errUnlucky
			}
			done.add(r)
			return nil
		}))
		var r kafka.Record
		Eventually(gaveUp, scaled(20*time.Second)).Should(Receive(&r))
		Expect(r.Offset).To(Equal(int64(1)))
		Eventually(func() int64 { return b.committed(group, topic, 0) }, scaled(10*time.Second)).Should(Equal(int64(3)))
		Consistently(gaveUp, 50*time.Millisecond).ShouldNot(Receive())
		mu.Lock()
		defer mu.Unlock()
		Expect(tries).To(HaveLen(5), "the first attempt and 4 retries")
		// Waits: 0, then 10 ms * 2^(n-1) capped at 40 ms: 20, 40, 40. Each
		// is a lower bound (the spout polls its retries every spout wait).
		for i, least := range []time.Duration{0, 20, 40, 40} {
			Expect(tries[i+1].Sub(tries[i])).To(BeNumerically(">=", least*time.Millisecond), "retry %d", i+1)
		}
		Expect(done.distinct()).To(Equal(2))
	})

	DescribeTable("processing guarantees other than at-least-once emit untracked and never retry",
		func(g kafka.Guarantee) {
			const per = 50
			b := newBroker(kfake.SeedTopics(1, topic))
			b.produce(topic, 1, per)
			seen := newLedger()
			spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithGuarantee(g), kafka.WithCommitPeriod(5*time.Millisecond))
			run(pipeline(spout, func(r kafka.Record) error { seen.add(r); return errUnlucky }))
			Eventually(func() int64 { return b.committed(group, topic, 0) }, scaled(20*time.Second)).Should(Equal(int64(per)))
			Eventually(seen.distinct, scaled(20*time.Second)).Should(Equal(per))
			Consistently(func() int { _, t := seen.counts(); return t }, 100*time.Millisecond).Should(Equal(per), "a failed record was emitted again")
		},
		Entry("at most once", kafka.AtMostOnce),
		Entry("no guarantee", kafka.NoGuarantee),
	)

	It("commits at most once before emitting: a crash after the poll loses, never repeats", func() {
		// The committed offset is at the end of a poll before its records are
		// processed: hold the bolt, and the commit is already past them.
		b := newBroker(kfake.SeedTopics(1, topic))
		b.produce(topic, 1, 10)
		release := make(chan struct{})
		spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithGuarantee(kafka.AtMostOnce))
		run(pipeline(spout, func(kafka.Record) error { <-release; return nil }))
		defer close(release)
		Eventually(func() int64 { return b.committed(group, topic, 0) }, scaled(20*time.Second)).Should(Equal(int64(10)))
	})

	It("pauses a partition at the bound of uncommitted offsets and resumes after a commit", func() {
		const max = 10
		b := newBroker(kfake.SeedTopics(1, topic))
		b.produce(topic, 1, 100)
		spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithMaxUncommitted(max), kafka.WithCommitPeriod(5*time.Millisecond))
		seen := newLedger()
		h := &holder{}
		tb := dsl.New("bound", conf())
		s := tb.Spout("kafka", spout)
		w := tb.Bolt("hold", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[kafka.Record] {
			h.post = info.Post
			return h
		}))
		tb.Anchored(s, w, dsl.Shuffle[kafka.Record]())
		h.seen = seen
		run(tb.Build())
		Eventually(seen.distinct, scaled(20*time.Second)).Should(Equal(max))
		Consistently(seen.distinct, 200*time.Millisecond).Should(Equal(max), "polled past the bound")
		h.release()
		Eventually(seen.distinct, scaled(20*time.Second)).Should(Equal(100))
		Eventually(func() int64 { return b.committed(group, topic, 0) }, scaled(10*time.Second)).Should(Equal(int64(100)))
	})
})

// holder is a manual bolt that keeps its inputs open until released, then
// acks them and every later input at once.
type holder struct {
	seen     *ledger
	post     func(func(dsl.Collector))
	held     []dsl.Tuple // touched on the bolt's goroutine only
	released bool
}

func (h *holder) Execute(r kafka.Record, in dsl.Tuple, c dsl.Collector) error {
	h.seen.add(r)
	if h.released {
		c.Ack(in)
	} else {
		h.held = append(h.held, in)
	}
	return nil
}

func (h *holder) release() {
	h.post(func(c dsl.Collector) {
		h.released = true
		for _, in := range h.held {
			c.Ack(in)
		}
		h.held = nil
	})
}
