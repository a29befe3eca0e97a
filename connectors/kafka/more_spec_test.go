package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

var _ = Describe("Kafka spout's first poll", Label("connectors", "kafka"), func() {
	const topic, group = "in", "g"

	// Offsets 0..9 exist; the group committed 5 when committed is true. The
	// spout then reads; records 10.. are produced until it saw one of them.
	DescribeTable("starts where its strategy says",
		func(fp kafka.FirstPoll, committed bool, first int64) {
			b := newBroker(kfake.SeedTopics(1, topic))
			b.produce(topic, 1, 10)
			if committed {
				os := kadm.Offsets{}
				os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 5, LeaderEpoch: -1})
				_, err := b.adm.CommitOffsets(bounded(), group, os)
				Expect(err).NotTo(HaveOccurred())
			}
			seen := newLedger()
			var fresh atomic.Bool // a record produced after the start was seen
			spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithFirstPoll(fp))
			run(pipeline(spout, func(r kafka.Record) error { seen.add(r); fresh.Store(fresh.Load() || r.Offset >= 10); return nil }))
			// Feed new records until the spout saw one: a "latest" start
			// only begins once the spout is assigned the partition.
			Eventually(func() bool {
				if fresh.Load() {
					return true
				}
				b.produce(topic, 1, 1)
				return false
			}, scaled(20*time.Second), 50*time.Millisecond).Should(BeTrue())
			for o := range int64(10) {
				Expect(seen.has(topic, 0, o)).To(Equal(o >= first), "offset %d (first %d)", o, first)
			}
		},
		Entry("UNCOMMITTED_EARLIEST with a commit: the committed offset", kafka.UncommittedEarliest, true, int64(5)),
		Entry("UNCOMMITTED_EARLIEST without: the start", kafka.UncommittedEarliest, false, int64(0)),
		Entry("UNCOMMITTED_LATEST with a commit: the committed offset", kafka.UncommittedLatest, true, int64(5)),
		Entry("UNCOMMITTED_LATEST without: the end", kafka.UncommittedLatest, false, int64(10)),
		Entry("EARLIEST ignores the commit", kafka.Earliest, true, int64(0)),
		Entry("LATEST ignores the commit", kafka.Latest, true, int64(10)),
	)
})

var _ = Describe("Kafka spout in a rebalance", Label("connectors", "kafka"), func() {
	const topic, group = "in", "g"

	It("commits the acked offsets of revoked partitions, forgets their open records and ignores their late acks", func() {
		const parts, per = 4, 2 * splitAt
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		seen := newLedger()
		h := &holder{seen: seen}
		// The first half of each partition is acked at once, the second
		// half held, so that whichever partitions the group moves have
		// both; the commit period is an hour: only a revoke or the close
		// commits.
		tb := dsl.New("rebalance", conf())
		s := tb.Spout("kafka", kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(time.Hour)))
		w := tb.Bolt("hold", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[kafka.Record] {
			h.post = info.Post
			return &splitHolder{h}
		}))
		tb.Anchored(s, w, dsl.Shuffle[kafka.Record]())
		r := run(tb.Build())
		Eventually(seen.distinct, scaled(20*time.Second)).Should(Equal(parts * per))

		// A second member joins: the group takes some partitions from the spout.
		assigned := make(chan map[string][]int32, 4)
		joiner, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.DisableAutoCommit(), kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(50*time.Millisecond),
			kgo.FetchMaxWait(100*time.Millisecond),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { assigned <- m }))
		Expect(err).NotTo(HaveOccurred())
		defer joiner.Close()
		// Cooperative rebalancing gives the joiner nothing at first, then
		// what the spout revoked.
		var got map[string][]int32
		Eventually(func() []int32 {
			select {
			case got = <-assigned:
			default:
			}
			return got[topic]
		}, scaled(20*time.Second), 10*time.Millisecond).ShouldNot(BeEmpty())
		// The revoke committed what the joiner got up to its first open
		// record: the acked half.
		asRevoked := func() {
			GinkgoHelper()
			for _, p := range got[topic] {
				Expect(b.committed(group, topic, p)).To(Equal(int64(per/2)), "partition %d", p)
			}
		}
		asRevoked()
		// The spout forgot the open records: the joiner reads them again,
		// from the commit on.
		ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
		defer cancel()
		for n, again := 0, len(got[topic])*per/2; n < again; {
			fs := joiner.PollFetches(ctx)
			Expect(ctx.Err()).NotTo(HaveOccurred())
			fs.EachRecord(func(rec *kgo.Record) {
				Expect(rec.Offset).To(BeNumerically(">=", per/2), "partition %d read again before its commit", rec.Partition)
			})
			n += fs.NumRecords()
		}
		// Late acks of the revoked records are ignored: the release acks
		// them all, and the close, which commits what the spout still owns,
		// commits none of them.
		h.release()
		stop(r)
		asRevoked()
	})

	It("loses nothing when a second spout joins the group mid-run", func() {
		const parts, per = 4, 300
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per/2)
		seen := newLedger()
		opts := []kafka.Option{fast(), kafka.WithCommitPeriod(10 * time.Millisecond)}
		run(pipeline(kafka.Spout(b.seeds, group, []string{topic}, opts...), func(r kafka.Record) error { seen.add(r); return nil }))
		Eventually(seen.distinct, scaled(20*time.Second)).Should(BeNumerically(">", parts*per/4))
		run(pipeline(kafka.Spout(b.seeds, group, []string{topic}, opts...), func(r kafka.Record) error { seen.add(r); return nil }))
		b.produce(topic, parts, per/2)
		Eventually(seen.distinct, scaled(30*time.Second)).Should(Equal(parts * per))
		Eventually(func(g Gomega) {
			for p := range int32(parts) {
				g.Expect(b.committed(group, topic, p)).To(Equal(int64(per)))
			}
		}, scaled(20*time.Second), 20*time.Millisecond).Should(Succeed())
		d, t := seen.counts()
		GinkgoWriter.Printf("rebalance mid-run: %d records, %d processed, %d duplicates\n", parts*per, d, t-d)
	})

	It("goes on when the broker goes away and comes back, losing nothing", func() {
		const parts, per = 2, 200
		dir := GinkgoT().TempDir()
		port := freePort()
		bopts := []kfake.Opt{kfake.Ports(port), kfake.DataDir(dir), kfake.SeedTopics(parts, topic)}
		b := newBroker(bopts...)
		b.produce(topic, parts, per/2)
		seen := newLedger()
		run(pipeline(kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(10*time.Millisecond)),
			func(r kafka.Record) error { seen.add(r); return nil }))
		Eventually(seen.distinct, scaled(20*time.Second)).Should(Equal(parts * per / 2))
		b.close()
		time.Sleep(300 * time.Millisecond) // the outage itself: clients see refused connections
		b = newBroker(bopts[:2]...)
		b.produce(topic, parts, per/2)
		Eventually(seen.distinct, scaled(60*time.Second)).Should(Equal(parts * per))
		Eventually(func(g Gomega) {
			for p := range int32(parts) {
				g.Expect(b.committed(group, topic, p)).To(Equal(int64(per)))
			}
		}, scaled(30*time.Second), 20*time.Millisecond).Should(Succeed())
	})
})

