package jetstream_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// countTopology is IN -> spout (parallelism 2) -> count: a stateful bolt
// named as statecrash.Counts reads it back, counting messages under "n";
// executed counts every execution, replays included.
func countTopology(url string, executed *atomic.Int64) (*dsl.Topology, error) {
	b := dsl.New("jetstream-count", dsl.Conf{dsl.MaxSpoutPending: 256, dsl.CheckpointInterval: 200 * time.Millisecond})
	b.Streams(jetstream.Message{})
	in := b.Spout("in", jetstream.Spout[jetstream.Message](url, "IN", "count", nil, jetstream.WithAckWait(500*time.Millisecond)), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(_ jetstream.Message, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get("n")
		st.Put("n", n+1)
		executed.Add(1)
		return nil
	}), dsl.Parallelism(statecrash.Tasks))
	b.Anchored(in, count, dsl.Shuffle[jetstream.Message]())
	return b.Build()
}

// counted is the committed count of countTopology in store.
func counted(store state.Store) int {
	GinkgoHelper()
	got, err := statecrash.Counts(context.Background(), store)
	Expect(err).NotTo(HaveOccurred())
	return got["n"]
}

// consumers lists the consumers of stream.
func (c *client) consumers(stream string) []string {
	GinkgoHelper()
	ctx, cancel := ctxT()
	defer cancel()
	s, err := c.js.Stream(ctx, stream)
	Expect(err).NotTo(HaveOccurred())
	var names []string
	l := s.ConsumerNames(ctx)
	for n := range l.Name() {
		names = append(names, n)
	}
	Expect(l.Err()).NotTo(HaveOccurred())
	return names
}

