// Command exactlyonce runs Kafka -> split -> stateful count -> Kafka exactly
// once (issue 31): the Kafka spout's offsets are stored in the checkpoints
// with the counts, and the Kafka sink writes each checkpoint's output in a
// transaction committed after the checkpoint. It can be killed with SIGKILL
// at any moment and started again: the counts and the output stay exact.
//
//	go run ./samples/exactlyonce -dir /tmp/eo                      # starts (or reuses) a local broker
//	go run ./samples/exactlyonce -dir /tmp/eo -lines 200000        # kill -9 it, start it again
//	go run ./samples/exactlyonce -dir /tmp/eo -stop-broker         # stops the local broker
//	go run ./samples/exactlyonce -dir /tmp/eo -brokers host:9092   # a real cluster
//
// The input is -lines lines of words drawn with a fixed seed, written once to
// topic "lines" (4 partitions; line i goes to partition i mod 4, so a longer
// run only appends). The count bolt emits "word=n" for the n-th occurrence of
// a word, and the sink writes it to topic "counts". The store (Pebble) is in
// -dir/store.
//
// # The broker
//
// Without -brokers the sample uses a broker on -broker-addr (default
// 127.0.0.1:39092), and when none answers it starts one: itself, as
// "exactlyonce broker", in a process of its own (kfake, franz-go's embedded
// broker, persisting to -dir/broker). The broker must outlive the sample: a
// transaction prepared for a committed checkpoint is committed by the next
// run, and a broker killed with the sample would abort it (kfake aborts the
// transactions open at a crash when it reloads its data). So the sample's
// SIGKILL leaves the broker running, and the next run finds it; -stop-broker
// stops it cleanly (it keeps its data in -dir/broker for the next start).
//
// # Output
//
// It runs until every line is counted and committed, -duration passes or an
// interrupt comes, stops, reads back the store and the whole "counts" topic
// (read_committed) and prints a last line
//
//	summary: lines=N words=W counted=C output=O lost=L duplicated=D exact=true checkpoint=ID
//
// counted is the sum of the stored counts; output the records read from
// "counts"; lost the records "w=n" with n up to w's stored count that are
// not in the output, duplicated those read more than once or past the
// stored count; exact says lost = duplicated = 0 and, once every line is
// counted, every stored count is the input's.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/samples/internal/corpus"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/supervision"
)

// The topics, their partitions, the spout's group and the count bolt's
// parallelism (a stateful bolt's state is stored by task: it cannot change
// between runs on one store).
const (
	linesTopic  = "lines"
	countsTopic = "counts"
	partitions  = 4
	group       = "exactlyonce"
	countTasks  = 2
)

// Word is one word of a line; Count the n-th occurrence of a word.
type (
	Word  struct{ Text string }
	Count struct {
		Word string
		N    int
	}
)

