package specs_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// Issue 31: exactly-once from source through state to sink. These specs pin
// the runtime's part: sources must be in the cut, sinks are waited for or
// commit with the checkpoint, and a failed message reaches its source.

// Counted is one output of the stateful count: the word's count after one
// more of it. Every (Text, N) pair is produced once per increment, so an
// output that is lost or doubled shows as a missing or repeated pair.
type Counted struct {
	Text string
	N    int
}

// countAndEmit counts a word and emits its new count.
func countAndEmit(in Word, st *dsl.State[string, int], out dsl.Emitter) error {
	n, _ := st.Get(in.Text)
	st.Put(in.Text, n+1)
	out.Emit(Counted{Text: in.Text, N: n + 1})
	return nil
}

// countingPipeline builds log -> split -> count -> sink, the count emitting
// each new count to the sink on an anchored edge.
func countingPipeline(name string, log *sheltertest.Log[Line], conf dsl.Conf, sink *dsl.BoltSpec) *dsl.Topology {
	b := dsl.New(name, conf)
	b.Streams(Line{}, Word{}, Counted{})
	src := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error { emitWords(in, out); return nil }))
	count := b.Bolt("count", dsl.Stateful(countAndEmit), dsl.Parallelism(statecrash.Tasks))
	out := b.Bolt("sink", sink)
	b.Anchored(src, split, dsl.Shuffle[Line]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	b.Anchored(count, out, dsl.Shuffle[Counted]())
	return Build(b)
}

// expectedOutputs is every (word, count) pair a count of lines produces.
func expectedOutputs(want map[string]int) map[Counted]int {
	out := map[Counted]int{}
	for w, n := range want {
		for i := 1; i <= n; i++ {
			out[Counted{Text: w, N: i}] = 1
		}
	}
	return out
}

// outputSet records what a sink delivered, by pair, with how often.
type outputSet struct {
	mu  sync.Mutex
	got map[Counted]int
}

func newOutputSet() *outputSet { return &outputSet{got: map[Counted]int{}} }

func (o *outputSet) add(c Counted) {
	o.mu.Lock()
	o.got[c]++
	o.mu.Unlock()
}

func (o *outputSet) snapshot() map[Counted]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[Counted]int, len(o.got))
	for k, v := range o.got {
		out[k] = v
	}
	return out
}

// lostFrom lists the expected pairs o never delivered.
func (o *outputSet) lostFrom(want map[Counted]int) []Counted {
	got := o.snapshot()
	var lost []Counted
	for k := range want {
		if got[k] == 0 {
			lost = append(lost, k)
		}
	}
	return lost
}

// slowBroker is a user's sink that answers later, on a goroutine of its own,
// as a client's produce callback does: it acks through TaskInfo.Post. It
// refuses (fails) the inputs that arrive while refusing is set, answering
// only once a checkpoint committed after the input came or a while passed,
// whichever is first: a broker that refuses late.
type slowBroker struct {
	info    dsl.TaskInfo
	store   *commitSignal
	out     *outputSet
	refuse  *atomic.Int32 // inputs still to refuse
	pending sync.WaitGroup
}

func (s *slowBroker) Execute(in Counted, input dsl.Tuple, _ dsl.Collector) error {
	refuse := s.refuse.Add(-1) >= 0
	if !refuse {
		s.out.add(in)
		s.info.Post(func(c dsl.Collector) { c.Ack(input) })
		return nil
	}
	committed := s.store.next() // the next commit after this input came
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		timer := time.NewTimer(50 * time.Millisecond)
		defer timer.Stop()
		select {
		case <-committed: // the old runtime committed past this input: the answer now loses it
		case <-timer.C: // the runtime waits for the answer: it comes late
		}
		s.info.Post(func(c dsl.Collector) { c.Fail(input) })
	}()
	return nil
}

// commitSignal is a store that tells when a commit succeeded.
type commitSignal struct {
	state.Store
	mu        sync.Mutex
	committed chan struct{} // closed at the next successful commit
}

func newCommitSignal(s state.Store) *commitSignal {
	return &commitSignal{Store: s, committed: make(chan struct{})}
}

// next returns a channel closed when the next commit succeeds.
func (c *commitSignal) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed
}

