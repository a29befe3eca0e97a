package kafka_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// clients hands over every client a connector creates (kgo.HookNewClient),
// so a spec can read the options the connector gave it.
type clients chan *kgo.Client

func (c clients) OnNewClient(cl *kgo.Client) { c <- cl }

var _ = Describe("Kafka connector throughput", Label("connectors", "kafka"), func() {
	It("produces without a linger unless the application sets one: a window of inputs never waits for it", func() {
		b := newBroker(kfake.SeedTopics(1, "out"))
		type Line struct{ N int }
		sink := func(opts ...kgo.Opt) (*kgo.Client, *sheltertest.Source[Line]) {
			seen := make(clients, 1)
			src := sheltertest.NewSource(Line{1})
			tb := dsl.New("sink", conf())
			s := tb.Spout("lines", src.Spout())
			k := tb.Bolt("sink", kafka.Sink(b.seeds, func(l Line) kafka.Record {
				return kafka.Record{Topic: "out", Value: fmt.Appendf(nil, "%d", l.N)}
			}, kafka.WithClientOptions(append(opts, kgo.WithHooks(seen))...)))
			tb.Anchored(s, k, dsl.Shuffle[Line]())
			run(tb.Build())
			var cl *kgo.Client
			Eventually(seen, scaled(20*time.Second)).Should(Receive(&cl))
			return cl, src
		}
		cl, src := sink()
		Expect(cl.OptValue(kgo.ProducerLinger)).To(Equal(time.Duration(0)))
		Eventually(func() int { return len(src.Outcomes()) }, scaled(20*time.Second)).Should(Equal(1))

		cl, _ = sink(kgo.ProducerLinger(5 * time.Millisecond))
		Expect(cl.OptValue(kgo.ProducerLinger)).To(Equal(5 * time.Millisecond))
	})

	It("keeps emitting across fetches without sleeping the spout wait while records flow", func() {
		const topic, records = "in", 40
		b := newBroker(kfake.SeedTopics(1, topic))
		// One batch per record and one batch per fetch: the spout drains the
		// client's buffer at every record, and the next fetch is on its way.
		ctx, cancel := context.WithTimeout(context.Background(), scaled(60*time.Second)) // a failure ends the wait
		defer cancel()
		for i := range records {
			Expect(b.cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%d", i)}).FirstErr()).To(Succeed())
		}
		done := newLedger()
		spout := kafka.Spout(b.seeds, "g", []string{topic}, fast(),
			kafka.WithClientOptions(kgo.FetchMaxBytes(1), kgo.FetchMaxPartitionBytes(1)))
		// A spout that slept its wait at every fetch would take records x 1 s.
		c := conf()
		c[dsl.SpoutWait] = time.Second
		tb := dsl.New("flow", c)
		s := tb.Spout("kafka", spout)
		w := tb.Bolt("work", dsl.AutoAck(func(r kafka.Record, _ dsl.Emitter) error { done.add(r); return nil }))
		tb.Anchored(s, w, dsl.Shuffle[kafka.Record]())
		run(tb.Build())
		Eventually(done.distinct, scaled(15*time.Second), 10*time.Millisecond).Should(Equal(records))
	})
})
