package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// Got is a spout tuple as a translator makes it.
type Got struct{ M jetstream.Message }

// seen records what a bolt received, safe for concurrent use.
type seen[T any] struct {
	mu  sync.Mutex // mu guards all
	all []T
}

func (s *seen[T]) add(v T) { s.mu.Lock(); s.all = append(s.all, v); s.mu.Unlock() }
func (s *seen[T]) list() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]T(nil), s.all...)
}
func (s *seen[T]) len() int { return len(s.list()) }

// start runs topo under supervision and stops it when the spec ends.
func start(topo *dsl.Topology, err error, opts ...supervision.Option) *supervision.Running {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	r, err := supervision.Run(context.Background(), topo, append(runOpts(), opts...)...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { stop(r) })
	return r
}

func stop(r *supervision.Running) {
	select {
	case <-r.Done():
		return // ended by itself (a failure the spec expects)
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), scaled(10*time.Second))
	defer cancel()
	Expect(r.Stop(ctx)).To(Succeed())
}

// spoutTopology is IN -> spout (translate) -> a bolt running handle.
func spoutTopology[T any](url string, conf dsl.Conf, translate func(jetstream.Message) (T, error), bolt *dsl.BoltSpec, opts ...jetstream.Option) (*dsl.Topology, error) {
	b := dsl.New("jetstream-spout", conf)
	var t T
	b.Streams(t)
	spout := b.Spout("in", jetstream.Spout[T](url, "IN", "specs", translate, opts...))
	sink := b.Bolt("got", bolt)
	b.Anchored(spout, sink, dsl.Shuffle[T]())
	return b.Build()
}

// manual is a dsl.ManualHandler from a function.
type manual[In any] func(in In, input dsl.Tuple, c dsl.Collector) error

func (f manual[In]) Execute(in In, input dsl.Tuple, c dsl.Collector) error { return f(in, input, c) }