func (c *commitSignal) Commit(ctx context.Context, cp state.Checkpoint) error {
	if err := c.Store.Commit(ctx, cp); err != nil {
		return err
	}
	c.mu.Lock()
	close(c.committed)
	c.committed = make(chan struct{})
	c.mu.Unlock()
	return nil
}

// walSink is a user's exactly-once sink built on the two-phase hooks: it
// keeps the outputs of the inputs since the last barrier, hands them to the
// checkpoint in PrepareCheckpoint, publishes them under ids derived from
// the checkpoint once it committed, and publishes the last committed
// checkpoint's again in RecoverCheckpoint (the target ignores ids it has).
type walSink struct {
	kept      []Counted
	prepared  map[uint64]walBatch // by checkpoint, until it commits
	published *publishedLog
	calls     *callLog
	task      int
}

// publishedLog is the sink's target: it stores each id once, as a server
// that de-duplicates by message id does.
type publishedLog struct {
	mu   sync.Mutex
	byID map[string]Counted
}

func (p *publishedLog) publish(id string, c Counted) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.byID[id]; !dup {
		p.byID[id] = c
	}
}

func (p *publishedLog) outputs() map[Counted]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[Counted]int{}
	for _, c := range p.byID {
		out[c]++
	}
	return out
}

// callLog records the order of the two-phase calls.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(format string, args ...any) {
	l.mu.Lock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

type walBatch struct {
	ID   uint64
	Outs []Counted
}

func (w *walSink) Execute(in Counted, input dsl.Tuple, c dsl.Collector) error {
	w.kept = append(w.kept, in)
	c.Ack(input) // kept: the checkpoint carries it from here
	return nil
}

func (w *walSink) RecoverCheckpoint(prepared []byte) error {
	w.calls.add("recover %d", len(prepared))
	if prepared == nil {
		return nil
	}
	var b walBatch
	if err := json.Unmarshal(prepared, &b); err != nil {
		return err
	}
	w.publish(b)
	return nil
}

func (w *walSink) PrepareCheckpoint(id uint64) ([]byte, error) {
	w.calls.add("prepare %d", id)
	batch := walBatch{ID: id, Outs: w.kept}
	w.prepared[id] = batch
	w.kept = nil
	return json.Marshal(batch)
}

func (w *walSink) CommitCheckpoint(id uint64) error {
	w.calls.add("commit %d", id)
	w.publish(w.prepared[id])
	delete(w.prepared, id)
	return nil
}

func (w *walSink) publish(b walBatch) {
	for i, c := range b.Outs {
		w.published.publish(fmt.Sprintf("%d/%d/%d", w.task, b.ID, i), c)
	}
}

