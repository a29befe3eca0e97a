package jetstream_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/supervision"
)

// The crash proof (issue 31 item 7, JetStream): a child process runs
// JetStream IN -> split -> stateful count -> JetStream OUT on a Pebble store,
// against the parent's embedded server, and is killed with SIGKILL at 20
// random moments (statecrash.Drive). The count emits "<word>:<its count so
// far>" for every word it counts, so the expected output is known exactly:
// w:1 ... w:n for a word seen n times, each once.
const (
	crashDirEnv = "JETSTREAM_CRASH_DIR" // the child's Pebble directory; set only in the child
	crashURLEnv = "JETSTREAM_CRASH_URL"
	crashLines  = 4000
	// The child's markers, as statecrash.Drive reads them.
	crashRunning = "statecrash: running"
	crashDone    = "statecrash: done"
)

// Counted is what the count bolt emits for the sink.
type Counted struct {
	Word string
	N    int
}

// crashTopology is the child's pipeline.
func crashTopology(url string) (*dsl.Topology, error) {
	b := dsl.New("jetstream-crash", dsl.Conf{dsl.MaxSpoutPending: 256, dsl.CheckpointInterval: 50 * time.Millisecond})
	b.Streams(statecrash.Line{}, statecrash.Word{}, Counted{})
	lines := b.Spout("lines", jetstream.Spout(url, "IN", "crash", func(m jetstream.Message) (statecrash.Line, error) {
		return statecrash.Line{Text: string(m.Data)}, nil
	}), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in statecrash.Line, out dsl.Emitter) error {
		time.Sleep(time.Millisecond) // paced, so each kill finds work in flight
		for _, w := range strings.Fields(in.Text) {
			out.Emit(statecrash.Word{Text: w})
		}
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(in statecrash.Word, st *dsl.State[string, int], out dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		out.Emit(Counted{Word: in.Text, N: n + 1})
		return nil
	}), dsl.Parallelism(statecrash.Tasks))
	sink := b.Bolt("out", jetstream.Sink(url, func(c Counted) (jetstream.Record, error) {
		return jetstream.Record{Subject: "out.counts", Data: fmt.Appendf(nil, "%s:%d", c.Word, c.N)}, nil
	}), dsl.Parallelism(2))
	b.Anchored(lines, split, dsl.Shuffle[statecrash.Line]())
	b.Anchored(split, count, dsl.Fields(func(w statecrash.Word) string { return w.Text }, "Text"))
	b.Anchored(count, sink, dsl.Shuffle[Counted]())
	return b.Build()
}

// crashWords is how many outputs the crash run expects: a word a line.
func crashWords() int {
	n := 0
	for _, c := range statecrash.Want(statecrash.Lines(crashLines)) {
		n += c
	}
	return n
}

// TestJetStreamCrashChild is the child: it runs the pipeline until OUT holds
// every expected output, then stops (its last checkpoint covers the rest)
// and says done.
func TestJetStreamCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by the crash spec only")
	}
	if err := crashChild(dir, os.Getenv(crashURLEnv)); err != nil {
		t.Fatal(err)
	}
}