var _ = Describe("Spout", Label("connectors", "jetstream"), func() {
	var (
		b *broker
		c *client
	)
	BeforeEach(func() {
		b = newBroker()
		c = connect(b.URL)
		c.stream("IN", "in.>")
	})

	It("hands each message to the translator with its subject, data, headers, sequences, delivery count and time, and acks it when its tree completes", func() {
		c.publish("in.a", 5)
		got := &seen[Got]{}
		topo, err := spoutTopology(b.URL, nil, func(m jetstream.Message) (Got, error) { return Got{m}, nil },
			dsl.AutoAck(func(g Got, _ dsl.Emitter) error { got.add(g); return nil }))
		start(topo, err)
		Eventually(got.len).Should(Equal(5))
		for i, g := range got.list() {
			m := g.M
			Expect(m.Subject).To(Equal("in.a"))
			Expect(string(m.Data)).To(Equal(fmt.Sprintf("r%d", m.StreamSeq)))
			Expect(m.Header.Get("N")).To(Equal(fmt.Sprint(m.StreamSeq)))
			Expect(m.Stream).To(Equal("IN"))
			Expect(m.StreamSeq).To(BeNumerically("==", i+1))
			Expect(m.ConsumerSeq).To(BeNumerically("==", i+1))
			Expect(m.Delivered).To(BeNumerically("==", 1))
			Expect(m.Time).To(BeTemporally("~", time.Now(), time.Minute))
		}
		Eventually(func() uint64 {
			info := c.consumerInfo("IN", "specs")
			if info.NumAckPending != 0 || info.NumPending != 0 {
				return 0
			}
			return info.AckFloor.Stream
		}).Should(BeNumerically("==", 5), "every message acked on the server")
	})

	It("nacks a failed tree with an exponential back-off delay, capped, and acks the redelivery that succeeds", func() {
		c.publish("in.a", 1)
		var mu sync.Mutex
		var at []time.Time
		var counts []uint64
		topo, err := spoutTopology[jetstream.Message](b.URL, nil, nil, dsl.AutoAck(func(m jetstream.Message, _ dsl.Emitter) error {
			mu.Lock()
			defer mu.Unlock()
			at, counts = append(at, time.Now()), append(counts, m.Delivered)
			if m.Delivered < 4 {
				return errOnPurpose
			}
			return nil
		}), jetstream.WithNackBackoff(100*time.Millisecond, 200*time.Millisecond))
		start(topo, err)
		Eventually(func() int { mu.Lock(); defer mu.Unlock(); return len(at) }).Should(Equal(4))
		Eventually(func() int { return c.consumerInfo("IN", "specs").NumAckPending }).Should(BeZero())
		Consistently(func() int { mu.Lock(); defer mu.Unlock(); return len(at) }, 300*time.Millisecond).Should(Equal(4))
		mu.Lock()
		defer mu.Unlock()
		Expect(counts).To(Equal([]uint64{1, 2, 3, 4}))
		// The server holds each redelivery at least the delay asked: 100 ms,
		// then 200 ms, then 200 ms again (the cap). Only lower bounds hold on
		// a loaded machine, so the cap itself is TestBackoff's to check.
		for i, least := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond} {
			Expect(at[i+1].Sub(at[i])).To(BeNumerically(">=", least), "gap before delivery %d", i+2)
		}
	})

	It("keeps trees open longer than the AckWait alive with in-progress signals, handed-out and buffered messages alike", func() {
		const ackWait = 600 * time.Millisecond
		c.publish("in.a", 3)
		release := make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		got := &seen[jetstream.Message]{}
		held := make(chan dsl.Tuple, 1)
		topo, err := spoutTopology[jetstream.Message](b.URL, dsl.Conf{dsl.MaxSpoutPending: 1, dsl.MessageTimeout: 30 * time.Second}, nil,
			dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[jetstream.Message] {
				return manual[jetstream.Message](func(m jetstream.Message, input dsl.Tuple, c dsl.Collector) error {
					got.add(m)
					if m.StreamSeq == 1 {
						held <- input // acked once released, from the task's goroutine
						go func() { <-release; info.Post(func(c dsl.Collector) { c.Ack(input) }) }()
						return nil
					}
					c.Ack(input)
					return nil
				})
			}), jetstream.WithAckWait(ackWait))
		start(topo, err)
		DeferCleanup(free) // before the stop, even when the spec fails
		Eventually(held).Should(Receive())
		// Five AckWaits with the first tree open and the other two buffered
		// (max spout pending 1): without in-progress signals the server
		// redelivers all three.
		Consistently(func() int { return c.consumerInfo("IN", "specs").NumRedelivered }, 5*ackWait, 50*time.Millisecond).Should(BeZero())
		Expect(got.len()).To(Equal(1))
		free()
		Eventually(got.len).Should(Equal(3))
		Eventually(func() int { return c.consumerInfo("IN", "specs").NumAckPending }).Should(BeZero())
		for _, m := range got.list() {
			Expect(m.Delivered).To(BeNumerically("==", 1), "message %d was redelivered", m.StreamSeq)
		}
	})

	It("configures the shared consumer: explicit acks, its AckWait, unlimited deliveries, MaxAckPending = tasks x (max spout pending + buffer)", func() {
		bld := dsl.New("jetstream-consumer", dsl.Conf{dsl.MaxSpoutPending: 7})
		bld.Streams(jetstream.Message{})
		spout := bld.Spout("in", jetstream.Spout[jetstream.Message](b.URL, "IN", "specs", nil,
			jetstream.WithBuffer(5), jetstream.WithAckWait(2*time.Second), jetstream.WithFilterSubjects("in.a")),
			dsl.Parallelism(2)) // two tasks share the durable consumer
		bolt := bld.Bolt("b", dsl.AutoAck(func(jetstream.Message, dsl.Emitter) error { return nil }))
		bld.Anchored(spout, bolt, dsl.Shuffle[jetstream.Message]())
		topo, err := bld.Build()
		start(topo, err)
		Eventually(func() error {
			ctx, cancel := ctxT()
			defer cancel()
			_, err := c.js.Consumer(ctx, "IN", "specs")
			return err
		}).Should(Succeed())
		cfg := c.consumerInfo("IN", "specs").Config
		Expect(cfg.AckPolicy.String()).To(Equal("AckExplicit"))
		Expect(cfg.AckWait).To(Equal(2 * time.Second))
		Expect(cfg.MaxDeliver).To(Equal(-1))
		Expect(cfg.MaxAckPending).To(Equal(2 * (7 + 5)))
		Expect(cfg.FilterSubject).To(Equal("in.a"))
	})

	It("terminates a message its translator rejects, reports it, and goes on with the others", func() {
		c.publish("in.a", 3)
		got := &seen[Got]{}
		topo, err := spoutTopology(b.URL, nil, func(m jetstream.Message) (Got, error) {
			if m.StreamSeq == 2 {
				return Got{}, errors.New("not a record")
			}
			return Got{m}, nil
		}, dsl.AutoAck(func(g Got, _ dsl.Emitter) error { got.add(g); return nil }))
		r := start(topo, err)
		Eventually(got.len).Should(Equal(2))
		Eventually(func() uint64 {
			info := c.consumerInfo("IN", "specs")
			if info.NumAckPending != 0 {
				return 0
			}
			return info.AckFloor.Stream
		}).Should(BeNumerically("==", 3))
		Eventually(func() any { return metric(r, "in", "jetstream.terminated") }).Should(BeEquivalentTo(1))
	})

	DescribeTable("refuses a bad option at start with an error naming it",
		func(build func(url string) (*dsl.Topology, error), want string) {
			topo, err := build(b.URL)
			r := start(topo, err, supervision.WithoutRestarts())
			Eventually(r.Done()).Should(BeClosed())
			Expect(r.Wait()).To(MatchError(ContainSubstring(want)))
		},
		Entry("an AckWait too short for in-progress signals", func(url string) (*dsl.Topology, error) {
			return spoutTopology[jetstream.Message](url, nil, nil, dsl.AutoAck(func(jetstream.Message, dsl.Emitter) error { return nil }), jetstream.WithAckWait(time.Millisecond))
		}, "WithAckWait(1ms)"),
		Entry("a nil translator for a type other than Message", func(url string) (*dsl.Topology, error) {
			return spoutTopology[Got](url, nil, nil, dsl.AutoAck(func(Got, dsl.Emitter) error { return nil }))
		}, "a nil translate function needs T = jetstream.Message"),
		Entry("a stream that does not exist", func(url string) (*dsl.Topology, error) {
			bld := dsl.New("bad", nil)
			bld.Streams(jetstream.Message{})
			s := bld.Spout("in", jetstream.Spout[jetstream.Message](url, "NOPE", "d", nil))
			bolt := bld.Bolt("b", dsl.AutoAck(func(jetstream.Message, dsl.Emitter) error { return nil }))
			bld.Anchored(s, bolt, dsl.Shuffle[jetstream.Message]())
			return bld.Build()
		}, `on stream "NOPE"`),
	)

	It("never blocks its task on the server: it stops promptly, leaking nothing, while the server is away", func() {
		c.publish("in.a", 2)
		got := &seen[jetstream.Message]{}
		topo, err := spoutTopology[jetstream.Message](b.URL, nil, nil, dsl.AutoAck(func(m jetstream.Message, _ dsl.Emitter) error { got.add(m); return nil }))
		Expect(err).NotTo(HaveOccurred())
		r, err := supervision.Run(context.Background(), topo, runOpts()...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = r.Stop(context.Background()) }) // should the spec fail before its own Stop
		Eventually(got.len).Should(Equal(2))
		b.stop()
		ctx, cancel := context.WithTimeout(context.Background(), scaled(5*time.Second))
		defer cancel()
		Expect(r.Stop(ctx)).To(Succeed())
	})
})

// metric reads a task metric of component from the running topology's stats.
func metric(r *supervision.Running, component, name string) any {
	for _, t := range r.Stats().Tasks {
		if t.Component == component {
			if v, ok := t.Metrics[name]; ok {
				return v
			}
		}
	}
	return nil
}
