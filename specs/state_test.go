package specs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
	"go.uber.org/zap"
)

// Issue 23: stateful bolts whose checkpoints are consistent cuts of bolt
// state and source positions, so the state counts every message once.

type Line struct{ Text string }
type Word struct{ Text string }

// words returns lines of words and how often each word occurs.
func stateLines(n int) ([]Line, map[string]int) {
	vocab := []string{"apple", "pear", "fig", "plum", "kiwi", "lime", "date"}
	lines, want := make([]Line, n), map[string]int{}
	for i := range lines {
		ws := []string{vocab[i%len(vocab)], vocab[(i*3+1)%len(vocab)], vocab[(i*5+2)%len(vocab)]}
		for _, w := range ws {
			want[w]++
		}
		lines[i] = Line{Text: strings.Join(ws, " ")}
	}
	return lines, want
}

// emitWords emits each word of a line.
func emitWords(in Line, out dsl.Emitter) {
	for _, w := range strings.Fields(in.Text) {
		out.Emit(Word{Text: w})
	}
}

// countWord is the stateful count's handler: one more of the word.
func countWord(in Word, st *dsl.State[string, int], _ dsl.Emitter) error {
	n, _ := st.Get(in.Text)
	st.Put(in.Text, n+1)
	return nil
}

// statefulCount builds log -> split -> count, count keeping a State of
// word counts; counted sees every execute.
func statefulCount(name string, log *sheltertest.Log[Line], conf dsl.Conf, counted func(task int, st *dsl.State[string, int])) *dsl.Topology {
	b := dsl.New(name, conf)
	b.Streams(Line{}, Word{})
	lines := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error {
		emitWords(in, out)
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(in Word, st *dsl.State[string, int], out dsl.Emitter) error {
		if counted != nil {
			counted(0, st)
		}
		return countWord(in, st, out)
	}), dsl.Parallelism(statecrash.Tasks)) // storedCounts reads that many tasks
	b.Anchored(lines, split, dsl.Shuffle[Line]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	return Build(b)
}

// storedCounts reads the committed word counts of the count tasks (the
// crash driver's reader: the same spaces).
func storedCounts(store state.Store) map[string]int {
	got, err := statecrash.Counts(context.Background(), store)
	Expect(err).NotTo(HaveOccurred())
	return got
}

// countsOf returns how often each word occurs in the lines whose index
// pick accepts.
func countsOf(lines []Line, pick func(i int) bool) map[string]int {
	want := map[string]int{}
	for i, l := range lines {
		if pick(i) {
			for _, w := range strings.Fields(l.Text) {
				want[w]++
			}
		}
	}
	return want
}

// failingStore fails the commit of checkpoint fail (once).
type failingStore struct {
	state.Store
	fail   uint64
	failed atomic.Bool
}

func (f *failingStore) Commit(ctx context.Context, c state.Checkpoint) error {
	if c.ID == f.fail && f.failed.CompareAndSwap(false, true) {
		return errors.New("disk full")
	}
	return f.Store.Commit(ctx, c)
}

// blockingStore's Commit never returns until release closes, whatever its
// ctx says: a store that hangs.
type blockingStore struct {
	state.Store
	entered chan struct{} // closed at the first Commit
	once    sync.Once
	release chan struct{}
}

func (b *blockingStore) Commit(ctx context.Context, c state.Checkpoint) error {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return errors.New("released")
}

// fastRestarts restarts at once, so a rollback costs no real time.
var fastRestarts = Restarts(time.Millisecond, time.Millisecond, 10)