var _ = Describe("Exactly-once with state", Label("connectors", "jetstream", "state", "edges"), func() {
	var (
		b *broker
		c *client
	)
	BeforeEach(func() {
		b = newBroker()
		c = connect(b.URL)
		c.stream("IN", "in.>")
	})

	It("counts 1,100 for 1,100 messages when the server missed the acks of the last checkpoint before a stop (issue 31: 1,100 for 1,000)", func() {
		c.publish("in.records", 1000)
		store := state.NewMemory()
		var executed atomic.Int64
		topo, err := countTopology(b.URL, &executed)
		first := start(topo, err, supervision.WithStore(store))
		Eventually(executed.Load).Should(BeNumerically(">=", 1000))
		// The server goes away before the last checkpoint's acks reach it,
		// as in a process killed right after a commit.
		b.stop()
		stop(first)
		Expect(counted(store)).To(Equal(1000), "the stop's last checkpoint covers every message")
		b.restart()
		c.publish("in.records", 100)

		executed.Store(0)
		topo, err = countTopology(b.URL, &executed)
		second := start(topo, err, supervision.WithStore(store))
		Eventually(executed.Load).Should(BeNumerically(">=", 100))
		stop(second)
		Expect(counted(store)).To(Equal(1100), "each message counted once: the second run resumes at the committed positions")
		Expect(executed.Load()).To(BeNumerically("==", 100), "no message before the positions is read again")
		Eventually(func() []string { return c.consumers("IN") }).Should(BeEmpty(), "a stopped spout leaves no consumer behind")
	})

	It("acks to the server only what a committed checkpoint covers, so the consumers' ack floor shows the committed lag", func() {
		c.publish("in.records", 300)
		store := state.NewMemory()
		var executed atomic.Int64
		topo, err := countTopology(b.URL, &executed)
		r := start(topo, err, supervision.WithStore(store))
		Eventually(func() int { return counted(store) }).Should(Equal(300))
		Expect(c.consumers("IN")).To(HaveLen(2), "a consumer of its own for each task")
		Eventually(func(g Gomega) {
			ctx, cancel := ctxT() // each poll its own: the Eventually outlasts one
			defer cancel()
			floors := uint64(0)
			for _, n := range c.consumers("IN") {
				cons, err := c.js.Consumer(ctx, "IN", n)
				g.Expect(err).NotTo(HaveOccurred())
				info, err := cons.Info(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(info.Config.AckPolicy).To(Equal(js.AckAllPolicy))
				floors += info.AckFloor.Stream
			}
			g.Expect(floors).To(BeNumerically("==", 2*300), "every task's floor reached the end of the stream")
		}).Should(Succeed())
		stop(r)
	})

	It("keeps a stream sequence split fixed over the tasks: after a rollback each message is counted once", func() {
		c.publish("in.records", 500)
		store := state.NewMemory()
		var failed atomic.Bool
		b2 := dsl.New("jetstream-split", dsl.Conf{dsl.MaxSpoutPending: 64, dsl.CheckpointInterval: 50 * time.Millisecond})
		b2.Streams(jetstream.Message{})
		in := b2.Spout("in", jetstream.Spout[jetstream.Message](b.URL, "IN", "split", nil), dsl.Parallelism(3))
		// Each message is counted under its own sequence, so that a loss
		// and a duplicate cannot make up for each other in a total.
		count := b2.Bolt("count", dsl.Stateful(func(m jetstream.Message, st *dsl.State[string, int], _ dsl.Emitter) error {
			if m.StreamSeq == 250 && failed.CompareAndSwap(false, true) {
				return fmt.Errorf("message 250 fails once")
			}
			seq := strconv.FormatUint(m.StreamSeq, 10)
			n, _ := st.Get(seq)
			st.Put(seq, n+1)
			return nil
		}), dsl.Parallelism(statecrash.Tasks))
		b2.Anchored(in, count, dsl.Shuffle[jetstream.Message]())
		topo, err := b2.Build()
		start(topo, err, supervision.WithStore(store))
		bySeq := func() map[string]int {
			got, err := statecrash.Counts(context.Background(), store)
			Expect(err).NotTo(HaveOccurred())
			return got
		}
		Eventually(func() int { return len(bySeq()) }).Should(Equal(500))
		Expect(failed.Load()).To(BeTrue(), "message 250 failed once and rolled the topology back")
		once := func(g Gomega) {
			got := bySeq()
			g.Expect(got).To(HaveLen(500))
			for seq := 1; seq <= 500; seq++ {
				g.Expect(got[strconv.Itoa(seq)]).To(Equal(1), "message %d", seq)
			}
		}
		Consistently(once, scaled(300*time.Millisecond)).Should(Succeed())
	})
})

// sinkStateTopology is a positioned log of Nums -> pass (stateful; fails the
// value fail once) -> the sink, publishing "v<n>" to subject.
func sinkStateTopology(url, subject string, log *sheltertest.Log[Num], fail int, opts ...jetstream.Option) (*dsl.Topology, error) {
	b := dsl.New("jetstream-sink-state", dsl.Conf{dsl.MaxSpoutPending: 32, dsl.CheckpointInterval: 50 * time.Millisecond})
	b.Streams(Num{})
	var failed atomic.Bool
	nums := b.Spout("nums", log.Spout())
	pass := b.Bolt("pass", dsl.Stateful(func(n Num, st *dsl.State[string, int], out dsl.Emitter) error {
		if n.N == fail && failed.CompareAndSwap(false, true) {
			return fmt.Errorf("value %d fails once", n.N)
		}
		seen, _ := st.Get("seen")
		st.Put("seen", seen+1)
		out.Emit(n)
		return nil
	}))
	sink := b.Bolt("sink", jetstream.Sink[Num](url, func(n Num) (jetstream.Record, error) {
		return jetstream.Record{Subject: subject, Data: []byte(fmt.Sprintf("v%d", n.N))}, nil
	}, opts...))
	b.Anchored(nums, pass, dsl.Shuffle[Num]())
	b.Anchored(pass, sink, dsl.Shuffle[Num]())
	return b.Build()
}

var _ = Describe("A spout outside the checkpoints", Label("connectors", "jetstream", "state"), func() {
	It("keeps today's at-least-once spout (one shared durable, acks per tree) when declared dsl.OutsideCheckpoint()", func() {
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.publish("in.records", 100)
		var executed atomic.Int64
		bl := dsl.New("jetstream-outside", dsl.Conf{dsl.MaxSpoutPending: 64, dsl.CheckpointInterval: 50 * time.Millisecond})
		bl.Streams(jetstream.Message{})
		in := bl.Spout("in", jetstream.Spout[jetstream.Message](b.URL, "IN", "outside", nil), dsl.Parallelism(2), dsl.OutsideCheckpoint())
		count := bl.Bolt("count", dsl.Stateful(func(_ jetstream.Message, st *dsl.State[string, int], _ dsl.Emitter) error {
			n, _ := st.Get("n")
			st.Put("n", n+1)
			executed.Add(1)
			return nil
		}), dsl.Parallelism(statecrash.Tasks))
		bl.Anchored(in, count, dsl.Shuffle[jetstream.Message]())
		topo, err := bl.Build()
		start(topo, err, supervision.WithStore(state.NewMemory()))
		Eventually(func() []string { return c.consumers("IN") }).Should(Equal([]string{"outside"}))
		Eventually(func() uint64 { return c.consumerInfo("IN", "outside").AckFloor.Stream }).Should(BeNumerically("==", 100))
		Expect(c.consumerInfo("IN", "outside").Config.AckPolicy).To(Equal(js.AckExplicitPolicy))
	})
})

var _ = Describe("The sink with state", Label("connectors", "jetstream", "state", "edges"), func() {
	var (
		b *broker
		c *client
	)
	BeforeEach(func() {
		b = newBroker()
		c = connect(b.URL)
	})

	It("loses nothing and stores each record once while the server refuses publishes across a rollback (issue 31: 78 to 150 of 200 lost)", func() {
		const n = 200
		vals := make([]int, n)
		for i := range vals {
			vals[i] = i + 1
		}
		log := sheltertest.NewLog(nums(vals...)...)
		topo, err := sinkStateTopology(b.URL, "late.x", log, 120)
		start(topo, err, supervision.WithStore(state.NewMemory()))
		// No stream takes late.x yet: every publish is refused, and value
		// 120 rolls the topology back once.
		Eventually(log.Rewinds).Should(BeNumerically(">=", 1))
		c.stream("LATE", "late.>")
		// Drained, not all acked: a value whose checkpoint committed just
		// before the rollback overtook its ack is nacked, and the rewind to
		// that checkpoint does not hand it out again (its output is stored).
		ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
		defer cancel()
		Expect(log.WaitDrained(ctx)).To(Succeed())
		Eventually(c.count).WithArguments("LATE").Should(BeNumerically(">=", n))
		out := c.readAll("LATE")
		Expect(out).To(HaveLen(n))
		Expect(distinct(out)).To(Equal(n), "each value once")
		Consistently(c.count, scaled(300*time.Millisecond)).WithArguments("LATE").Should(BeNumerically("==", n))
	})

	It("fails with an error naming the cap when a task keeps more than WithKeptBytes for its checkpoints", func() {
		c.stream("OUT", "out.>")
		log := sheltertest.NewLog(nums(1, 2, 3, 4, 5, 6, 7, 8)...)
		bl := dsl.New("jetstream-sink-cap", dsl.Conf{dsl.CheckpointInterval: time.Second})
		bl.Streams(Num{})
		ns := bl.Spout("nums", log.Spout())
		pass := bl.Bolt("pass", dsl.Stateful(func(n Num, st *dsl.State[string, int], out dsl.Emitter) error {
			out.Emit(n)
			return nil
		}))
		sink := bl.Bolt("sink", jetstream.Sink[Num](b.URL, func(n Num) (jetstream.Record, error) {
			return jetstream.Record{Subject: "out.x", Data: make([]byte, 600)}, nil
		}, jetstream.WithKeptBytes(2048)))
		bl.Anchored(ns, pass, dsl.Shuffle[Num]())
		bl.Anchored(pass, sink, dsl.Shuffle[Num]())
		topo, err := bl.Build()
		Expect(err).NotTo(HaveOccurred())
		r, err := supervision.Run(context.Background(), topo, append(runOpts(), supervision.WithStore(state.NewMemory()), supervision.WithoutRestarts())...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { stop(r) })
		Eventually(r.Done()).Should(BeClosed())
		err = r.Wait()
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring(`sink "sink"`), ContainSubstring("cap of 2048 (WithKeptBytes)")))
		Expect(c.count("OUT")).To(BeZero(), "nothing was committed, so nothing was published")
	})

	It("refuses a stream whose duplicate window is shorter than the sink needs, naming the stream", func() {
		ctx, cancel := ctxT()
		defer cancel()
		_, err := c.js.CreateStream(ctx, js.StreamConfig{Name: "SHORT", Subjects: []string{"short.>"}, Duplicates: time.Second})
		Expect(err).NotTo(HaveOccurred())
		log := sheltertest.NewLog(nums(1, 2, 3)...)
		topo, err := sinkStateTopology(b.URL, "short.x", log, -1, jetstream.WithDuplicateWindow(time.Minute))
		Expect(err).NotTo(HaveOccurred())
		r, err := supervision.Run(context.Background(), topo, append(runOpts(), supervision.WithStore(state.NewMemory()), supervision.WithoutRestarts())...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { stop(r) })
		Eventually(r.Done()).Should(BeClosed())
		err = r.Wait()
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring(`stream "SHORT"`), ContainSubstring("Duplicates window")))
	})
})
