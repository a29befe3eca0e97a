package kafka_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 31: the Kafka spout in the checkpoints of a topology with state.

// recKey names a record in the counts: partition/offset.
func recKey(r kafka.Record) string { return fmt.Sprintf("%d/%d", r.Partition, r.Offset) }

// countRecords builds spout -> count, count keeping in its State how often
// it counted each record (the crash driver's layout, which statecrash.Counts
// reads). fail, if not nil, may fail a record before it is counted.
func countRecords(name string, spout *dsl.SpoutSpec, fail func(kafka.Record) error) *dsl.Topology {
	GinkgoHelper()
	return countRecordsEvery(20*time.Millisecond, name, spout, fail)
}

// countRecordsEvery is countRecords with a checkpoint every interval.
func countRecordsEvery(interval time.Duration, name string, spout *dsl.SpoutSpec, fail func(kafka.Record) error) *dsl.Topology {
	GinkgoHelper()
	b := dsl.New(name, dsl.Conf{dsl.SpoutWait: 2 * time.Millisecond, dsl.MaxSpoutPending: 1000,
		dsl.MessageTimeout: 30 * time.Second, dsl.CheckpointInterval: interval})
	in := b.Spout("in", spout, dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(r kafka.Record, st *dsl.State[string, int], _ dsl.Emitter) error {
		if fail != nil {
			if err := fail(r); err != nil {
				return err
			}
		}
		n, _ := st.Get(recKey(r))
		st.Put(recKey(r), n+1)
		return nil
	}), dsl.Parallelism(statecrash.Tasks))
	b.Anchored(in, count, dsl.Shuffle[kafka.Record]())
	topo, err := b.Build()
	Expect(err).NotTo(HaveOccurred())
	return topo
}

// runOn starts topo on store, restarting at once after a failure.
func runOn(topo *dsl.Topology, store state.Store) *supervision.Running {
	GinkgoHelper()
	r, err := supervision.Run(context.Background(), topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()),
		supervision.WithDrainTimeout(scaled(5*time.Second)),
		supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond, Cap: time.Millisecond, Max: 20}))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop, r) // a spec that fails before its own stop leaks nothing
	return r
}

// counts reads the committed counts by record.
func counts(store state.Store) map[string]int {
	GinkgoHelper()
	got, err := statecrash.Counts(context.Background(), store)
	Expect(err).NotTo(HaveOccurred())
	return got
}

// figures compares got with every record of parts partitions of per
// records counted once: lost (counted 0 times) and duplicated (counted more
// than once, beyond the first).
func figures(got map[string]int, parts int32, per int) (in, counted, lost, dup int) {
	for p := range parts {
		for o := range per {
			n := got[fmt.Sprintf("%d/%d", p, o)]
			in++
			counted += n
			if n == 0 {
				lost++
			} else {
				dup += n - 1
			}
		}
	}
	return in, counted, lost, dup
}

// countedAll waits until the committed counts hold every record of parts
// partitions of per records, then expects each counted once.
func countedAll(what string, store state.Store, parts int32, per int) {
	GinkgoHelper()
	Eventually(func() int { _, _, lost, _ := figures(counts(store), parts, per); return lost },
		scaled(60*time.Second), 10*time.Millisecond).Should(BeZero(), "records never counted")
	in, counted, lost, dup := figures(counts(store), parts, per)
	GinkgoWriter.Printf("%s: records in=%d counted=%d lost=%d duplicated=%d\n", what, in, counted, lost, dup)
	Expect(dup).To(BeZero(), "records counted more than once")
	Expect(counts(store)).To(HaveLen(in), "records counted that were never produced")
}

