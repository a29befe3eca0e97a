// Command connectors uses the connectors and the stores as a user's program
// does: a topology that reads a Kafka topic and writes another through
// connectors/kafka against franz-go's in-process broker, a JetStream
// topology built with connectors/jetstream, a checkpoint committed to
// state/pebble and read back, and a state/redis store made on a client.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/state/redis"
	"github.com/goshelter/goshelter/supervision"
)

// Word is a word read from Kafka.
type Word struct{ Text string }

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, step := range []func(context.Context) error{runKafka, buildJetStream, usePebble, useRedis} {
		if err := step(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "connectors:", err)
			os.Exit(1)
		}
	}
}

// runKafka copies 100 words from "words" to "shouts", upper-cased, and reads
// every shout back.
func runKafka(ctx context.Context) error {
	const n = 100
	broker, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "words", "shouts"))
	if err != nil {
		return fmt.Errorf("kfake: %w", err)
	}
	defer broker.Close()
	seeds := broker.ListenAddrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("shouts"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "words", Value: fmt.Appendf(nil, "word%d", i)}).FirstErr(); err != nil {
			return fmt.Errorf("producing word %d: %w", i, err)
		}
	}

	b := dsl.New("shout", dsl.Conf{dsl.SpoutWait: 5 * time.Millisecond})
	words := b.Spout("words", kafka.SpoutOf(func(r kafka.Record) Word { return Word{Text: string(r.Value)} },
		seeds, "shouter", []string{"words"}, kafka.WithCommitPeriod(100*time.Millisecond)))
	shouts := b.Bolt("shouts", kafka.Sink(seeds, func(w Word) kafka.Record {
		return kafka.Record{Topic: "shouts", Key: []byte(w.Text), Value: []byte(strings.ToUpper(w.Text))}
	}))
	b.Anchored(words, shouts, dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		return err
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for len(seen) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if err := running.Stop(context.Background()); err != nil {
		return fmt.Errorf("stopping the kafka topology: %w", err)
	}
	if len(seen) < n {
		return fmt.Errorf("kafka: %d of %d shouts read: %w", len(seen), n, ctx.Err())
	}
	fmt.Printf("kafka: in=%d out=%d\n", n, len(seen))
	return nil
}

// buildJetStream builds a topology that reads and writes JetStream; running
// it would need a server.
func buildJetStream(context.Context) error {
	const url = "nats://127.0.0.1:4222"
	b := dsl.New("uppercase", nil)
	in := b.Spout("orders", jetstream.Spout(url, "ORDERS", "uppercase", func(m jetstream.Message) (Word, error) {
		return Word{Text: strings.ToUpper(string(m.Data))}, nil
	}))
	out := b.Bolt("publish", jetstream.Sink(url, func(w Word) (jetstream.Record, error) {
		return jetstream.Record{Subject: "upper.orders", Data: []byte(w.Text)}, nil
	}))
	b.Anchored(in, out, dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	fmt.Printf("jetstream: built %s\n", topo.Name)
	return nil
}

// usePebble commits a checkpoint, reopens the store and reads it back.
func usePebble(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "modcheck-pebble")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := pebble.Open(dir)
	if err != nil {
		return fmt.Errorf("pebble: %w", err)
	}
	err = s.Commit(ctx, state.Checkpoint{ID: 7, Changes: []state.Change{{Space: "count/0", Key: []byte("storm"), Value: []byte("2")}}})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pebble: %w", err)
	}
	s, err = pebble.Open(dir)
	if err != nil {
		return fmt.Errorf("pebble: reopening: %w", err)
	}
	defer s.Close()
	id, err := s.Committed(ctx)
	if err != nil {
		return fmt.Errorf("pebble: %w", err)
	}
	fmt.Printf("pebble: committed=%d\n", id)
	return nil
}

// useRedis makes a store on a client that never connects: it needs a server
// to do more.
func useRedis(context.Context) error {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	var s state.Store = redis.New(client, "modcheck")
	fmt.Printf("redis: store %T\n", s)
	return nil
}
