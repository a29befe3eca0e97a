package jetstream_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// Num is the sink specs' input.
type Num struct{ N int }

func nums(ns ...int) []Num {
	out := make([]Num, len(ns))
	for i, n := range ns {
		out[i] = Num{n}
	}
	return out
}

// sinkTopology is a recording source of ints -> Sink[int] with record.
func sinkTopology(url string, src *sheltertest.Source[Num], record func(Num) (jetstream.Record, error)) (*dsl.Topology, error) {
	b := dsl.New("jetstream-sink", nil)
	b.Streams(Num{})
	s := b.Spout("ints", src.Spout())
	k := b.Bolt("sink", jetstream.Sink[Num](url, record))
	b.Anchored(s, k, dsl.Shuffle[Num]())
	return b.Build()
}

func outcomes(src *sheltertest.Source[Num], acked bool) int {
	n := 0
	for _, o := range src.Outcomes() {
		if o.Acked == acked {
			n++
		}
	}
	return n
}

var _ = Describe("Sink", Label("connectors", "jetstream"), func() {
	var (
		b *broker
		c *client
	)
	BeforeEach(func() {
		b = newBroker()
		c = connect(b.URL)
		c.stream("OUT", "out.>")
	})

	It("publishes each input to the subject its record names, with its Nats-Msg-Id, and acks the input on the acknowledgement", func() {
		src := sheltertest.NewSource(nums(1, 2, 3, 4, 5, 6)...)
		start(sinkTopology(b.URL, src, func(n Num) (jetstream.Record, error) {
			i := n.N
			return jetstream.Record{Subject: fmt.Sprintf("out.%d", i%2), Data: []byte(fmt.Sprint(i)), MsgID: fmt.Sprintf("m%d", i)}, nil
		}))
		Eventually(func() int { return outcomes(src, true) }).Should(Equal(6))
		Expect(src.Verify()).To(Succeed())
		Expect(c.count("OUT")).To(BeNumerically("==", 6))
		ctx, cancel := ctxT()
		defer cancel()
		s, err := c.js.Stream(ctx, "OUT")
		Expect(err).NotTo(HaveOccurred())
		for seq := uint64(1); seq <= 6; seq++ {
			m, err := s.GetMsg(ctx, seq)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Subject).To(Equal("out." + map[bool]string{true: "0", false: "1"}[string(m.Data)[0]%2 == 0]))
			Expect(m.Header.Get("Nats-Msg-Id")).To(Equal("m" + string(m.Data)))
		}
	})

	It("fails an input whose record no stream takes, and acks it once a stream does", func() {
		src := sheltertest.NewSource(nums(1, 2, 3)...)
		start(sinkTopology(b.URL, src, func(n Num) (jetstream.Record, error) {
			i := n.N
			return jetstream.Record{Subject: "later.x", Data: []byte(fmt.Sprint(i))}, nil
		}))
		Eventually(func() int { return outcomes(src, false) }).Should(Equal(3))
		Expect(outcomes(src, true)).To(BeZero(), "no input acked without a publish acknowledgement")
		c.stream("LATER", "later.>")
		src.Push(nums(1, 2, 3)...)
		Eventually(func() int { return outcomes(src, true) }).Should(Equal(3))
		Expect(c.count("LATER")).To(BeNumerically("==", 3))
	})

	It("fails an input whose record function errs", func() {
		src := sheltertest.NewSource(nums(1, 2)...)
		start(sinkTopology(b.URL, src, func(n Num) (jetstream.Record, error) {
			i := n.N
			if i == 2 {
				return jetstream.Record{}, fmt.Errorf("no record for %d", i)
			}
			return jetstream.Record{Subject: "out.x", Data: []byte("one")}, nil
		}))
		Eventually(func() []sheltertest.Outcome[Num] { return src.Outcomes() }).Should(HaveLen(2))
		Expect(outcomes(src, true)).To(Equal(1))
		Expect(outcomes(src, false)).To(Equal(1))
	})

	It("stores a replayed input once: the default Nats-Msg-Id is derived from the record", func() {
		src := sheltertest.NewSource(nums(1, 2, 3, 1, 2, 3)...) // every input twice
		start(sinkTopology(b.URL, src, func(n Num) (jetstream.Record, error) {
			i := n.N
			return jetstream.Record{Subject: "out.x", Data: []byte(fmt.Sprint(i))}, nil
		}))
		Eventually(func() int { return outcomes(src, true) }).Should(Equal(6))
		Expect(c.count("OUT")).To(BeNumerically("==", 3))
	})
})