// refuseCommits makes the broker refuse every offset commit, as a process
// killed before its commit reached the broker would leave the group.
func refuseCommits(b *broker) {
	b.c.ControlKey(int16(kmsg.OffsetCommit), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		b.c.KeepControl()
		req := kreq.(*kmsg.OffsetCommitRequest)
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.GroupAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
}

var _ = Describe("Kafka spout in a topology with state", Label("connectors", "state", "edges", "kafka"), func() {
	const topic, group = "in", "g"

	It("resumes from the checkpoint's offsets on the same store and group, whatever the group committed: 1,000 counted for 1,000", func() {
		const parts, per = 4, 250
		b := newBroker(kfake.SeedTopics(parts, topic))
		refuseCommits(b)
		b.produce(topic, parts, per)
		store := state.NewMemory()
		spout := kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(10*time.Millisecond))
		r := runOn(countRecords("restart", spout, nil), store)
		countedAll("first run", store, parts, per)
		stop(r)
		// The same definition and store again, as a new process would: one
		// more record per partition shows the restart read on, and behind
		// it every record it read again would have been counted.
		spout = kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(10*time.Millisecond))
		r = runOn(countRecords("restart", spout, nil), store)
		defer stop(r)
		b.produce(topic, parts, 1)
		countedAll("after the restart", store, parts, per+1)
	})

	It("counts 4,000 for 4,000 while a second consumer joins the group for a while", func() {
		const parts, per = 4, 1000
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per/2)
		store := state.NewMemory()
		// Checkpoints far apart and a paced count: when the joiner comes,
		// many records are emitted and wait for their checkpoint's acks.
		r := runOn(countRecordsEvery(250*time.Millisecond, "joiner", kafka.Spout(b.seeds, group, []string{topic}, fast(),
			kafka.WithCommitPeriod(10*time.Millisecond)), func(kafka.Record) error { time.Sleep(200 * time.Microsecond); return nil }), store)
		defer stop(r)
		Eventually(func() int { return len(counts(store)) }, scaled(30*time.Second)).Should(BeNumerically(">", parts*per/8))
		// A plain member joins the group, is given its partitions, reads
		// what it finds after the group's offsets (which follow the
		// checkpoints: often nothing yet) and leaves.
		assigned := make(chan struct{}, 1)
		joiner, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.DisableAutoCommit(), kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(50*time.Millisecond),
			kgo.FetchMaxWait(100*time.Millisecond), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
				select {
				case assigned <- struct{}{}:
				default:
				}
			}))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			joiner.PollFetches(ctx)
			select {
			case <-assigned:
				return true
			default:
				return false
			}
		}, scaled(20*time.Second)).Should(BeTrue(), "the second consumer was never given a partition")
		joiner.Close()
		b.produce(topic, parts, per/2)
		countedAll("second consumer joined", store, parts, per)
	})

	It("counts each record once across a rollback, rewinding every task to the checkpoint, whatever the group committed", func() {
		const parts, per = 4, 250
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		refuseCommits(b) // the group's offsets are not the checkpoint's
		store := state.NewMemory()
		var failed atomic.Bool
		r := runOn(countRecords("rollback", kafka.Spout(b.seeds, group, []string{topic}, fast()), func(r kafka.Record) error {
			if r.Partition == 1 && r.Offset == per/2 && failed.CompareAndSwap(false, true) {
				return errUnlucky
			}
			return nil
		}), store)
		defer stop(r)
		countedAll("rollback", store, parts, per)
		Expect(failed.Load()).To(BeTrue())
	})

	It("gives a record that always fails up after its retries, across the rollbacks, and the rest flows", func() {
		const parts, per = 2, 100
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		store := state.NewMemory()
		gaveUp := make(chan kafka.Record, 4)
		var mu sync.Mutex
		var tries []time.Time // of the poison record, 0/40
		spout := kafka.Spout(b.seeds, group, []string{topic}, fast(),
			kafka.WithRetry(0, 10*time.Millisecond, 40*time.Millisecond, 3), kafka.WithGiveUp(func(r kafka.Record) { gaveUp <- r }))
		r := runOn(countRecords("poison", spout, func(r kafka.Record) error {
			if r.Partition == 0 && r.Offset == 40 {
				mu.Lock()
				defer mu.Unlock()
				tries = append(tries, time.Now())
				return errUnlucky
			}
			return nil
		}), store)
		defer stop(r)
		var got kafka.Record
		Eventually(gaveUp, scaled(30*time.Second)).Should(Receive(&got))
		Expect(recKey(got)).To(Equal("0/40"))
		// The rest flows, the topology runs on: records produced now too.
		b.produce(topic, parts, per)
		Eventually(func() int { return len(counts(store)) }, scaled(30*time.Second)).Should(Equal(2*parts*per - 1))
		c := counts(store)
		for k, n := range c {
			Expect(n).To(Equal(1), "record %s", k)
		}
		Expect(c).NotTo(HaveKey("0/40"))
		Consistently(gaveUp, 100*time.Millisecond).ShouldNot(Receive())
		Expect(r.Done()).NotTo(BeClosed())
		mu.Lock()
		defer mu.Unlock()
		Expect(tries).To(HaveLen(4), "the first attempt and 3 retries, each after a rollback")
		for i, least := range []time.Duration{0, 20, 40} {
			Expect(tries[i+1].Sub(tries[i])).To(BeNumerically(">=", least*time.Millisecond), "retry %d", i+1)
		}
	})

	It("retries a record whose translation panicked, and counts it once", func() {
		const parts, per = 2, 100
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		store := state.NewMemory()
		var panics atomic.Int32
		spout := kafka.SpoutOf(func(r kafka.Record) kafka.Record {
			if r.Partition == 1 && r.Offset == 10 && panics.Add(1) <= 2 {
				panic("unlucky translation")
			}
			return r
		}, b.seeds, group, []string{topic}, fast(), kafka.WithRetry(0, time.Millisecond, 5*time.Millisecond, 5))
		r := runOn(countRecords("translate", spout, nil), store)
		defer stop(r)
		countedAll("translate panicked", store, parts, per)
		Expect(panics.Load()).To(BeNumerically(">=", 3))
	})

	It("finds partitions created while it runs and reads them from their first record", func() {
		const per = 50
		b := newBroker(kfake.SeedTopics(2, topic))
		b.produce(topic, 2, per)
		// The first partitions start at the group's offsets, 0; a partition
		// found later would start at its end under UNCOMMITTED_LATEST, and
		// skip what was produced to it before it was found.
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 0, LeaderEpoch: -1})
		os.Add(kadm.Offset{Topic: topic, Partition: 1, At: 0, LeaderEpoch: -1})
		_, err := b.adm.CommitOffsets(bounded(), group, os)
		Expect(err).NotTo(HaveOccurred())
		store := state.NewMemory()
		r := runOn(countRecords("discovery", kafka.Spout(b.seeds, group, []string{topic}, fast(),
			kafka.WithFirstPoll(kafka.UncommittedLatest), kafka.WithPartitionDiscovery(300*time.Millisecond)), nil), store)
		defer stop(r)
		countedAll("before", store, 2, per)
		_, err = b.adm.CreatePartitions(bounded(), 2, topic)
		Expect(err).NotTo(HaveOccurred())
		// A new producer, whose first metadata has the new partitions.
		b.cl.Close()
		b.cl, err = kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		Expect(err).NotTo(HaveOccurred())
		var rs []*kgo.Record
		for p := int32(2); p < 4; p++ {
			for i := range per {
				rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d/%d", p, i)})
			}
		}
		Expect(b.cl.ProduceSync(bounded(), rs...).FirstErr()).To(Succeed())
		countedAll("after two partitions were added", store, 4, per)
	})

	It("splits the partitions between processes by their share, each record read by one of them", func() {
		const parts, per = 5, 60
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		stores := []state.Store{state.NewMemory(), state.NewMemory()}
		for i, store := range stores {
			r := runOn(countRecords("share", kafka.Spout(b.seeds, group, []string{topic}, fast(),
				kafka.WithProcessShare(i, 2)), nil), store)
			defer stop(r)
		}
		all := func() map[string]int {
			got := counts(stores[0])
			for k, n := range counts(stores[1]) {
				got[k] += n
			}
			return got
		}
		Eventually(func() int { return len(all()) }, scaled(30*time.Second)).Should(Equal(parts * per))
		in, counted, lost, dup := figures(all(), parts, per)
		GinkgoWriter.Printf("two processes: records in=%d counted=%d lost=%d duplicated=%d (%d and %d)\n",
			in, counted, lost, dup, len(counts(stores[0])), len(counts(stores[1])))
		Expect(dup).To(BeZero())
		Expect(counts(stores[0])).NotTo(BeEmpty())
		Expect(counts(stores[1])).NotTo(BeEmpty())
	})

	It("commits the checkpointed offsets to the group for lag monitoring, without joining it", func() {
		const parts, per = 2, 100
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		store := state.NewMemory()
		r := runOn(countRecords("lag", kafka.Spout(b.seeds, group, []string{topic}, fast(),
			kafka.WithCommitPeriod(10*time.Millisecond)), nil), store)
		defer stop(r)
		countedAll("lag", store, parts, per)
		Eventually(func(g Gomega) {
			for p := range int32(parts) {
				g.Expect(b.committed(group, topic, p)).To(Equal(int64(per)))
			}
		}, scaled(20*time.Second), 10*time.Millisecond).Should(Succeed())
		described, err := b.adm.DescribeGroups(bounded(), group)
		Expect(err).NotTo(HaveOccurred())
		Expect(described[group].Members).To(BeEmpty(), "a checkpointed spout is no member of the group")
	})
})