var _ = Describe("Stateful bolts", Label("state"), func() {
	It("count every word once, and the spout hears of a message only when its checkpoint commits", func() {
		lines, want := stateLines(200)
		log := sheltertest.NewLog(lines...)
		store := state.NewMemory()
		var executed atomic.Int64
		clk := NewManualClock()
		topo := statefulCount("held-acks", log, nil, func(int, *dsl.State[string, int]) { executed.Add(1) })
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithStore(store), clk.Option())
		Eventually(executed.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeEquivalentTo(600))
		Consistently(log.Acked).WithTimeout(50*time.Millisecond).Should(BeZero(), "no checkpoint committed yet")
		Expect(store.Committed(context.Background())).To(BeZero())

		clk.Advance(time.Second) // the checkpoint interval: one checkpoint covers everything
		Expect(log.WaitAcked(kitCtx())).To(Succeed())
		Expect(store.Committed(context.Background())).To(BeEquivalentTo(1))
		Expect(storedCounts(store)).To(Equal(want))
		for _, t := range r.Stats().Tasks {
			if t.Component == "count" || t.Component == "lines" {
				Expect(t.Checkpoint).To(BeEquivalentTo(1), "task %d of %q", t.Task, t.Component)
			}
			if t.Component == "count" {
				Expect(t.CheckpointBytes).To(BeNumerically(">", 0), "task %d stored its counts", t.Task)
			}
		}
	})

	It("a stop takes a last checkpoint that covers every message handed out", func() {
		lines, _ := stateLines(2000)
		log := sheltertest.NewLog(lines...)
		store := state.NewMemory()
		var executed atomic.Int64
		topo := statefulCount("stop-mid-stream", log, dsl.Conf{dsl.MaxSpoutPending: 16}, func(int, *dsl.State[string, int]) { executed.Add(1) })
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithStore(store), NewManualClock().Option())
		// Two spout tasks, 16 lines each in flight, 3 words a line: without a
		// checkpoint no ack goes out, so the spouts stop there.
		Eventually(executed.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeEquivalentTo(2 * 16 * 3))
		Consistently(executed.Load).WithTimeout(20 * time.Millisecond).Should(BeEquivalentTo(96))
		Stop(r) // no clock moved: only the stop's checkpoints commit
		handed := func(i int) bool { return log.Handouts(i) > 0 }
		Expect(storedCounts(store)).To(Equal(countsOf(lines, handed)))
		Expect(log.Acked()).To(Equal(len(countsOfIndexes(len(lines), handed))), "every message handed out is acked, once committed")
	})

	It("a topology started again on the same store resumes from its positions and state", func() {
		lines, want := stateLines(3000)
		store := state.NewMemory()
		first := sheltertest.NewLog(lines...)
		var executed atomic.Int64
		conf := dsl.Conf{dsl.MaxSpoutPending: 16, dsl.CheckpointInterval: 5 * time.Millisecond}
		r := sheltertest.Start(GinkgoTB(), statefulCount("resume", first, conf, func(int, *dsl.State[string, int]) { executed.Add(1) }), supervision.WithStore(store))
		Eventually(executed.Load).WithTimeout(Scaled(10 * time.Second)).Should(BeNumerically(">", 1000))
		Stop(r)
		Expect(first.Acked()).To(BeNumerically("<", len(lines)), "the first run stopped mid-stream")

		second := sheltertest.NewLog(lines...) // a new process: the log knows nothing
		r = sheltertest.Start(GinkgoTB(), statefulCount("resume", second, conf, nil), supervision.WithStore(store))
		Expect(second.WaitDrained(kitCtx())).To(Succeed())
		Stop(r)
		Expect(storedCounts(store)).To(Equal(want))
		Expect(second.Rewinds()).To(Equal(2), "each spout task rewound to its position")
		Expect(second.Handouts(0)).To(BeZero(), "nothing before the positions is read again")
	})

	It("a failed input rolls the topology back to its last checkpoint, and the state still counts every word once", Label("edges"), func() {
		lines, want := stateLines(1000)
		log := sheltertest.NewLog(lines...)
		store := state.NewMemory()
		var failedOnce atomic.Bool
		b := dsl.New("rollback", dsl.Conf{dsl.MaxSpoutPending: 32, dsl.CheckpointInterval: 5 * time.Millisecond})
		b.Streams(Line{}, Word{})
		src := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
		split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error {
			emitWords(in, out)
			if last, _ := store.Committed(context.Background()); last > 1 && failedOnce.CompareAndSwap(false, true) {
				panic("split cannot go on") // after its words went out: the counts saw them
			}
			return nil
		}))
		count := b.Bolt("count", dsl.Stateful(countWord), dsl.Parallelism(statecrash.Tasks))
		b.Anchored(src, split, dsl.Shuffle[Line]())
		b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
		events := newEventLog()
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithStore(store), fastRestarts, supervision.WithEvents(events.record))
		Expect(log.WaitDrained(kitCtx())).To(Succeed())
		Stop(r)
		Expect(failedOnce.Load()).To(BeTrue())
		Expect(storedCounts(store)).To(Equal(want))
		Expect(log.Rewinds()).To(BeNumerically(">=", 2))
		Expect(events.errs()).To(ContainElement(MatchError(ContainSubstring("rolling back to the last checkpoint"))))
	})

	DescribeTable("a rollback keeps every count exact", Label("edges"),
		func(name string, interval time.Duration, fail func(committed uint64) bool, failInput bool, expectErr string) {
			lines, want := stateLines(800)
			log := sheltertest.NewLog(lines...)
			store := state.NewMemory()
			var failedOnce atomic.Bool
			events := newEventLog()
			b := dsl.New(name, dsl.Conf{dsl.MaxSpoutPending: 32, dsl.CheckpointInterval: interval,
				dsl.MessageTimeout: 200 * time.Millisecond})
			b.Streams(Line{}, Word{})
			src := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
			hole := b.Bolt("hole", dsl.Manual(func(dsl.TaskInfo) sheltertest.ManualFunc[Line] {
				return func(_ Line, in dsl.Tuple, c dsl.Collector) error {
					if last, _ := store.Committed(context.Background()); fail(last) && failedOnce.CompareAndSwap(false, true) {
						if failInput {
							return errors.New("hole refuses it") // fails the input
						}
						return nil // never acked: its tree times out
					}
					c.Ack(in)
					return nil
				}
			}))
			split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error { emitWords(in, out); return nil }))
			count := b.Bolt("count", dsl.Stateful(countWord), dsl.Parallelism(statecrash.Tasks))
			b.Anchored(src, hole, dsl.Shuffle[Line]())
			b.Anchored(src, split, dsl.Shuffle[Line]())
			b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
			r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithStore(store), fastRestarts,
				supervision.WithEvents(events.record))
			Expect(log.WaitDrained(kitCtx())).To(Succeed())
			Stop(r)
			Expect(failedOnce.Load()).To(BeTrue())
			Expect(storedCounts(store)).To(Equal(want))
			Expect(events.errs()).To(ContainElement(MatchError(ContainSubstring(expectErr))))
		},
		Entry("a tree that times out after a commit", "timeout-rollback", 5*time.Millisecond,
			func(c uint64) bool { return c > 1 }, false, "failed or timed out in a topology with state: rolling back"),
		Entry("an input failed before the first commit", "early-rollback", 100*time.Millisecond,
			func(c uint64) bool { return c == 0 }, true, "in a topology with state: rolling back to the last checkpoint"),
	)

	It("a store that fails a commit restarts the topology from the last committed checkpoint", Label("edges"), func() {
		lines, want := stateLines(1500)
		log := sheltertest.NewLog(lines...)
		store := &failingStore{Store: state.NewMemory(), fail: 3}
		conf := dsl.Conf{dsl.MaxSpoutPending: 16, dsl.CheckpointInterval: 2 * time.Millisecond}
		r := sheltertest.Start(GinkgoTB(), statefulCount("store-fails", log, conf, nil), supervision.WithStore(store), fastRestarts)
		Expect(log.WaitDrained(kitCtx())).To(Succeed())
		Stop(r)
		Expect(store.failed.Load()).To(BeTrue(), "the third commit failed")
		Expect(r.Stats().Restarts).To(BeNumerically(">=", 1))
		Expect(storedCounts(store)).To(Equal(want))
	})

	It("a store that never returns from a commit does not hold the stop", Label("edges"), func() {
		lines, _ := stateLines(200)
		store := &blockingStore{Store: state.NewMemory(), entered: make(chan struct{}), release: make(chan struct{})}
		defer close(store.release) // lets the abandoned commit's goroutine end before the leak check
		conf := dsl.Conf{dsl.CheckpointInterval: 5 * time.Millisecond}
		r, err := supervision.Run(context.Background(), statefulCount("hung-store", sheltertest.NewLog(lines...), conf, nil),
			supervision.WithStore(store), supervision.WithDrainTimeout(50*time.Millisecond), supervision.WithLogger(zap.NewNop()))
		Expect(err).NotTo(HaveOccurred())
		Eventually(store.entered).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
		stopped := make(chan error, 1)
		go func() { stopped <- r.Stop(context.Background()) }()
		// The drain (50 ms) and the grace (a second at least) bound it.
		Eventually(stopped).WithTimeout(Scaled(10 * time.Second)).Should(Receive())
	})

	It("refuses to start on a store written with another parallelism, naming the component", Label("edges"), func() {
		lines, _ := stateLines(50)
		store := state.NewMemory()
		log := sheltertest.NewLog(lines...)
		r := sheltertest.Start(GinkgoTB(), statefulCount("reshaped", log, nil, nil), supervision.WithStore(store))
		Stop(r) // its stop commits a checkpoint with the layout
		Expect(store.Committed(context.Background())).To(BeNumerically(">", 0))

		b := dsl.New("reshaped", nil)
		b.Streams(Line{}, Word{})
		src := b.Spout("lines", sheltertest.NewLog(lines...).Spout(), dsl.Parallelism(2))
		split := b.Bolt("split", dsl.AutoAck(func(Line, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
		count := b.Bolt("count", dsl.Stateful(func(Word, *dsl.State[string, int], dsl.Emitter) error { return nil }), dsl.Parallelism(3))
		b.Anchored(src, split, dsl.Shuffle[Line]())
		b.Anchored(split, count, dsl.Shuffle[Word]())
		_, err := supervision.Run(context.Background(), Build(b), supervision.WithStore(store), supervision.WithLogger(zap.NewNop()))
		Expect(err).To(MatchError(ContainSubstring(`component "count" has parallelism 3, but the store's checkpoints were taken with 2`)))
	})

	It("refuses to start without a store", Label("edges"), func() {
		lines, _ := stateLines(5)
		_, err := supervision.Run(context.Background(), statefulCount("storeless", sheltertest.NewLog(lines...), nil, nil), supervision.WithLogger(zap.NewNop()))
		Expect(err).To(MatchError(ContainSubstring("needs a store")))
		Expect(err).To(MatchError(ContainSubstring("supervision.WithStore")))
		Expect(err).To(MatchError(supervision.ErrNoStore), "a missing store is testable with errors.Is")
	})

	It("Build warns that max spout pending throttles a topology with state", Label("validation"), func() {
		lines, _ := stateLines(5)
		topo := statefulCount("throttled", sheltertest.NewLog(lines...), nil, nil)
		Expect(topo.Warnings).To(ContainElement(ContainSubstring(`spout "lines": the topology has stateful bolts, whose inputs are acked when a checkpoint commits, so each task completes at most "topology.max.spout.pending" (128) messages per "topology.state.checkpoint.interval.ms" (1s): 128 messages/s`)))
		roomy := statefulCount("roomy", sheltertest.NewLog(lines...), dsl.Conf{dsl.MaxSpoutPending: 10000}, nil)
		Expect(roomy.Warnings).To(BeEmpty())
	})

	It("Build lists every problem of a topology whose state could not be exactly-once", Label("validation"), func() {
		b := dsl.New("bad-state", dsl.Conf{dsl.MessageTimeout: time.Second, dsl.CheckpointInterval: 800 * time.Millisecond})
		b.Streams(Line{}, Word{})
		src := b.Spout("lines", dsl.ReliableFrom(func(dsl.TaskInfo) *halfPositioned { return &halfPositioned{} }))
		win := b.Bolt("window", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Line], dsl.Emitter) error {
			return func(dsl.Window[Line], dsl.Emitter) error { return nil }
		}, dsl.WindowSpec[Line]{Count: 10}))
		count := b.Bolt("count", dsl.Stateful(func(Word, *dsl.State[string, int], dsl.Emitter) error { return nil }),
			dsl.WithConf(dsl.Conf{dsl.CheckpointInterval: 100 * time.Millisecond}))
		b.Anchored(src, win, dsl.Shuffle[Line]())
		b.Anchored(win, count, dsl.Shuffle[Word]())
		_, err := b.Build()
		var v *dsl.ValidationError
		Expect(errors.As(err, &v)).To(BeTrue())
		Expect(v.Problems).To(ContainElements(
			ContainSubstring(`"topology.state.checkpoint.interval.ms" is 800ms but "topology.message.timeout.secs" is 1s`),
			ContainSubstring(`component "count": conf "topology.state.checkpoint.interval.ms" is the topology's`),
			ContainSubstring(`spout "lines": its source has only one of Position() []byte and Rewind([]byte) error`),
			ContainSubstring(`stateful bolt "count" is fed by window "window"`),
		))
	})
})

// halfPositioned has a Position and no Rewind: Build says so.
type halfPositioned struct{}

func (*halfPositioned) Next() (int, Line, bool) { return 0, Line{}, false }
func (*halfPositioned) Ack(int)                 {}
func (*halfPositioned) Nack(int)                {}
func (*halfPositioned) Position() []byte        { return nil }

func countsOfIndexes(n int, pick func(int) bool) []int {
	var out []int
	for i := 0; i < n; i++ {
		if pick(i) {
			out = append(out, i)
		}
	}
	return out
}
