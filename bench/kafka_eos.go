package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/supervision"
)

// The exactly-once Kafka case (issue 31): topic "in" -> count by key -> topic
// "out", with the count a stateful bolt (2 tasks, fields on the key)
// checkpointed every kafkaCountInterval to Pebble in a fresh temporary
// directory, and the sink producing "key=n" for each record.
//
//   - kafka-exactlyonce: the spout in the checkpoint (its offsets stored with
//     the counts) and the sink transactional: the output of a checkpoint is
//     committed after the checkpoint, exactly once.
//   - kafka-atleastonce: the same topology with the spout opted out of the
//     checkpoint (dsl.OutsideCheckpoint) and the sink without transactions
//     (kafka.WithoutTransactions): the runtime still waits at each barrier
//     for the sink's acks, but stores no offsets and opens no transactions.
//   - franz-go: one client consuming "in" in a group, counting by key in a
//     map and producing "key=n" asynchronously, counted on the broker's
//     acknowledgement: the limit, with no guarantee of its own.
//
// The goshelter cases count a record when the sink routes it, as the kafka
// case does; its output shows to read_committed consumers at the next
// checkpoint's commit.

// kafkaCountInterval is the checkpoint interval of the count cases: short
// enough that several checkpoints commit within the 1 s measured.
const kafkaCountInterval = 200 * time.Millisecond

// KeyCount is the count bolt's output: the n-th record of a key.
type KeyCount struct {
	Key []byte
	N   int
}

// countPipe is a running count case and its store.
type countPipe struct {
	*kafkaPipe
	store interface{ Close() error }
	dir   string
}

func (p countPipe) Stop() error {
	err := p.kafkaPipe.Stop()
	return errors.Join(err, p.store.Close(), os.RemoveAll(p.dir))
}

func startKafkaCount(exactlyOnce bool) starter {
	return func(s setup) (pipeline, error) {
		broker, seeds, records, err := kafkaBroker(s.fill)
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "goshelter-bench-kafka-")
		if err != nil {
			broker.Close()
			return nil, err
		}
		store, err := pebble.Open(dir)
		if err != nil {
			broker.Close()
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		fail := func(err error) (pipeline, error) {
			broker.Close()
			return nil, errors.Join(err, store.Close(), os.RemoveAll(dir))
		}
		t := s.probe.tally()
		var count atomic.Int64
		b := dsl.New("kafka-count-bench", dsl.Conf{dsl.MaxSpoutPending: s.pending, dsl.CheckpointInterval: kafkaCountInterval})
		b.Streams(KeyCount{})
		var spoutOpts []dsl.Option
		var sinkOpts []kafka.Option
		if !exactlyOnce {
			spoutOpts = append(spoutOpts, dsl.OutsideCheckpoint())
			sinkOpts = append(sinkOpts, kafka.WithoutTransactions())
		}
		in := b.Spout("in", kafka.Spout(seeds, "bench", []string{"in"}, kafka.WithCommitPeriod(100*time.Millisecond)), spoutOpts...)
		counter := b.Bolt("count", dsl.Stateful(func(r kafka.Record, st *dsl.State[string, int], out dsl.Emitter) error {
			n, _ := st.Get(string(r.Key))
			st.Put(string(r.Key), n+1)
			out.Emit(KeyCount{Key: r.Key, N: n + 1})
			return nil
		}), dsl.Parallelism(2))
		out := b.Bolt("out", kafka.Sink(seeds, func(c KeyCount) kafka.Record {
			t.inc() // the sink's task only
			count.Add(1)
			return kafka.Record{Topic: "out", Key: c.Key, Value: fmt.Appendf(nil, "%s=%d", c.Key, c.N)}
		}, sinkOpts...))
		b.Anchored(in, counter, dsl.Fields(func(r kafka.Record) string { return string(r.Key) }, "key"))
		b.Anchored(counter, out, dsl.Shuffle[KeyCount]())
		topo, err := b.Build()
		if err != nil {
			return fail(err)
		}
		running, err := supervision.Run(context.Background(), topo, supervision.WithStore(store),
			supervision.WithLogger(zap.NewNop()), supervision.WithoutRestarts())
		if err != nil {
			return fail(err)
		}
		kp := &kafkaPipe{broker: broker, count: &count, records: records, stop: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return running.Stop(ctx)
		}}
		return countPipe{kafkaPipe: kp, store: store, dir: dir}, nil
	}
}

// startFranzCount is the limit of the count cases: one franz-go client
// consuming "in" in a group, counting by key and producing "key=n" to "out"
// asynchronously, counted on the broker's acknowledgement, at most max
// pending records unacknowledged.
func startFranzCount(s setup) (pipeline, error) {
	broker, seeds, records, err := kafkaBroker(s.fill)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup("bench"), kgo.ConsumeTopics("in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(100*time.Millisecond),
		kgo.MaxBufferedRecords(min(s.pending, 1<<16)), kgo.ProducerLinger(0))
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
		counts := map[string]int{}
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				n := counts[string(r.Key)] + 1
				counts[string(r.Key)] = n
				cl.Produce(ctx, &kgo.Record{Topic: "out", Key: r.Key, Value: fmt.Appendf(nil, "%s=%d", r.Key, n)}, func(_ *kgo.Record, err error) {
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