// Config is a run's settings (the flags).
type Config struct {
	Brokers    []string      // empty: the local broker at BrokerAddr
	BrokerAddr string        // where the local broker listens
	Dir        string        // the store in Dir/store, the local broker's data in Dir/broker
	Lines      int           // lines of input
	Seed       uint64        // of the input's words
	Duration   time.Duration // stop after this long even if lines are left
	Interval   time.Duration // checkpoint interval
	LineDelay  time.Duration // work per line in split (0: none), so a kill finds work in flight
	Running    func()        // called once the topology runs (the crash test's marker)
	Status     string        // serve the status page at this address while running ("" for none)
	Logger     *zap.Logger
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "broker" {
		if err := runBroker(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	var c Config
	cli.Usage("exactlyonce", "Kafka -> stateful count -> Kafka exactly-once; kill it (kill -9) and start it again")
	status := cli.StatusFlag()
	brokers := flag.String("brokers", "", "comma-separated seed brokers; empty: the local broker (started if needed)")
	flag.StringVar(&c.BrokerAddr, "broker-addr", "127.0.0.1:39092", "address of the local broker")
	flag.StringVar(&c.Dir, "dir", "exactlyonce-data", "directory of the store and of the local broker's data")
	flag.IntVar(&c.Lines, "lines", 20_000, "lines of input")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the input's words")
	flag.DurationVar(&c.Duration, "duration", time.Minute, "stop after this long even if lines are left")
	flag.DurationVar(&c.Interval, "interval", 100*time.Millisecond, "checkpoint interval (the output's latency)")
	stopBroker := flag.Bool("stop-broker", false, "stop the local broker of -dir and exit")
	flag.Parse()
	c.Status = *status
	if *stopBroker {
		if err := stopLocalBroker(c.Dir); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *brokers != "" {
		c.Brokers = strings.Split(*brokers, ",")
	}
	if c.Lines < 0 || c.Interval < time.Millisecond {
		log.Fatal("-lines must not be negative and -interval must be 1ms or more")
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := Run(ctx, c); err != nil {
		log.Fatal(err)
	}
}

// Topology is Kafka "lines" -> split -> count (stateful) -> Kafka "counts".
// Under state the spout is positioned and the sink transactional: both by
// default, nothing to ask for.
func Topology(seeds []string, interval, lineDelay time.Duration) (*dsl.Topology, error) {
	b := dsl.New("exactlyonce", dsl.Conf{dsl.CheckpointInterval: interval, dsl.MaxSpoutPending: 1 << 14,
		dsl.SpoutWait: 2 * time.Millisecond})
	b.Streams(Word{}, Count{})
	lines := b.Spout("lines", kafka.Spout(seeds, group, []string{linesTopic},
		kafka.WithClientOptions(kgo.FetchMaxWait(100*time.Millisecond))), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in kafka.Record, out dsl.Emitter) error {
		if lineDelay > 0 {
			time.Sleep(lineDelay) // the sample's work per line
		}
		for _, w := range strings.Fields(string(in.Value)) {
			out.Emit(Word{Text: w})
		}
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(in Word, st *dsl.State[string, int], out dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		out.Emit(Count{Word: in.Text, N: n + 1})
		return nil
	}), dsl.Parallelism(countTasks))
	sink := b.Bolt("out", kafka.Sink(seeds, func(c Count) kafka.Record {
		return kafka.Record{Topic: countsTopic, Key: []byte(c.Word), Value: fmt.Appendf(nil, "%s=%d", c.Word, c.N)}
	}))
	b.Anchored(lines, split, dsl.Shuffle[kafka.Record]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	b.Anchored(count, sink, dsl.Shuffle[Count]())
	return b.Build()
}

// ErrNotExact is Run's error when the summary found output lost or
// duplicated, or counts that are not the input's.
var ErrNotExact = errors.New("exactlyonce: the output or the counts are not exact")

// Summary is what a run found at its end.
type Summary struct {
	Lines, Words, Counted, Output, Lost, Duplicated int
	Exact                                           bool
	Checkpoint                                      uint64
}

func (s Summary) String() string {
	return fmt.Sprintf("summary: lines=%d words=%d counted=%d output=%d lost=%d duplicated=%d exact=%t checkpoint=%d",
		s.Lines, s.Words, s.Counted, s.Output, s.Lost, s.Duplicated, s.Exact, s.Checkpoint)
}

// Run runs the sample until every line is counted and committed, the
// duration passed or ctx ended, then prints and returns the summary's check.
func Run(ctx context.Context, c Config) (err error) {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	seeds := c.Brokers
	if len(seeds) == 0 {
		if err := ensureLocalBroker(ctx, c.BrokerAddr, c.Dir); err != nil {
			return err
		}
		seeds = []string{c.BrokerAddr}
	}
	lines := corpus.Lines(c.Lines, c.Seed)
	want := corpus.WordCounts(lines)
	words := 0
	for _, n := range want {
		words += n
	}
	if err := writeInput(ctx, seeds, lines); err != nil {
		return err
	}
	store, err := pebble.Open(filepath.Join(c.Dir, "store"))
	if err != nil {
		return fmt.Errorf("opening the store in %q: %w", c.Dir, err)
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	if id, err := store.Committed(ctx); err != nil {
		return fmt.Errorf("reading the last checkpoint: %w", err)
	} else if id > 0 {
		fmt.Printf("resuming from checkpoint %d in %s\n", id, c.Dir)
	}
	topo, err := Topology(seeds, c.Interval, c.LineDelay)
	if err != nil {
		return err
	}
	running, err := supervision.Run(ctx, topo, supervision.WithStore(store), supervision.WithLogger(c.Logger))
	if err != nil {
		return err
	}
	stopStatus, err := cli.ServeStatus(c.Status, topo, running)
	if err != nil {
		return errors.Join(err, cli.Stop(running, 30*time.Second))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	if c.Running != nil {
		c.Running()
	}
	// However the run ends (counted, the duration, an interrupt, or the
	// topology failing for good), the summary is printed before any error.
	waitErr := waitCounted(ctx, store, words, c.Duration, running)
	if errors.Is(waitErr, context.DeadlineExceeded) || errors.Is(waitErr, context.Canceled) {
		waitErr = nil
	}
	stopErr := cli.Stop(running, 30*time.Second) // its last checkpoint covers what was handed out
	if stopErr != nil {
		stopErr = fmt.Errorf("stopping: %w", stopErr)
	}
	s, err := summarise(context.Background(), seeds, store, lines, want)
	if err != nil {
		return errors.Join(waitErr, stopErr, err)
	}
	fmt.Println(s)
	if err := errors.Join(waitErr, stopErr); err != nil {
		return err
	}
	if !s.Exact {
		return ErrNotExact
	}
	return nil
}

// waitCounted waits until the committed counts add up to words, or d passed,
// or ctx ended, or the topology ended by itself (then with why). The store
// is read between checkpoints: a committed checkpoint is immutable.
func waitCounted(ctx context.Context, store state.Store, words int, d time.Duration, running *supervision.Running) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, counts, err := stored(ctx, store)
		if err != nil {
			return err
		}
		if sum(counts) >= words {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-running.Done():
			if err := running.Wait(); err != nil {
				return fmt.Errorf("the topology ended: %w", err)
			}
			return nil
		case <-tick.C:
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// stored reads the last committed checkpoint's id and counts. The runtime
// keeps a stateful task's keys in space "bolt/<component>/<task index>", an
// int as its varint.
func stored(ctx context.Context, store state.Store) (uint64, map[string]int, error) {
	id, err := store.Committed(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the last checkpoint: %w", err)
	}
	counts := map[string]int{}
	for i := range countTasks {
		err := store.Scan(ctx, fmt.Sprintf("bolt/count/%d", i), func(k, v []byte) error {
			n, size := binary.Varint(v)
			if size <= 0 || size != len(v) {
				return fmt.Errorf("count %x of %q is not a varint", v, k)
			}
			counts[string(k)] += int(n)
			return nil
		})
		if err != nil {
			return 0, nil, fmt.Errorf("reading the counts of task %d: %w", i, err)
		}
	}
	return id, counts, nil
}

// summarise compares the store and the output with the input: every word's
// stored count n must show in the output as "w=1" .. "w=n", once each, and
// nothing else.
func summarise(ctx context.Context, seeds []string, store state.Store, lines []string, want map[string]int) (Summary, error) {
	id, counts, err := stored(ctx, store)
	if err != nil {
		return Summary{}, err
	}
	out, err := ReadCommitted(ctx, seeds, countsTopic)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Lines: len(lines), Words: sum(want), Counted: sum(counts), Checkpoint: id}
	for _, n := range out {
		s.Output += n
	}
	expected := map[string]bool{}
	for w, n := range counts {
		for i := 1; i <= n; i++ {
			v := fmt.Sprintf("%s=%d", w, i)
			expected[v] = true
			if out[v] == 0 {
				s.Lost++
			}
		}
	}
	for v, n := range out {
		if expected[v] {
			s.Duplicated += n - 1
		} else {
			s.Duplicated += n // past a stored count: output of a checkpoint that never committed
		}
	}
	// Once every line is counted the counts must be the input's; before,
	// at most as many words as the input has.
	countsExact := s.Counted <= s.Words && (s.Counted < s.Words || equal(counts, want))
	s.Exact = s.Lost == 0 && s.Duplicated == 0 && countsExact
	return s, nil
}

func equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ReadCommitted reads topic from the start with read_committed isolation
// and returns how often each value was read. It reads up to a probe record
// it produces at the end of each partition (non-transactional, value
// "probe", not counted): everything decided before the call is read.
func ReadCommitted(ctx context.Context, seeds []string, topic string) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	for p := range int32(partitions) {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("probe")}).FirstErr(); err != nil {
			return nil, fmt.Errorf("producing a probe to %s[%d]: %w", topic, p, err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	seen := map[string]int{}
	probes := map[int32]int{}
	for len(probes) < partitions {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %q up to the probes (an open transaction holds them back?): %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "probe" {
				probes[r.Partition]++
				return
			}
			seen[string(r.Value)]++
		})
	}
	return seen, nil
}

// writeInput creates the topics if needed and writes the lines each
// partition of "lines" lacks: line i is record i/4 of partition i%4, so a
// run killed while writing completes the input, and a longer run appends.
func writeInput(ctx context.Context, seeds []string, lines []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	created, err := adm.CreateTopics(ctx, partitions, 1, nil, linesTopic, countsTopic)
	if err != nil {
		return fmt.Errorf("creating the topics: %w", err)
	}
	for _, t := range created {
		if t.Err != nil && !errors.Is(t.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating topic %q: %w", t.Topic, t.Err)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, linesTopic)
	if err != nil {
		return fmt.Errorf("reading the end of %q: %w", linesTopic, err)
	}
	var rs []*kgo.Record
	for i, l := range lines {
		p := int32(i % partitions)
		end, ok := ends.Lookup(linesTopic, p)
		if !ok || end.Err != nil {
			return fmt.Errorf("no end offset for %s[%d]", linesTopic, p)
		}
		if int64(i/partitions) >= end.Offset {
			rs = append(rs, &kgo.Record{Topic: linesTopic, Partition: p, Value: []byte(l)})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("writing the input to %q: %w", linesTopic, err)
	}
	return nil
}
