// Command multilang runs word count with a shell component: sentences (a
// reliable Go spout) -> split (split.py, a Python shell bolt speaking Storm's
// multilang protocol) -> count (a Go bolt). It stops after -duration, prints the
// most frequent words, then a summary line.
//
//	go run ./samples/multilang -duration 5s
//	go run ./samples/multilang -bolt-cmd "node my_split.js" -dir ./my-scripts
//	go run ./samples/multilang -spout-cmd "python3 sentences.py" -dir samples/multilang
//	go run ./samples/multilang -flux ./goshelter-multilang serve   # the Storm Flux definition
//
// # Ending in time
//
// The stop drains what is in flight for at most -drain (default 3 s), then
// closes the shell children (they get 2 s to exit after SIGTERM before they
// are killed). Stop is given -drain plus 5 s, so the sample ends within
// -duration plus -drain plus 5 s (about a second past the drain in practice)
// and prints its summary, even when a shell bolt never acks some of its
// inputs (testdata/lossy_split.py leaves one in four unacked, as Storm's
// tester_bolt.py does at random):
//
//	go run ./samples/multilang -duration 8s -bolt-cmd "python3 lossy_split.py" -dir samples/multilang/testdata
//
// The summary also comes when the topology fails: it runs without restarts,
// so a shell bolt that crashes (testdata/crashing_split.py exits after 200
// inputs) ends it; the sample prints the summary, then the failure, and exits 1:
//
//	go run ./samples/multilang -bolt-cmd "python3 crashing_split.py" -dir samples/multilang/testdata
//
// -status 127.0.0.1:8080 serves the status page while it runs.
//
// The summary counts the sentences the Go spout handed out (replays
// included) and, of them, those acked (fully processed), failed (nacked
// before the stop: a bolt failed them or they timed out) and pending (not
// completed by the end of the drain, so nacked while the stop ran):
// emitted = acked + failed + pending. With a shell spout (-spout-cmd), whose
// child keeps its own counts, the figures are the runtime's as they stood when
// the stop began (pending: the trees open then; emitted also counts the
// child's untracked emits). words is what the count bolt counted, the words
// drained by the stop included.
//
// The shell components follow Storm's starter examples: they emit on the
// "default" stream, one field each (the sentence, the word). The same binary
// serves its Go components to Storm when started as "multilang serve" (see
// docs/STORM.md).
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/samples/internal/corpus"
	"github.com/goshelter/goshelter/samples/internal/serving"
	"github.com/goshelter/goshelter/supervision"
)

//go:embed split.py
var splitPy []byte

//go:embed sentences.py
var sentencesPy []byte

// Sentence and Word are the streams the word-count samples share.
type (
	Sentence = corpus.Sentence
	Word     = corpus.Word
)

// source is the Go sentence spout's per-task state: ids 1, 2, ... with failed
// sentences replayed. Counters are shared by the tasks.
type source struct {
	next     int
	inFlight map[int]string
	replay   []int
	counts   *counters
}

// counters are the Go spout's figures. Once stopping is set, a nack is a
// message the drain could not complete (the stop nacks what is still open).
type counters struct {
	emitted, acked, failed, pending atomic.Int64
	stopping                        atomic.Bool
}

func (s *source) Next() (int, Sentence, bool) {
	var id int
	if n := len(s.replay); n > 0 {
		id, s.replay = s.replay[n-1], s.replay[:n-1]
	} else {
		s.next++
		id = s.next
		s.inFlight[id] = corpus.Line(id)
	}
	s.counts.emitted.Add(1)
	return id, Sentence{Text: s.inFlight[id]}, true
}

func (s *source) Ack(id int) {
	delete(s.inFlight, id)
	s.counts.acked.Add(1)
}

func (s *source) Nack(id int) {
	s.replay = append(s.replay, id)
	if s.counts.stopping.Load() {
		s.counts.pending.Add(1)
		return
	}
	s.counts.failed.Add(1)
}

// tally is the count bolt's result, shared by its tasks.
type tally struct {
	mu     sync.Mutex // mu guards counts
	counts map[string]int
	total  int
}

func (t *tally) add(w string) {
	t.mu.Lock()
	t.counts[w]++
	t.total++
	t.mu.Unlock()
}

func (t *tally) words() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

func (t *tally) top(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	words := make([]string, 0, len(t.counts))
	for w := range t.counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		a, b := t.counts[words[i]], t.counts[words[j]]
		return a > b || (a == b && words[i] < words[j])
	})
	out := make([]string, 0, n)
	for _, w := range words[:min(n, len(words))] {
		out = append(out, fmt.Sprintf("%-10s %d", w, t.counts[w]))
	}
	return out
}

// config is what the flags choose.
type config struct {
	boltCmd, spoutCmd multilang.Command
	shellSpout        bool
	counts            *counters
	tally             *tally
}