var _ = Describe("Exactly-once end to end", Label("state"), func() {
	It("Build refuses a reliable source without positions in a topology with state, unless it is taken out of the checkpoints", Label("edges", "validation"), func() {
		lines, _ := stateLines(5)
		build := func(opts ...dsl.Option) error {
			b := dsl.New("unpositioned", nil)
			b.Streams(Line{}, Word{})
			src := b.Spout("lines", sheltertest.NewSource(lines...).Spout(), opts...)
			split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error { emitWords(in, out); return nil }))
			count := b.Bolt("count", dsl.Stateful(countWord), dsl.OutsideCheckpoint())
			b.Anchored(src, split, dsl.Shuffle[Line]())
			b.Anchored(split, count, dsl.Shuffle[Word]())
			_, err := b.Build()
			return err
		}
		err := build()
		Expect(err).To(MatchError(ContainSubstring(`spout "lines": the topology has state but the spout's reliable has no positions`)))
		Expect(err).To(MatchError(ContainSubstring("dsl.OutsideCheckpoint()")))
		Expect(err).To(MatchError(ContainSubstring(`bolt "count" is declared dsl.OutsideCheckpoint(); only a spout`)), "every problem is listed")
		err = build(dsl.OutsideCheckpoint())
		Expect(err).To(MatchError(ContainSubstring(`bolt "count"`)))
		Expect(err).NotTo(MatchError(ContainSubstring(`spout "lines"`)), "the spout opted in to at-least-once")
	})

	It("a source whose type Build cannot see fails its task at start when it has no positions", Label("edges"), func() {
		lines, _ := stateLines(5)
		b := dsl.New("hidden-source", nil)
		b.Streams(Line{}, Word{})
		var hidden dsl.Source[int, Line] = &onceSource{values: lines}
		src := b.Spout("lines", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Line] { return hidden }))
		count := b.Bolt("count", dsl.Stateful(func(Line, *dsl.State[string, int], dsl.Emitter) error { return nil }))
		b.Anchored(src, count, dsl.Shuffle[Line]())
		topo := Build(b)
		events := newEventLog()
		r, err := supervision.Run(context.Background(), topo, supervision.WithStore(state.NewMemory()),
			supervision.WithoutRestarts(), supervision.WithEvents(events.record), supervision.WithLogger(zap.NewNop()))
		if err == nil {
			Eventually(r.Done()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
			err = r.Wait()
		}
		Expect(err).To(MatchError(ContainSubstring(`spout "lines": the topology has state but the spout's source has no positions`)))
	})

	It("TaskInfo.Checkpointed tells a task whether the checkpoints keep its position", func() {
		lines, _ := stateLines(5)
		var mu sync.Mutex
		seen := map[string]bool{}
		b := dsl.New("checkpointed", nil)
		b.Streams(Line{}, Word{})
		log := sheltertest.NewLog(lines...)
		logSpec := log.Spout()
		in := b.Spout("lines", logSpec)
		out := b.Spout("outside", dsl.ReliableFrom(func(info dsl.TaskInfo) *onceSource {
			mu.Lock()
			seen["outside"] = info.Checkpointed
			mu.Unlock()
			return &onceSource{}
		}), dsl.OutsideCheckpoint())
		count := b.Bolt("count", dsl.Manual(func(info dsl.TaskInfo) sheltertest.ManualFunc[Line] {
			mu.Lock()
			seen["count"] = info.Checkpointed
			mu.Unlock()
			return func(_ Line, t dsl.Tuple, c dsl.Collector) error { c.Ack(t); return nil }
		}))
		st := b.Bolt("state", dsl.Stateful(func(Line, *dsl.State[string, int], dsl.Emitter) error { return nil }))
		b.Anchored(in, count, dsl.Shuffle[Line]())
		b.Anchored(out, st, dsl.Shuffle[Line]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithStore(state.NewMemory()))
		Expect(log.WaitAcked(kitCtx())).To(Succeed())
		Stop(r)
		mu.Lock()
		defer mu.Unlock()
		Expect(seen).To(Equal(map[string]bool{"outside": false, "count": true}))
	})

	It("a sink that answers late is waited for: a refused output rolls back before its checkpoint commits, and nothing is lost", Label("edges"), func() {
		lines, want := stateLines(400)
		log := sheltertest.NewLog(lines...)
		store := newCommitSignal(state.NewMemory())
		out := newOutputSet()
		var refuse atomic.Int32
		refuse.Store(-1 << 30)
		var brokers []*slowBroker
		var mu sync.Mutex
		sink := dsl.Manual(func(info dsl.TaskInfo) *slowBroker {
			s := &slowBroker{info: info, store: store, out: out, refuse: &refuse}
			mu.Lock()
			brokers = append(brokers, s)
			mu.Unlock()
			return s
		})
		conf := dsl.Conf{dsl.MaxSpoutPending: 16, dsl.CheckpointInterval: 2 * time.Millisecond}
		topo := countingPipeline("late-sink", log, conf, sink)
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithStore(store), fastRestarts)
		// The refusals begin once the first checkpoint committed, so a
		// position past them could be committed.
		Eventually(store.next()).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
		refuse.Store(20)
		Expect(log.WaitDrained(kitCtx())).To(Succeed())
		Stop(r)
		mu.Lock()
		for _, b := range brokers {
			b.pending.Wait()
		}
		mu.Unlock()
		Expect(refuse.Load()).To(BeNumerically("<", 0), "the broker refused outputs")
		Expect(out.lostFrom(expectedOutputs(want))).To(BeEmpty(), "every count reached the sink at least once")
		Expect(storedCounts(store)).To(Equal(want))
	})

	It("a two-phase sink commits its output with the checkpoints: exactly once through rollbacks", Label("edges"), func() {
		lines, want := stateLines(600)
		log := sheltertest.NewLog(lines...)
		store := state.NewMemory()
		published := &publishedLog{byID: map[string]Counted{}}
		calls := &callLog{}
		var failedOnce atomic.Bool
		b := dsl.New("two-phase", dsl.Conf{dsl.MaxSpoutPending: 16, dsl.CheckpointInterval: 2 * time.Millisecond})
		b.Streams(Line{}, Word{}, Counted{})
		src := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
		split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error {
			emitWords(in, out)
			if last, _ := store.Committed(context.Background()); last > 2 && failedOnce.CompareAndSwap(false, true) {
				panic("split cannot go on") // after its words went out: counts and outputs saw them
			}
			return nil
		}))
		count := b.Bolt("count", dsl.Stateful(countAndEmit), dsl.Parallelism(statecrash.Tasks))
		sink := b.Bolt("sink", dsl.Manual(func(info dsl.TaskInfo) *walSink {
			return &walSink{published: published, calls: calls, task: info.Index, prepared: map[uint64]walBatch{}}
		}))
		b.Anchored(src, split, dsl.Shuffle[Line]())
		b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
		b.Anchored(count, sink, dsl.Shuffle[Counted]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithStore(store), fastRestarts)
		Expect(log.WaitDrained(kitCtx())).To(Succeed())
		Stop(r)
		Expect(failedOnce.Load()).To(BeTrue())
		Expect(published.outputs()).To(Equal(expectedOutputs(want)), "every count published exactly once")
		Expect(storedCounts(store)).To(Equal(want))

		got := calls.all()
		Expect(got[0]).To(Equal("recover 0"), "the first incarnation recovers nothing")
		recovers := 0
		last := ""
		for _, c := range got {
			if c[:7] == "recover" {
				recovers++
				if recovers > 1 {
					Expect(c).NotTo(Equal("recover 0"), "a restart recovers what the last commit prepared")
				}
			}
			if c[:6] == "commit" {
				var id uint64
				fmt.Sscanf(c, "commit %d", &id)
				Expect(last).To(Equal(fmt.Sprintf("prepare %d", id)), "a commit follows its own prepare")
			}
			last = c
		}
		Expect(recovers).To(BeNumerically(">=", 2), "the rollback recovered")
	})

	It("a failed message reaches its source's Nack before the topology rolls back", Label("edges"), func() {
		lines, want := stateLines(300)
		src := sheltertest.NewLog(lines...)
		store := state.NewMemory()
		var failedOnce atomic.Bool
		b := dsl.New("nack-first", dsl.Conf{dsl.MaxSpoutPending: 16, dsl.CheckpointInterval: 2 * time.Millisecond})
		b.Streams(Line{}, Word{})
		in := b.Spout("lines", src.Spout())
		hole := b.Bolt("hole", dsl.Manual(func(dsl.TaskInfo) sheltertest.ManualFunc[Line] {
			return func(l Line, t dsl.Tuple, c dsl.Collector) error {
				if l == lines[100] && failedOnce.CompareAndSwap(false, true) {
					return fmt.Errorf("line 100 refused") // fails the input: a rollback
				}
				c.Ack(t)
				return nil
			}
		}))
		split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error { emitWords(in, out); return nil }))
		count := b.Bolt("count", dsl.Stateful(countWord), dsl.Parallelism(statecrash.Tasks))
		b.Anchored(in, hole, dsl.Shuffle[Line]())
		b.Anchored(in, split, dsl.Shuffle[Line]())
		b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithStore(store), fastRestarts)
		Expect(src.WaitDrained(kitCtx())).To(Succeed())
		Stop(r)
		var failed []Line // lines repeat: the hole fails the first of lines[100]'s equals
		for i := range lines {
			for range src.Failures(i) {
				failed = append(failed, lines[i])
			}
		}
		Expect(failed).To(Equal([]Line{lines[100]}), "the source heard which message failed, once, and of no other")
		Expect(storedCounts(store)).To(Equal(want))
	})
})

// onceSource is a reliable source without positions.
type onceSource struct {
	values []Line
	next   int
}

func (s *onceSource) Next() (int, Line, bool) {
	if s.next >= len(s.values) {
		return 0, Line{}, false
	}
	s.next++
	return s.next - 1, s.values[s.next-1], true
}
func (s *onceSource) Ack(int)  {}
func (s *onceSource) Nack(int) {}
