// Command statefulcount runs an exactly-once word count: a positioned source
// over a generated corpus -> split (parallelism 2) -> count, a stateful bolt
// (dsl.Stateful, parallelism 2) whose word counts are checkpointed with the
// source's position in one atomic commit (issue 23).
//
//	go run ./samples/statefulcount -dir /tmp/counts
//	go run ./samples/statefulcount -dir /tmp/counts -lines 2000000   # kill it (kill -9), start it again
//
// The corpus is -lines lines of words drawn with a fixed -seed, so every run
// sees the same lines, and a longer corpus starts with the lines of a shorter
// one. The source's position is the index of its next line: each checkpoint
// stores it, and a new run on the same -dir resumes from the last checkpoint
// committed there, whatever happened to the process before (SIGKILL
// included). With -dir empty the checkpoints go to memory and every run
// starts over.
//
// It runs until every line is counted and committed (the source hears of a
// line's ack only when the checkpoint that covers it commits), or -duration
// passes, or an interrupt; then it stops, reads back what the store holds and
// prints the counts and a last line
//
//	summary: lines=N words=W done=D counted=C exact=true checkpoint=ID restarts=R
//
// where done is the committed position (lines covered by the store), counted
// the sum of the stored counts, and exact says whether the stored counts are
// the counts of the first done lines, computed from the corpus: no line lost,
// none counted twice. restarts counts supervision's restarts in this run.
//
// The summary comes however the run ends, a failed topology included (past
// -max-restarts supervision gives up): the sample exits 1 after it when the
// topology failed or the counts are not exact. -status 127.0.0.1:8080 serves
// the status page while it runs.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/samples/internal/corpus"
	"github.com/goshelter/goshelter/samples/internal/term"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/supervision"
)

// countTasks is the count bolt's parallelism. A stateful bolt's state is
// stored by task, so it cannot change between runs on one store.
const countTasks = 2

// source reads the corpus in order; its position is the index of its next
// line. One is made per task and incarnation: the runtime rewinds it to the
// last committed position before its first Next, and a failed or timed-out
// line rolls the whole topology back to that checkpoint, so Nack has nothing
// to do.
type source struct {
	lines []string
	next  int             // index of the next line
	open  int             // lines handed out and not acked yet
	done  chan<- struct{} // gets a value once every line is acked
}

func (s *source) Next() (int, corpus.Sentence, bool) {
	if s.next == len(s.lines) {
		if s.open == 0 {
			select { // every ack came after its checkpoint committed: all is stored
			case s.done <- struct{}{}:
			default:
			}
		}
		return 0, corpus.Sentence{}, false
	}
	i := s.next
	s.next++
	s.open++
	return i, corpus.Sentence{Text: s.lines[i]}, true
}

func (s *source) Ack(int)  { s.open-- }
func (s *source) Nack(int) {}

// Position is stored with every checkpoint.
func (s *source) Position() []byte { return binary.AppendUvarint(nil, uint64(s.next)) }

// Rewind goes back to a committed position.
func (s *source) Rewind(position []byte) error {
	n, size := binary.Uvarint(position)
	if size <= 0 || n > uint64(len(s.lines)) {
		return fmt.Errorf("position %x is not a line of a corpus of %d lines: run with -lines %d or more on this -dir", position, len(s.lines), n)
	}
	s.next, s.open = int(n), 0
	return nil
}

// maxPending bounds the lines in flight. A stateful bolt acks its inputs
// only when their checkpoint commits, so a spout task can have no more than
// max-pending lines acked per checkpoint interval: with Storm's default
// (128) and 1 s checkpoints the topology would count 128 lines a second.
const maxPending = 1 << 18

func topology(lines []string, interval time.Duration, done chan<- struct{}) (*dsl.Topology, error) {
	b := dsl.New("statefulcount", dsl.Conf{dsl.CheckpointInterval: interval, dsl.MaxSpoutPending: maxPending})
	b.Streams(corpus.Sentence{}, corpus.Word{})
	src := b.Spout("lines", dsl.ReliableFrom(func(dsl.TaskInfo) *source { return &source{lines: lines, done: done} }))
	split := b.Bolt("split", dsl.AutoAck(func(in corpus.Sentence, out dsl.Emitter) error {
		for _, w := range strings.Fields(in.Text) {
			out.Emit(corpus.Word{Text: w})
		}
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(in corpus.Word, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		return nil
	}), dsl.Parallelism(countTasks))
	b.Anchored(src, split, dsl.Shuffle[corpus.Sentence]())
	b.Anchored(split, count, dsl.Fields(func(w corpus.Word) string { return w.Text }, "word"))
	return b.Build()
}

// stored reads back the last committed checkpoint: the source's position and
// the word counts of the count tasks. The runtime keeps a stateful task's
// keys in space "bolt/<component>/<task index>" and a spout task's position
// under "position" in "spout/<component>/<task index>", in the binary form
// of dsl.State (a string's bytes, an int's varint).
func stored(ctx context.Context, store state.Store) (position int, counts map[string]int, err error) {
	err = store.Scan(ctx, "spout/lines/0", func(k, v []byte) error {
		if string(k) == "position" {
			n, size := binary.Uvarint(v)
			if size <= 0 {
				return fmt.Errorf("bad position %x", v)
			}
			position = int(n)
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("reading the position: %w", err)
	}
	counts = map[string]int{}
	for i := range countTasks {
		err := store.Scan(ctx, fmt.Sprintf("bolt/count/%d", i), func(k, v []byte) error {
			n, size := binary.Varint(v)
			if size <= 0 {
				return fmt.Errorf("bad count %x of %q", v, k)
			}
			counts[string(k)] += int(n)
			return nil
		})
		if err != nil {
			return 0, nil, fmt.Errorf("reading the counts of task %d: %w", i, err)
		}
	}
	return position, counts, nil
}

// openStore opens the durable store in dir, or a memory store without one.
func openStore(dir string) (state.Store, error) {
	if dir == "" {
		fmt.Println("note: no -dir: checkpoints go to memory, and a new run starts over")
		return state.NewMemory(), nil
	}
	s, err := pebble.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the store in %q: %w", dir, err)
	}
	return s, nil
}

func logger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zap.WarnLevel)
	return zap.New(zapcore.NewSamplerWithOptions(core, 10*time.Second, 3, 1_000_000))
}