// splitAt is half of the rebalance spec's records per partition.
const splitAt = 10

// splitHolder acks the records before splitAt in each partition at once and
// holds the rest until its holder's release.
type splitHolder struct{ *holder }

func (s *splitHolder) Execute(r kafka.Record, in dsl.Tuple, c dsl.Collector) error {
	if r.Offset < splitAt {
		s.seen.add(r)
		c.Ack(in)
		return nil
	}
	return s.holder.Execute(r, in, c)
}

var _ = Describe("Kafka sink", Label("connectors", "kafka"), func() {
	type Line struct{ N int }

	sinkTopology := func(src *sheltertest.Source[Line], seeds []string, topic string) (*dsl.Topology, error) {
		tb := dsl.New("sink", conf())
		s := tb.Spout("lines", src.Spout())
		k := tb.Bolt("sink", kafka.Sink(seeds, func(l Line) kafka.Record {
			return kafka.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", l.N%3), Value: fmt.Appendf(nil, "%d", l.N)}
		}))
		tb.Anchored(s, k, dsl.Shuffle[Line]())
		return tb.Build()
	}

	It("produces each input to the topic and key it chose, acking the input only on the broker's acknowledgement", func() {
		b := newBroker(kfake.SeedTopics(3, "out"))
		// Hold every produce request until released.
		held, release := make(chan struct{}, 64), make(chan struct{})
		b.c.ControlKey(int16(0), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
			b.c.KeepControl()
			select {
			case held <- struct{}{}:
			default:
			}
			b.c.SleepControl(func() { <-release })
			return nil, nil, false
		})
		src := sheltertest.NewSource(Line{1}, Line{2}, Line{3})
		run(sinkTopology(src, b.seeds, "out"))
		Eventually(held, scaled(20*time.Second)).Should(Receive())
		Consistently(func() int { return len(src.Outcomes()) }, 200*time.Millisecond).Should(BeZero(), "acked before the broker's acknowledgement")
		close(release)
		Eventually(func() int { return len(src.Outcomes()) }, scaled(20*time.Second)).Should(Equal(3))
		for _, o := range src.Outcomes() {
			Expect(o.Acked).To(BeTrue())
		}
		// The records are there, keyed as route chose.
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		Expect(err).NotTo(HaveOccurred())
		defer cl.Close()
		got := map[string]string{}
		ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
		defer cancel()
		for len(got) < 3 && ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Value)] = string(r.Key) })
		}
		Expect(got).To(Equal(map[string]string{"1": "k1", "2": "k2", "3": "k0"}))
	})

	It("fails the input when producing fails", func() {
		b := newBroker(kfake.SeedTopics(1, "out"))
		src := sheltertest.NewSource(Line{1})
		run(sinkTopology(src, b.seeds, "no-such-topic"))
		Eventually(func() int { return len(src.Outcomes()) }, scaled(60*time.Second)).Should(Equal(1))
		Expect(src.Outcomes()[0].Acked).To(BeFalse())
	})
})

var _ = errors.New
var _ = supervision.Run
