package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// Word is the example's stream: a word read from the "words" topic.
type Word struct{ Text string }

// A topology reads "words", upper-cases each word and writes it to "shouts",
// keyed by the word; each word's record is committed on "words" only once
// its shout is stored. The broker is franz-go's in-process cluster.
func Example() {
	broker, _ := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "words", "shouts"))
	defer broker.Close()
	seeds := broker.ListenAddrs()
	cl, _ := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("shouts"), kgo.FetchMaxWait(100*time.Millisecond))
	defer cl.Close()
	for _, w := range []string{"storm", "kafka", "go"} {
		cl.ProduceSync(context.Background(), &kgo.Record{Topic: "words", Value: []byte(w)})
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
		fmt.Println(err)
		return
	}
	running, _ := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()))
	defer running.Stop(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for n := 0; n < 3 && ctx.Err() == nil; {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			fmt.Printf("%s -> %s\n", r.Key, r.Value)
			n++
		})
	}
	// Output:
	// storm -> STORM
	// kafka -> KAFKA
	// go -> GO
}