func crashChild(dir, url string) error {
	store, err := pebble.Open(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	topo, err := crashTopology(url)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := supervision.Run(ctx, topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		return err
	}
	fmt.Println(crashRunning)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	c, err := js.New(nc)
	if err != nil {
		return err
	}
	want := uint64(crashWords())
	for held := uint64(0); held < want; held = stored(ctx, c, "OUT") {
		select {
		case <-r.Done():
			return fmt.Errorf("the topology ended: %w", r.Wait())
		case <-ctx.Done():
			return fmt.Errorf("OUT holds %d of %d outputs: %w", held, want, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := r.Stop(ctx); err != nil {
		return err
	}
	fmt.Println(crashDone)
	return nil
}

// stored is the number of messages stream holds (0 when it cannot be read).
func stored(ctx context.Context, c js.JetStream, stream string) uint64 {
	s, err := c.Stream(ctx, stream)
	if err != nil {
		return 0
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.Msgs
}

// outputs checks the outputs stream holds against those of lines input
// lines: the expected ones missing and the extra ones (duplicates, or
// outputs no input explains).
func outputs(c *client, stream string, lines int) (expected, stored, lost, dup int) {
	GinkgoHelper()
	want := map[string]bool{}
	for w, n := range statecrash.Want(statecrash.Lines(lines)) {
		for i := 1; i <= n; i++ {
			want[fmt.Sprintf("%s:%d", w, i)] = true
		}
	}
	got := map[string]int{}
	out := c.readAll(stream)
	for _, o := range out {
		got[o]++
	}
	for e := range want {
		if got[e] == 0 {
			lost++
		}
	}
	for o, n := range got {
		if want[o] {
			n--
		}
		dup += n
	}
	return len(want), len(out), lost, dup
}

var _ = Describe("JetStream -> stateful count -> JetStream while the server restarts", Label("connectors", "jetstream", "state", "edges"), func() {
	It("stores every expected output once when the server goes away and comes back mid-run", func() {
		const lines = 600
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.stream("OUT", "out.>")
		ctx, cancel := ctxT()
		defer cancel()
		for _, l := range statecrash.Lines(lines) {
			_, err := c.js.Publish(ctx, "in.lines", []byte(l.Text))
			Expect(err).NotTo(HaveOccurred())
		}
		store := state.NewMemory()
		topo, err := crashTopology(b.URL)
		start(topo, err, supervision.WithStore(store))
		Eventually(c.count).WithArguments("OUT").Should(BeNumerically(">=", 300))
		b.restart() // the spout's fetches and the sink's publishes fail meanwhile
		Eventually(c.count).WithArguments("OUT").Should(BeNumerically(">=", 3*lines))
		Consistently(c.count, scaled(300*time.Millisecond)).WithArguments("OUT").Should(BeNumerically("==", 3*lines))
		expected, stored, lost, dup := outputs(c, "OUT", lines)
		fmt.Fprintf(GinkgoWriter, "server restart: expected=%d stored=%d lost=%d duplicated=%d\n", expected, stored, lost, dup)
		Expect(lost).To(BeZero())
		Expect(dup).To(BeZero())
	})
})

var _ = Describe("JetStream -> stateful count -> JetStream killed with SIGKILL", Label("connectors", "jetstream", "state"), func() {
	It("stores every expected output exactly once and counts every word once, over 20 kills", func() {
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.stream("OUT", "out.>") // Duplicates: 10 minutes, beyond the whole run
		pctx, pcancel := ctxT()
		defer pcancel()
		for _, l := range statecrash.Lines(crashLines) {
			_, err := c.js.Publish(pctx, "in.lines", []byte(l.Text))
			Expect(err).NotTo(HaveOccurred())
		}
		dir := GinkgoT().TempDir()
		seed := uint64(time.Now().UnixNano())
		ctx, cancel := context.WithTimeout(context.Background(), scaled(3*time.Minute))
		defer cancel()
		figures, err := statecrash.Drive(ctx, func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^TestJetStreamCrashChild$")
			cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashURLEnv+"="+b.URL)
			cmd.Stderr = GinkgoWriter
			return cmd
		}, 20, 120*time.Millisecond, seed)
		Expect(err).NotTo(HaveOccurred(), "seed %d, %v", seed, figures)

		want := statecrash.Want(statecrash.Lines(crashLines))
		expected, out, lost, dup := outputs(c, "OUT", crashLines)
		store, err := pebble.Open(dir) // the child has exited: the directory is free
		Expect(err).NotTo(HaveOccurred())
		counts, err := statecrash.Counts(ctx, store)
		Expect(store.Close()).To(Succeed())
		Expect(err).NotTo(HaveOccurred())
		figures.Messages = crashLines
		figures.Compare(want, counts)
		report := fmt.Sprintf("JetStream SIGKILL: kills=%d starts=%d lines in=%d outputs expected=%d out=%d lost=%d duplicated=%d; counts lost=%d double-counted=%d (seed %d)",
			figures.Kills, figures.Starts, crashLines, expected, out, lost, dup, figures.Lost, figures.Doubled, seed)
		fmt.Fprintln(GinkgoWriter, report)
		AddReportEntry("jetstream-sigkill", report)
		Expect(figures.Kills).To(Equal(20), "the child must still be running at each kill: %s", report)
		Expect(lost).To(BeZero(), report)
		Expect(dup).To(BeZero(), report)
		Expect(out).To(Equal(expected), report)
		Expect(figures.Lost).To(BeZero(), report)
		Expect(figures.Doubled).To(BeZero(), report)
	})
})
