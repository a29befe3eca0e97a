// Command trending prints the top words of a sliding window: sentences ->
// split -> trending (a windowed bolt: the last -window of words, every -slide)
// -> print. The window keeps its counts up to date from each call's new and
// expired words rather than recounting the whole window. It stops after
// -duration and ends with a summary line, however the run ends (a failed
// topology included: it then exits 1 after the summary). -status
// 127.0.0.1:8080 serves the status page while it runs.
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
	"sync/atomic"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/samples/internal/corpus"
	"github.com/goshelter/goshelter/supervision"
)

type (
	Sentence = corpus.Sentence
	Word     = corpus.Word
)

// Trend is one window's result: its top words, most frequent first.
type Trend struct {
	Start, End time.Time
	Words      int // in the window
	Top        []Count
}

// Count is a word and how often it occurs in the window.
type Count struct {
	Word string
	N    int
}

// counter is the windowed bolt's state: word counts of the current window,
// kept from each call's New and Expired words.
type counter struct {
	counts map[string]int
	top    int
}

func (c *counter) window(w dsl.Window[Word], out dsl.Emitter) error {
	for _, word := range w.New {
		c.counts[word.Text]++
	}
	for _, word := range w.Expired {
		if c.counts[word.Text]--; c.counts[word.Text] == 0 {
			delete(c.counts, word.Text)
		}
	}
	top := make([]Count, 0, len(c.counts))
	for word, n := range c.counts {
		top = append(top, Count{word, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].N > top[j].N || (top[i].N == top[j].N && top[i].Word < top[j].Word) })
	out.Emit(Trend{Start: w.Start, End: w.End, Words: len(w.Tuples), Top: top[:min(c.top, len(top))]})
	return nil
}

// paced returns a sentence source that emits at most rate sentences a second.
func paced(rate float64, emitted *atomic.Int64) func() (Sentence, bool) {
	start := time.Now()
	n := 0
	return func() (Sentence, bool) {
		if float64(n) >= rate*time.Since(start).Seconds() {
			return Sentence{}, false // ahead: the spout backs off by its wait
		}
		n++
		emitted.Add(1)
		return Sentence{Text: corpus.Line(n)}, true
	}
}

// stats are what the summary reports; the bolts update them.
type stats struct {
	sentences, words, windows atomic.Int64
	last                      atomic.Value // the latest Trend
}

func topology(s *stats, rate float64, length, slide time.Duration, top int) (*dsl.Topology, error) {
	b := dsl.New("trending", dsl.Conf{dsl.SpoutWait: time.Millisecond})
	b.Streams(Word{}, Trend{})
	sentences := b.Spout("sentences", dsl.Unreliable(paced(rate, &s.sentences)))
	split := b.Bolt("split", dsl.AutoAck(func(in Sentence, out dsl.Emitter) error {
		for _, w := range strings.Fields(in.Text) {
			out.Emit(Word{Text: w})
			s.words.Add(1) // counted here: a failed topology has no stats left to read
		}
		return nil
	}), dsl.Parallelism(2))
	trending := b.Bolt("trending", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Word], dsl.Emitter) error {
		c := &counter{counts: map[string]int{}, top: top}
		return c.window
	}, dsl.WindowSpec[Word]{Length: length, Slide: slide}))
	printer := b.Bolt("print", dsl.AutoAck(func(t Trend, _ dsl.Emitter) error {
		s.windows.Add(1)
		s.last.Store(t)
		parts := make([]string, len(t.Top))
		for i, c := range t.Top {
			parts[i] = fmt.Sprintf("%s=%d", c.Word, c.N)
		}
		fmt.Printf("%s-%s %6d words, top %s\n", t.Start.Format("15:04:05.000"), t.End.Format("15:04:05.000"), t.Words, strings.Join(parts, " "))
		return nil
	}))
	b.Anchored(sentences, split, dsl.Shuffle[Sentence]())
	// One task sees every word, so its top words are the topology's.
	b.Anchored(split, trending, dsl.Global[Word]())
	b.Anchored(trending, printer, dsl.Shuffle[Trend]())
	return b.Build()
}

func main() {
	duration := flag.Duration("duration", 10*time.Second, "how long to run before stopping")
	rate := flag.Float64("rate", 1000, "sentences per second")
	length := flag.Duration("window", 3*time.Second, "the window's length")
	slide := flag.Duration("slide", time.Second, "how often the window slides")
	top := flag.Int("top", 5, "words shown per window")
	status := cli.StatusFlag()
	cli.Usage("trending", "the top words of a sliding window")
	flag.Parse()
	s := &stats{}
	topo, err := topology(s, *rate, *length, *slide, *top)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(topo, s, *duration, *status); err != nil {
		log.Fatal(err)
	}
}

func run(topo *dsl.Topology, s *stats, duration time.Duration, status string) (err error) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	start := time.Now()
	running, err := supervision.Run(ctx, topo, supervision.WithoutRestarts())
	if err != nil {
		return err
	}
	stopStatus, err := cli.ServeStatus(status, topo, running)
	if err != nil {
		return errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	ended := cli.Await(ctx, running, duration, nil)
	if ended == nil {
		ended = cli.Stop(running, 30*time.Second)
	}
	leader := "none"
	if t, ok := s.last.Load().(Trend); ok && len(t.Top) > 0 {
		leader = t.Top[0].Word
	}
	fmt.Printf("summary: sentences=%d words=%d windows=%d top=%s elapsed=%s\n",
		s.sentences.Load(), s.words.Load(), s.windows.Load(), leader, time.Since(start).Round(time.Millisecond))
	return ended // after the summary: what the run did is worth seeing either way
}
