// Command wordcount runs the word count topology: sentences -> split -> count ->
// log, with shuffle and fields groupings. It stops after -duration, prints the
// most frequent words, then a summary line.
//
// The summary's figures are taken after the stop, whose drain lets every
// tuple already sent be executed: emitted counts the sentences, words the
// words split out of them, counted the words the count bolt executed. They
// match (words = counted) unless the drain ran out of time, in which case the
// difference is the words that were never counted.
//
// -graph prints the topology as Graphviz DOT and exits
// (go run ./samples/wordcount -graph | dot -Tsvg > wordcount.svg). -progress
// prints a progress line a second (the default when stdout is a terminal).
// -metrics 127.0.0.1:9464 serves /metrics, /stats and /graph while it runs;
// -status 127.0.0.1:8080 serves the same handler for a browser: the status page
// at http://127.0.0.1:8080/ (with Storm UI's REST API under /api/v1/). -ui is
// its older name, kept as an alias.
//
// It prints the summary however the run ends: after -duration, on an
// interrupt, or when the topology fails (then it exits 1 after the summary).
//
// The same binary runs on Apache Storm (see docs/STORM.md): -flux prints the
// Flux definition whose components run it as "goshelter-wordcount serve", and
// "serve" serves the component Storm names over stdin and stdout.
//
//	go run ./samples/wordcount -flux ./goshelter-wordcount serve > topology.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/samples/internal/corpus"
	"github.com/goshelter/goshelter/samples/internal/serving"
	"github.com/goshelter/goshelter/samples/internal/term"
	"github.com/goshelter/goshelter/supervision"
)

// Sentence and Word are the streams the word-count samples share.
type (
	Sentence = corpus.Sentence
	Word     = corpus.Word
)

// Count is a word's running count.
type Count struct {
	Word string `storm:"word"`
	N    int    `storm:"count"`
}

// figures are what the summary reports, counted by the components themselves:
// the runtime's statistics are gone once the topology has stopped.
type figures struct{ sentences, words, counted atomic.Int64 }

// tally is the log bolt's view of the latest count per word, shared by its tasks.
type tally struct {
	mu     sync.Mutex // mu guards counts
	counts map[string]int
}

func (t *tally) record(c Count) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.N > t.counts[c.Word] {
		t.counts[c.Word] = c.N
	}
}

func (t *tally) top(n int) []Count {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Count, 0, len(t.counts))
	for w, c := range t.counts {
		out = append(out, Count{w, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N > out[j].N || (out[i].N == out[j].N && out[i].Word < out[j].Word) })
	return out[:min(n, len(out))]
}

// counter is a count task's state. The fields grouping sends every occurrence
// of a word to the same task, so one task holds each word's whole count.
type counter struct {
	counts map[string]int
	f      *figures
	info   dsl.TaskInfo
	n      int // words this task counted
}

func (c *counter) Execute(w Word, out dsl.Emitter) error {
	c.counts[w.Text]++
	c.f.counted.Add(1)
	if c.n++; c.n%metricEvery == 1 {
		// The status page shows it in the task's Metrics column.
		c.info.Metric("words.distinct", len(c.counts))
	}
	out.Emit(Count{w.Text, c.counts[w.Text]})
	return nil
}

// metricEvery is how many words a count task counts between two reports of
// its distinct words: a report takes a lock, a word should not.
const metricEvery = 1024

// topology builds the word count topology; results go to t and f.
func topology(t *tally, f *figures) (*dsl.Topology, error) {
	b := dsl.New("wordcount", nil)
	b.Streams(Word{}, Count{})
	spout := b.Spout("sentences", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Sentence, bool) {
		i := info.Index
		return func() (Sentence, bool) {
			i++
			f.sentences.Add(1)
			return Sentence{Text: corpus.Line(i)}, true
		}
	}), dsl.Parallelism(4))
	split := b.Bolt("split", dsl.AutoAck(func(s Sentence, out dsl.Emitter) error {
		for _, w := range strings.Fields(s.Text) {
			out.Emit(Word{Text: w})
			f.words.Add(1)
		}
		return nil
	}), dsl.Parallelism(4))
	count := b.Bolt("count", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Word] {
		return &counter{counts: map[string]int{}, f: f, info: info}
	}), dsl.Parallelism(4))
	logger := b.Bolt("log", dsl.AutoAck(func(c Count, _ dsl.Emitter) error {
		t.record(c)
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(spout, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "word"))
	b.Anchored(count, logger, dsl.Fields(func(c Count) string { return c.Word }, "word"))
	return b.Build()
}

func main() {
	duration := flag.Duration("duration", 10*time.Second, "how long to run before stopping")
	graph := flag.Bool("graph", false, "print the topology as Graphviz DOT and exit")
	progress := flag.Bool("progress", term.IsTerminal(os.Stdout), "print a progress line every second")
	metrics := flag.String("metrics", "", "serve /metrics, /stats and /graph at this address while running")
	status := cli.StatusFlag("ui")
	flux := flag.Bool("flux", false, "print the Storm Flux definition that runs this binary (the arguments are its command line) and exit")
	flag.Usage = serving.Usage("wordcount", "the word count topology, all in Go")
	flag.Parse()
	t, f := &tally{counts: map[string]int{}}, &figures{}
	topo, err := topology(t, f)
	if err != nil {
		log.Fatal(err)
	}
	args := flag.Args()
	switch {
	case *graph:
		fmt.Print(observe.DOT(topo, nil))
		return
	case *flux:
		if len(args) == 0 {
			args = []string{"./goshelter-wordcount", "serve"}
		}
		if err := multilang.Flux(os.Stdout, topo, args...); err != nil {
			log.Fatal(err)
		}
		return
	case serving.IsServe(args): // started by Storm as a shell component
		if err := serving.Serve(context.Background(), "wordcount", topo, args); err != nil {
			log.Fatal(err) // Storm sees the process exit and restarts the worker
		}
		return
	}
	if err := run(topo, t, f, *duration, *progress, *metrics, *status); err != nil {
		log.Fatal(err)
	}
}

func run(topo *dsl.Topology, t *tally, f *figures, duration time.Duration, progress bool, metrics, status string) (err error) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	start := time.Now()
	running, err := supervision.Run(ctx, topo, supervision.WithoutRestarts())
	if err != nil {
		return err
	}
	stopProgress := func() {}
	if progress {
		stopProgress = observe.Progress(os.Stdout, running, time.Second)
		defer stopProgress()
	}
	if metrics != "" {
		srv, err := observe.Listen(metrics, topo, running)
		if err != nil {
			return errors.Join(err, running.Stop(context.Background()))
		}
		defer srv.Close()
		fmt.Fprintf(os.Stderr, "serving http://%s/metrics, /stats and /graph\n", srv.Addr)
	}
	stopStatus, err := cli.ServeStatus(status, topo, running)
	if err != nil {
		return errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	failed := cli.Await(ctx, running, duration, nil)
	stopProgress() // the summary is the last line
	if failed == nil {
		failed = cli.Stop(running, 30*time.Second)
	}
	elapsed := time.Since(start)
	for _, c := range t.top(10) {
		fmt.Printf("%-10s %d\n", c.Word, c.N)
	}
	emitted := f.sentences.Load()
	fmt.Printf("summary: emitted=%d words=%d counted=%d elapsed=%s rate=%.0f/s\n",
		emitted, f.words.Load(), f.counted.Load(), elapsed.Round(time.Millisecond), float64(emitted)/elapsed.Seconds())
	return failed // after the summary: what the run did is worth seeing either way
}