func main() {
	n := flag.Int("lines", 100_000, "lines in the corpus")
	seed := flag.Uint64("seed", 1, "seed of the corpus")
	dir := flag.String("dir", "", "directory of the checkpoint store (empty: in memory)")
	duration := flag.Duration("duration", time.Minute, "stop after this long even if lines are left")
	interval := flag.Duration("interval", time.Second, "checkpoint interval (topology.state.checkpoint.interval.ms)")
	maxRestarts := flag.Int("max-restarts", 100, "restarts before supervision gives up and the topology fails")
	progress := flag.Bool("progress", term.IsTerminal(os.Stdout), "print a progress line every second (default: when stdout is a terminal)")
	status := cli.StatusFlag()
	cli.Usage("statefulcount", "an exactly-once word count, checkpointed to a Pebble store")
	flag.Parse()
	if *n < 0 || *interval < time.Millisecond || *maxRestarts < 0 {
		log.Fatal("-lines and -max-restarts must not be negative and -interval must be 1ms or more")
	}
	o := options{dir: *dir, duration: *duration, interval: *interval, maxRestarts: *maxRestarts, progress: *progress, status: *status}
	if err := run(*n, *seed, o); err != nil {
		log.Fatal(err)
	}
}

// options are what the flags choose beyond the corpus.
type options struct {
	dir                string
	duration, interval time.Duration
	maxRestarts        int
	progress           bool
	status             string
}

func run(n int, seed uint64, o options) (err error) {
	dir, duration, interval := o.dir, o.duration, o.interval
	lines := corpus.Lines(n, seed)
	store, err := openStore(dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if id, err := store.Committed(ctx); err != nil {
		return fmt.Errorf("reading the last checkpoint: %w", err)
	} else if id > 0 {
		fmt.Printf("resuming from checkpoint %d in %s\n", id, dir)
	}
	done := make(chan struct{}, 1)
	topo, err := topology(lines, interval, done)
	if err != nil {
		return err
	}
	restarts := supervision.WithRestarts(supervision.Restarts{Base: 50 * time.Millisecond, Cap: time.Second, Max: o.maxRestarts})
	if o.maxRestarts == 0 { // Restarts reads a zero Max as the default
		restarts = supervision.WithoutRestarts()
	}
	running, err := supervision.Run(ctx, topo, supervision.WithStore(store), supervision.WithLogger(logger()), restarts)
	if err != nil {
		return err
	}
	stopStatus, err := cli.ServeStatus(o.status, topo, running)
	if err != nil {
		return errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	stopProgress := func() {}
	if o.progress {
		stopProgress = observe.Progress(os.Stdout, running, time.Second)
		defer stopProgress()
	}
	ended := cli.Await(ctx, running, duration, done)
	stopProgress() // the summary is the last line
	if ended == nil {
		ended = cli.Stop(running, 30*time.Second) // a stop drains: its last checkpoint covers what was emitted
	}
	// After the summary: what the store holds is worth seeing either way.
	return errors.Join(report(lines, store, running.Stats().Restarts), ended)
}

// report prints the stored counts and the summary line.
func report(lines []string, store state.Store, restarts int) error {
	ctx := context.Background()
	id, err := store.Committed(ctx)
	if err != nil {
		return fmt.Errorf("reading the last checkpoint: %w", err)
	}
	position, got, err := stored(ctx, store)
	if err != nil {
		return err
	}
	counted, words := 0, 0
	var b strings.Builder
	for _, w := range slices.Sorted(maps.Keys(got)) {
		fmt.Fprintf(&b, " %s=%d", w, got[w])
		counted += got[w]
	}
	for _, c := range corpus.WordCounts(lines) {
		words += c
	}
	fmt.Printf("counts:%s\n", b.String())
	exact := position <= len(lines) && maps.Equal(got, corpus.WordCounts(lines[:position]))
	fmt.Printf("summary: lines=%d words=%d done=%d counted=%d exact=%t checkpoint=%d restarts=%d\n",
		len(lines), words, position, counted, exact, id, restarts)
	if position > len(lines) {
		return fmt.Errorf("the store covers %d lines, the corpus has %d: run with -lines %d or more", position, len(lines), position)
	}
	if !exact {
		return errors.New("the stored counts are not the counts of the lines the store covers")
	}
	return nil
}
