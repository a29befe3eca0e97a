package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// The Kafka cases (issue 22): records from topic "in" to topic "out" on an
// in-process kfake broker, through the kafka connector's spout, a relay bolt
// and its sink ("kafka"), beside franz-go alone consuming "in" and producing
// each record to "out" on the same kind of broker ("franz-go", the limit).
// Each run pre-fills "in" before it is measured, producing as fast as one
// client can for s.fill (twice the run's warm-up and measure): a pipeline
// that consumes each record and produces it again cannot move them faster
// than they were produced, so the backlog lasts on any machine. A run that
// drains it all before it stops still reports an error, since its rate
// would then be the backlog's, not the pipeline's.
//
// Both move the same records with the same client settings: a consumer group
// reading from the start, committing every 100 ms (the spout commits up to
// the first record not acked; the limit's auto-commit, what it polled), and
// a producer with franz-go's defaults (acks=all, idempotent) and no linger
// (the sink's default), at most max pending records unacknowledged. The
// topology runs with the runtime's default spout wait (100 ms), as users get
// it. The kafka case counts a record when the sink routes it, the limit when
// the broker acknowledged it: at most max pending apart, less than 1% of a
// measured second.

// Relayed is the relay bolt's output.
type Relayed struct{ R *kafka.Record }

const kafkaPartitions = 4

// kafkaKeys is how many distinct keys the records of "in" have.
const kafkaKeys = 1000

// kafkaBroker starts a broker and fills "in" for fill: records of 100 bytes
// keyed "k0" .. "k999" in turn, produced asynchronously (the fastest one
// client produces). It returns how many it produced.
func kafkaBroker(fill time.Duration) (*kfake.Cluster, []string, int, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(kafkaPartitions, "in", "out"))
	if err != nil {
		return nil, nil, 0, err
	}
	seeds := c.ListenAddrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		c.Close()
		return nil, nil, 0, err
	}
	defer cl.Close()
	value := make([]byte, 100)
	keys := make([][]byte, kafkaKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", i)
	}
	var failed atomic.Pointer[error]
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.CompareAndSwap(nil, &err)
		}
	}
	ctx := context.Background()
	records := 0
	for end := time.Now().Add(fill); time.Now().Before(end) && failed.Load() == nil; {
		for range 1000 { // the clock read once per thousand
			cl.Produce(ctx, &kgo.Record{Topic: "in", Key: keys[records%kafkaKeys], Value: value}, promise)
			records++
		}
	}
	if err := cl.Flush(ctx); err != nil {
		c.Close()
		return nil, nil, 0, fmt.Errorf("filling \"in\": %w", err)
	}
	if err := failed.Load(); err != nil {
		c.Close()
		return nil, nil, 0, fmt.Errorf("filling \"in\": %w", *err)
	}
	return c, seeds, records, nil
}

type kafkaPipe struct {
	broker  *kfake.Cluster
	stop    func() error
	count   *atomic.Int64
	records int
}

func (k *kafkaPipe) Stop() error {
	err := k.stop()
	k.broker.Close()
	if n := k.count.Load(); n >= int64(k.records) {
		return errors.Join(err, fmt.Errorf("drained the whole backlog of %d records: raise it", k.records))
	}
	return err
}

func startKafka(s setup) (pipeline, error) {
	broker, seeds, records, err := kafkaBroker(s.fill)
	if err != nil {
		return nil, err
	}
	t := s.probe.tally()
	var count atomic.Int64
	b := dsl.New("kafka-bench", dsl.Conf{dsl.MaxSpoutPending: s.pending})
	b.Streams(Relayed{})
	in := b.Spout("in", kafka.Spout(seeds, "bench", []string{"in"}, kafka.WithCommitPeriod(100*time.Millisecond)))
	relay := b.Bolt("relay", dsl.AutoAck(func(r kafka.Record, out dsl.Emitter) error {
		out.Emit(Relayed{&r})
		return nil
	}))
	out := b.Bolt("out", kafka.Sink(seeds, func(r Relayed) kafka.Record {
		t.inc() // the sink's task only
		count.Add(1)
		return kafka.Record{Topic: "out", Key: r.R.Key, Value: r.R.Value}
	}))
	b.Anchored(in, relay, dsl.Shuffle[kafka.Record]())
	b.Anchored(relay, out, dsl.Shuffle[Relayed]())
	topo, err := b.Build()
	if err != nil {
		broker.Close()
		return nil, err
	}
	running, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		broker.Close()
		return nil, err
	}
	return &kafkaPipe{broker: broker, count: &count, records: records, stop: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return running.Stop(ctx)
	}}, nil
}

// startFranz is the limit: one franz-go client consuming "in" in a group and
// producing each record to "out" asynchronously, counting it on the broker's
// acknowledgement, at most max pending records unacknowledged.
func startFranz(s setup) (pipeline, error) {
	broker, seeds, records, err := kafkaBroker(s.fill)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup("bench"), kgo.ConsumeTopics("in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(100*time.Millisecond),
		kgo.MaxBufferedRecords(s.pending), kgo.ProducerLinger(0))
	if err != nil {
		broker.Close()
		return nil, err
	}
	t := s.probe.tally()
	var count atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				cl.Produce(ctx, &kgo.Record{Topic: "out", Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
					if err == nil {
						t.c.n.Store(count.Add(1))
					}
				})
			})
		}
	}()
	return &kafkaPipe{broker: broker, count: &count, records: records, stop: func() error {
		cancel()
		<-done
		cl.Close()
		return nil
	}}, nil
}
