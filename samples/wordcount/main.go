// Command wordcount runs the word count topology: sentences -> split -> count ->
// log, with shuffle and fields groupings. It stops after -duration, prints the
// most frequent words, then a summary line.
//
// -graph prints the topology as Graphviz DOT and exits
// (go run ./samples/wordcount -graph | dot -Tsvg > wordcount.svg). -progress
// prints a progress line a second (the default when stdout is a terminal).
// -metrics 127.0.0.1:9464 serves /metrics, /stats and /graph while it runs;
// -ui 127.0.0.1:8080 serves the same handler for a browser: the status page at
// http://127.0.0.1:8080/ (with Storm UI's REST API under /api/v1/).
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
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/samples/internal/corpus"
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
type counter map[string]int

func (c counter) Execute(w Word, out dsl.Emitter) error {
	c[w.Text]++
	out.Emit(Count{w.Text, c[w.Text]})
	return nil
}

// topology builds the word count topology; results go to t.
func topology(t *tally) (*dsl.Topology, error) {
	b := dsl.New("wordcount", nil)
	b.Streams(Word{}, Count{})
	spout := b.Spout("sentences", dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (Sentence, bool) {
		i := info.Index
		return func() (Sentence, bool) {
			i++
			return Sentence{Text: corpus.Line(i)}, true
		}
	}), dsl.Parallelism(4))
	split := b.Bolt("split", dsl.AutoAck(func(s Sentence, out dsl.Emitter) error {
		for _, w := range strings.Fields(s.Text) {
			out.Emit(Word{Text: w})
		}
		return nil
	}), dsl.Parallelism(4))
	count := b.Bolt("count", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Word] {
		return counter{}
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
	ui := flag.String("ui", "", "serve the status page (and /api/v1, /metrics, /stats, /graph) at this address while running, e.g. 127.0.0.1:8080")
	flux := flag.Bool("flux", false, "print the Storm Flux definition that runs this binary (the arguments are its command line) and exit")
	flag.Parse()
	t := &tally{counts: map[string]int{}}
	topo, err := topology(t)
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
	case len(args) > 0 && args[0] == "serve": // started by Storm as a shell component
		if err := multilang.Serve(context.Background(), topo, os.Stdin, os.Stdout); err != nil {
			log.Fatal(err) // Storm sees the process exit and restarts the worker
		}
		return
	}
	if err := run(topo, t, *duration, *progress, *metrics, *ui); err != nil {
		log.Fatal(err)
	}
}

func run(topo *dsl.Topology, t *tally, duration time.Duration, progress bool, metrics, ui string) error {
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
	if ui != "" {
		srv, err := observe.Listen(ui, topo, running)
		if err != nil {
			return errors.Join(err, running.Stop(context.Background()))
		}
		defer srv.Close()
		fmt.Fprintf(os.Stderr, "status page at http://%s/\n", srv.Addr)
	}
	select {
	case <-time.After(duration):
	case <-ctx.Done():
	case <-running.Done():
		return running.Wait()
	}
	stopProgress() // the summary is the last line
	stats := running.Stats()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer stopCancel()
	if err := running.Stop(stopCtx); err != nil {
		return err
	}
	elapsed := time.Since(start)
	for _, c := range t.top(10) {
		fmt.Printf("%-10s %d\n", c.Word, c.N)
	}
	emitted := stats.Components["sentences"].Emitted
	words := stats.Components["split"].Emitted
	fmt.Printf("summary: emitted=%d words=%d counted=%d elapsed=%s rate=%.0f/s\n",
		emitted, words, stats.Components["count"].Executed, elapsed.Round(time.Millisecond), float64(emitted)/elapsed.Seconds())
	return nil
}