func topology(c config) (*dsl.Topology, error) {
	b := dsl.New("multilang-wordcount", dsl.Conf{dsl.MaxSpoutPending: 256})
	b.Streams(Word{})
	spout := dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Sentence] {
		return &source{inFlight: map[int]string{}, counts: c.counts}
	})
	if c.shellSpout {
		spout = multilang.Spout[Sentence](c.spoutCmd)
	}
	sentences := b.Spout("sentences", spout, dsl.Parallelism(2))
	boltCmd := c.boltCmd
	boltCmd.Outputs = map[string]any{"default": Word{}} // Storm's starter examples emit on "default"
	split := b.Bolt("split", multilang.Bolt(boltCmd), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.AutoAck(func(w Word, _ dsl.Emitter) error {
		c.tally.add(w.Text)
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(sentences, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "word"))
	return b.Build()
}

func main() {
	duration := flag.Duration("duration", 10*time.Second, "how long to run before stopping")
	drain := flag.Duration("drain", 3*time.Second, "how long the stop waits for what is in flight before nacking it")
	boltCmd := flag.String("bolt-cmd", "", "command line of the split bolt (default: python3 with the shipped split.py)")
	spoutCmd := flag.String("spout-cmd", "", "command line of a shell sentence spout replacing the Go one")
	dir := flag.String("dir", "", "working directory of the shell components (default: a temporary directory holding the shipped scripts)")
	status := cli.StatusFlag()
	flux := flag.Bool("flux", false, "print the Storm Flux definition that runs this binary (the arguments are its command line) and exit")
	flag.Usage = serving.Usage("multilang", "word count with a Python shell bolt")
	flag.Parse()
	if err := run(*duration, *drain, *boltCmd, *spoutCmd, *dir, *status, *flux, flag.Args()); err != nil {
		log.Fatal(err)
	}
}

func run(duration, drain time.Duration, boltLine, spoutLine, dir, status string, flux bool, args []string) error {
	if drain <= 0 {
		return fmt.Errorf("-drain %s: must be positive", drain)
	}
	scripts, err := os.MkdirTemp("", "goshelter-multilang-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scripts)
	if err := errors.Join(os.WriteFile(filepath.Join(scripts, "split.py"), splitPy, 0o644),
		os.WriteFile(filepath.Join(scripts, "sentences.py"), sentencesPy, 0o644)); err != nil {
		return err
	}
	c := config{boltCmd: multilang.Command{Path: "python3", Args: []string{filepath.Join(scripts, "split.py")}}, counts: &counters{}, tally: &tally{counts: map[string]int{}}}
	if flux || serving.IsServe(args) {
		c.boltCmd.Args = []string{"split.py"} // Storm runs it from the jar's resources
	}
	if boltLine != "" { // split into words as a shell would, with nothing expanded
		c.boltCmd = multilang.Command{Line: boltLine}
	}
	if spoutLine != "" {
		c.shellSpout = true
		c.spoutCmd = multilang.Command{Line: spoutLine}
	}
	if dir == "" {
		dir = scripts
	}
	c.boltCmd.Dir, c.spoutCmd.Dir = dir, dir
	topo, err := topology(c)
	if err != nil {
		return err
	}
	switch {
	case flux:
		return printFlux(topo, spoutLine, args)
	case serving.IsServe(args):
		return serving.Serve(context.Background(), "multilang", topo, args)
	}
	return runLocally(topo, c, duration, drain, status)
}

// printFlux prints the Flux definition; with no command, its Go components
// run "./goshelter-multilang serve" (with the same -spout-cmd, so that the
// served topology is the exported one).
func printFlux(topo *dsl.Topology, spoutLine string, command []string) error {
	if len(command) == 0 {
		command = []string{"./goshelter-multilang", "serve"}
		if spoutLine != "" {
			command = []string{"./goshelter-multilang", "-spout-cmd", spoutLine, "serve"}
		}
	}
	return multilang.Flux(os.Stdout, topo, command...)
}

func runLocally(topo *dsl.Topology, c config, duration, drain time.Duration, status string) (err error) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	start := time.Now()
	running, err := supervision.Run(ctx, topo, supervision.WithoutRestarts(), supervision.WithDrainTimeout(drain))
	if err != nil {
		return err
	}
	stopStatus, err := cli.ServeStatus(status, topo, running)
	if err != nil {
		return errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	// A shell bolt that crashes under WithoutRestarts ends the topology by
	// itself: the summary still comes, then the failure (exit 1).
	ended := cli.Await(ctx, running, duration, nil)
	stats := running.Stats() // before Stop: a stopped topology has no current stats
	c.counts.stopping.Store(true)
	if ended == nil {
		// Stop's deadline is above the drain: it covers the drain, then the
		// children's exit (2 s after SIGTERM at most), with room to spare. A
		// deadline equal to the drain would end Stop before it could stop anything.
		ended = cli.Stop(running, drain+stopAfterDrain)
	}
	elapsed := time.Since(start)
	emitted, acked, failed, pending := c.counts.emitted.Load(), c.counts.acked.Load(), c.counts.failed.Load(), c.counts.pending.Load()
	if c.shellSpout { // the child keeps its own counts: report the runtime's
		s := stats.Components["sentences"]
		emitted, acked, failed, pending = s.Emitted, s.Acked, s.Failed, s.Pending
	}
	fmt.Println(strings.Join(c.tally.top(10), "\n"))
	fmt.Printf("summary: emitted=%d acked=%d failed=%d pending=%d words=%d elapsed=%s rate=%.0f/s\n",
		emitted, acked, failed, pending, c.tally.words(), elapsed.Round(time.Millisecond), float64(acked)/elapsed.Seconds())
	return ended // after the summary: what the sample did is worth seeing either way
}

// stopAfterDrain is how long Stop may take beyond the drain: the shell
// children's grace period (2 s) and then some.
const stopAfterDrain = 5 * time.Second