var _ = Describe("Kafka spout whose translate function panics", Label("connectors", "edges", "kafka"), func() {
	const topic, group = "in", "g"

	It("fails that record, retries it, and its consumer leaves the group when the topology stops", func() {
		const parts, per = 2, 100
		b := newBroker(kfake.SeedTopics(parts, topic))
		b.produce(topic, parts, per)
		var panicked atomic.Bool
		spout := kafka.SpoutOf(func(r kafka.Record) kafka.Record {
			if r.Partition == 0 && r.Offset == 50 && panicked.CompareAndSwap(false, true) {
				panic("unlucky translation")
			}
			return r
		}, b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(5*time.Millisecond),
			kafka.WithRetry(0, time.Millisecond, 5*time.Millisecond, 10))
		seen := newLedger()
		topo, err := pipeline(spout, func(r kafka.Record) error { seen.add(r); return nil })
		Expect(err).NotTo(HaveOccurred())
		r, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()), supervision.WithDrainTimeout(scaled(2*time.Second)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop, r)
		Eventually(seen.distinct, scaled(20*time.Second)).Should(Equal(parts * per))
		Expect(panicked.Load()).To(BeTrue())
		members := func() int {
			described, err := b.adm.DescribeGroups(bounded(), group)
			Expect(err).NotTo(HaveOccurred())
			return len(described[group].Members)
		}
		Expect(members()).To(Equal(1), "one spout task, one member")
		Eventually(func(g Gomega) {
			for p := range int32(parts) {
				g.Expect(b.committed(group, topic, p)).To(Equal(int64(per)))
			}
		}, scaled(20*time.Second), 10*time.Millisecond).Should(Succeed())
		stop(r)
		Expect(members()).To(BeZero(), "a member is left in the group after Stop")
		_, total := seen.counts()
		Expect(total).To(Equal(parts * per))
	})

	It("leaves the group when another task fails and the topology restarts, and after Stop", func() {
		const per = 100
		b := newBroker(kfake.SeedTopics(1, topic))
		b.produce(topic, 1, per)
		seen := newLedger()
		var failed atomic.Bool
		tb := dsl.New("failing", conf())
		s := tb.Spout("kafka", kafka.Spout(b.seeds, group, []string{topic}, fast(), kafka.WithCommitPeriod(5*time.Millisecond)))
		// The bolt holds record 10 open and fails its own task there: the
		// spout's incarnation ends with records open.
		w := tb.Bolt("work", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[kafka.Record] {
			return manualFunc(func(r kafka.Record, in dsl.Tuple, c dsl.Collector) error {
				if r.Offset == 10 && failed.CompareAndSwap(false, true) {
					info.Fail(errUnlucky)
					return nil
				}
				seen.add(r)
				c.Ack(in)
				return nil
			})
		}))
		tb.Anchored(s, w, dsl.Shuffle[kafka.Record]())
		topo, err := tb.Build()
		Expect(err).NotTo(HaveOccurred())
		r, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()),
			supervision.WithDrainTimeout(scaled(2*time.Second)), supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond}))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(stop, r)
		Eventually(seen.distinct, scaled(30*time.Second)).Should(Equal(per))
		Expect(failed.Load()).To(BeTrue())
		members := func() int {
			described, err := b.adm.DescribeGroups(bounded(), group)
			Expect(err).NotTo(HaveOccurred())
			return len(described[group].Members)
		}
		Eventually(members, scaled(10*time.Second), 10*time.Millisecond).Should(Equal(1), "the failed incarnation's member stayed")
		stop(r)
		Expect(members()).To(BeZero(), "a member is left in the group after Stop")
	})
})

// manualFunc adapts a function to dsl.ManualHandler.
type manualFunc func(kafka.Record, dsl.Tuple, dsl.Collector) error

func (f manualFunc) Execute(r kafka.Record, in dsl.Tuple, c dsl.Collector) error { return f(r, in, c) }
