// Command kafka runs a topology from one Kafka topic to another with the
// kafka connector: an embedded broker (franz-go's kfake) by default, or a
// real one with -brokers.
//
//	go run ./samples/kafka                       # embedded broker
//	go run ./samples/kafka -fail-rate 0.1        # the bolt fails 10% of first attempts
//	go run ./samples/kafka -crash-every 5000     # the bolt panics: supervision restarts the topology
//	go run ./samples/kafka -brokers host:9092    # a real cluster (topics "in"/"out" must exist)
//
// It produces -records records to "in", runs in -> spout -> work -> sink ->
// "out" until every record is in "out" or -duration passed, stops, and prints
// a last line
//
//	summary: produced=N processed=N committed=N lost=0 duplicates=N retried=N restarts=N rate=R/s
//
// where processed counts the distinct input records found in "out",
// committed the offsets the group committed on "in", and lost the records
// produced and never found in "out": it must be 0. -crash-every N makes the
// work bolt panic at every N-th input: supervision restarts the topology (at
// most -max-restarts times in a row) and the spout replays from the offsets
// committed, so nothing is lost (duplicates may be). The summary comes
// however the run ends, a failed topology included (past -max-restarts: it
// then exits 1 after the summary). -status 127.0.0.1:8080 serves the status
// page while it runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/supervision"
)

// Done is the work bolt's output: the input record's place, to the sink.
type Done struct {
	Partition int32
	Offset    int64
}

const group = "samples-kafka"

func main() {
	brokers := flag.String("brokers", "", "comma-separated seed brokers; empty starts an embedded broker")
	records := flag.Int("records", 20000, "records to produce to \"in\"")
	duration := flag.Duration("duration", 5*time.Second, "stop after this long at most")
	failRate := flag.Float64("fail-rate", 0.05, "fraction of first attempts the work bolt fails")
	crashEvery := flag.Int64("crash-every", 0, "make the work bolt panic at every N-th input (0: never)")
	maxRestarts := flag.Int("max-restarts", 5, "restarts in a row before supervision gives up and the topology fails")
	status := cli.StatusFlag()
	cli.Usage("kafka", "a topology from one Kafka topic to another")
	flag.Parse()
	if *crashEvery < 0 || *maxRestarts < 0 {
		log.Fatal("-crash-every and -max-restarts must not be negative")
	}
	o := options{records: *records, duration: *duration, failRate: *failRate, crashEvery: *crashEvery, maxRestarts: *maxRestarts, status: *status}
	if err := run(*brokers, o); err != nil {
		log.Fatal(err)
	}
}

// options are what the flags choose beyond the brokers.
type options struct {
	records     int
	duration    time.Duration
	failRate    float64
	crashEvery  int64
	maxRestarts int
	status      string
}

func run(brokers string, o options) (err error) {
	records, duration, failRate, status := o.records, o.duration, o.failRate, o.status
	seeds := []string{brokers}
	if brokers == "" {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "in", "out"))
		if err != nil {
			return fmt.Errorf("starting the embedded broker: %w", err)
		}
		defer c.Close()
		seeds = c.ListenAddrs()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := produce(cl, records); err != nil {
		return err
	}

	var retried, executed atomic.Int64
	tried := sync.Map{}
	b := dsl.New("kafka-sample", dsl.Conf{dsl.SpoutWait: 2 * time.Millisecond, dsl.MaxSpoutPending: 2000})
	b.Streams(Done{})
	in := b.Spout("in", kafka.Spout(seeds, group, []string{"in"}, kafka.WithCommitPeriod(100*time.Millisecond),
		kafka.WithRetry(0, 5*time.Millisecond, time.Second, 10)))
	work := b.Bolt("work", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[kafka.Record] {
		return handler(func(r kafka.Record, out dsl.Emitter) error {
			if n := executed.Add(1); o.crashEvery > 0 && n%o.crashEvery == 0 {
				// A failed input is only replayed; a failed task fails the topology.
				err := fmt.Errorf("work: crashing at input %d (-crash-every)", n)
				info.Fail(err)
				return err
			}
			if _, again := tried.LoadOrStore([2]int64{int64(r.Partition), r.Offset}, true); !again && rand.Float64() < failRate {
				retried.Add(1)
				return errors.New("failed on purpose (-fail-rate)")
			}
			out.Emit(Done{r.Partition, r.Offset})
			return nil
		})
	}))
	sink := b.Bolt("out", kafka.Sink(seeds, func(d Done) kafka.Record {
		return kafka.Record{Topic: "out", Value: fmt.Appendf(nil, "%d/%d", d.Partition, d.Offset)}
	}))
	b.Anchored(in, work, dsl.Shuffle[kafka.Record]())
	b.Anchored(work, sink, dsl.Shuffle[Done]())
	topo, err := b.Build()
	if err != nil {
		return err
	}
	start := time.Now()
	restarts := supervision.WithRestarts(supervision.Restarts{Base: 50 * time.Millisecond, Cap: time.Second, Max: o.maxRestarts})
	if o.maxRestarts == 0 { // Restarts reads a zero Max as the default
		restarts = supervision.WithoutRestarts()
	}
	running, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()), restarts)
	if err != nil {
		return err
	}
	stopStatus, err := cli.ServeStatus(status, topo, running)
	if err != nil {
		return errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	seen := map[string]int{}
	total := 0
	deadline := time.Now().Add(duration)
	for len(seen) < records && time.Now().Before(deadline) && !isDone(running) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; total++ })
		cancel()
	}
	elapsed := time.Since(start)
	var ended error // why the topology ended by itself (supervision gave up), if it did
	if isDone(running) {
		ended = running.Wait()
	} else {
		ended = cli.Stop(running, 30*time.Second)
	}
	committed, err := committedSum(cl)
	fmt.Fprintf(os.Stdout, "summary: produced=%d processed=%d committed=%d lost=%d duplicates=%d retried=%d restarts=%d rate=%.0f/s\n",
		records, len(seen), committed, records-len(seen), total-len(seen), retried.Load(), running.Stats().Restarts, float64(len(seen))/elapsed.Seconds())
	return errors.Join(ended, err) // after the summary: what the run did is worth seeing either way
}

// isDone reports whether the topology has ended.
func isDone(r *supervision.Running) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// handler adapts a function to dsl.Handler.
type handler func(kafka.Record, dsl.Emitter) error

func (h handler) Execute(r kafka.Record, out dsl.Emitter) error { return h(r, out) }

func produce(cl *kgo.Client, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: "in", Key: fmt.Appendf(nil, "%d", i), Value: fmt.Appendf(nil, "record %d", i)}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("producing to \"in\": %w", err)
	}
	return nil
}

// committedSum is the sum of the group's committed offsets on "in".
func committedSum(cl *kgo.Client) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		return 0, fmt.Errorf("reading the committed offsets: %w", err)
	}
	var sum int64
	os.Each(func(o kadm.OffsetResponse) {
		if o.Topic == "in" {
			sum += o.At
		}
	})
	return sum, nil
}
