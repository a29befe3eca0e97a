package specs_test

import (
	"context"
	"errors"
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
)

// Issue 31, item 6: state that cannot be silently corrupted.

// errDeliberate is the failure a spec causes on purpose.
var errDeliberate = errors.New("deliberate failure")

// amnesiacStore is a memory store that can lose everything at once, as a
// Redis without persistence that restarts empty. It can also hold back the
// commits after a given checkpoint, so a spec decides which checkpoint meets
// the empty store: the manual clock's advances may start the next checkpoint
// before the spec empties the store.
type amnesiacStore struct {
	mu sync.Mutex // mu guards Memory, holdAfter and admitted
	*state.Memory
	holdAfter uint64        // commits of later checkpoints wait for admitted (0: none wait)
	admitted  chan struct{} // closed by admit
}

func newAmnesiacStore() *amnesiacStore {
	return &amnesiacStore{Memory: state.NewMemory(), admitted: make(chan struct{})}
}

// hold makes the commits of the checkpoints after id wait until admit, or
// until their context ends (the incarnation stopped).
func (a *amnesiacStore) hold(id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.holdAfter = id
}

// admit lets the held commits through.
func (a *amnesiacStore) admit() { close(a.admitted) }

func (a *amnesiacStore) store() *state.Memory {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Memory
}

// forget empties the store, as a restart without its data does.
func (a *amnesiacStore) forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.Memory.Close()
	a.Memory = state.NewMemory()
}

func (a *amnesiacStore) Committed(ctx context.Context) (uint64, error) {
	return a.store().Committed(ctx)
}

func (a *amnesiacStore) Scan(ctx context.Context, space string, fn func(key, value []byte) error) error {
	return a.store().Scan(ctx, space, fn)
}

func (a *amnesiacStore) Commit(ctx context.Context, c state.Checkpoint) error {
	a.mu.Lock()
	held := a.holdAfter != 0 && c.ID > a.holdAfter
	a.mu.Unlock()
	if held {
		select {
		case <-a.admitted:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return a.store().Commit(ctx, c)
}

func (a *amnesiacStore) Close() error { return a.store().Close() }

// failableCount is log -> split -> count whose count tasks can be failed
// from outside: fail fails the first count task.
func failableCount(name string, log *sheltertest.Log[Line]) (topo *dsl.Topology, fail func(error)) {
	var failer atomic.Value // func(error): the first count task's TaskInfo.Fail
	b := dsl.New(name, dsl.Conf{dsl.MaxSpoutPending: 10000})
	b.Streams(Line{}, Word{})
	lines := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error { emitWords(in, out); return nil }))
	count := b.Bolt("count", dsl.StatefulFrom(func(info dsl.TaskInfo) func(Word, *dsl.State[string, int], dsl.Emitter) error {
		if info.Index == 0 {
			failer.Store(info.Fail)
		}
		return countWord
	}), dsl.Parallelism(statecrash.Tasks))
	b.Anchored(lines, split, dsl.Shuffle[Line]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	return Build(b), func(err error) { failer.Load().(func(error))(err) }
}

var _ = Describe("State integrity", Label("state", "edges"), func() {
	// committedOne advances clk until store committed checkpoint 1: the
	// checkpointer arms its timer after it started, so one advance may come
	// too early.
	committedOne := func(clk *sheltertest.Clock, store state.Store) {
		GinkgoHelper()
		Eventually(func() uint64 {
			clk.Advance(time.Second)
			id, _ := store.Committed(context.Background())
			return id
		}).WithTimeout(Scaled(10 * time.Second)).Should(BeEquivalentTo(1))
	}

	It("a store that loses its checkpoints while the topology runs stops it at the next commit, with no restart", func() {
		lines, _ := stateLines(300)
		log := sheltertest.NewLog(lines...)
		store := newAmnesiacStore()
		clk := NewManualClock()
		events := newEventLog()
		topo, _ := failableCount("amnesia-commit", log)
		store.hold(1) // checkpoint 2 is the first to meet the empty store
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithStore(store), clk.Option(), fastRestarts,
			supervision.WithEvents(events.record))
		committedOne(clk, store)

		store.forget() // the Redis restarted empty
		store.admit()
		Eventually(func() <-chan struct{} {
			clk.Advance(time.Second)
			return r.Done()
		}).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
		err := r.Wait()
		Expect(err).To(MatchError(state.ErrDiverged), "testable with errors.Is")
		Expect(err).To(MatchError(supervision.ErrGaveUp))
		Expect(err).To(MatchError(ContainSubstring("commit checkpoint 2 after 1, committed 0")))
		Expect(r.Stats().Restarts).To(BeZero(), "a restart would start over from nothing")
		Expect(events.errs()).To(ContainElement(MatchError(state.ErrDiverged)))
		Expect(store.Committed(context.Background())).To(BeZero(), "nothing was written on the empty store")
	})

	It("a restart that finds the store behind what the process committed stops the topology", func() {
		lines, _ := stateLines(300)
		log := sheltertest.NewLog(lines...)
		store := newAmnesiacStore()
		clk := NewManualClock()
		topo, fail := failableCount("amnesia-restart", log)
		// The broken incarnation commits nothing after checkpoint 1: a
		// checkpoint 2 that the clock starts before the failure lands waits
		// until the incarnation stops, and is rolled back.
		store.hold(1)
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithStore(store), clk.Option(), fastRestarts)
		committedOne(clk, store)

		store.forget()
		fail(errDeliberate)
		Eventually(func() <-chan struct{} {
			clk.Advance(time.Second) // the restart's back-off
			return r.Done()
		}).WithTimeout(Scaled(10 * time.Second)).Should(BeClosed())
		err := r.Wait()
		Expect(err).To(MatchError(state.ErrDiverged))
		Expect(err).To(MatchError(ContainSubstring("the store's last checkpoint is 0, but this process committed 1 to it")))
		Expect(r.Stats().Restarts).To(BeEquivalentTo(1), "the restart's start found it and gave up")
	})

	It("refuses to start on a store another topology wrote, naming both", func() {
		lines, _ := stateLines(50)
		store := state.NewMemory()
		r := sheltertest.Start(GinkgoTB(), statefulCount("first-owner", sheltertest.NewLog(lines...), nil, nil), supervision.WithStore(store))
		Stop(r) // its stop commits a checkpoint
		Expect(store.Committed(context.Background())).To(BeNumerically(">", 0))

		// Same shape, another program: on main it restored the first one's
		// counts and positions.
		_, err := supervision.Run(context.Background(), statefulCount("second-owner", sheltertest.NewLog(lines...), nil, nil),
			supervision.WithStore(store), supervision.WithLogger(ginkgoLogger()))
		Expect(err).To(MatchError(MatchRegexp(`topology "second-owner": the store holds checkpoints \(up to \d+\) of topology "first-owner"`)))
	})

	It("refuses to restore a state whose types changed, naming the component and both types", func() {
		store := state.NewMemory()
		b := dsl.New("retyped", nil)
		b.Streams(Line{})
		src := b.Spout("lines", sheltertest.NewLog(Line{Text: "7"}).Spout())
		b.Anchored(src, b.Bolt("count", dsl.Stateful(func(in Line, st *dsl.State[string, string], _ dsl.Emitter) error {
			st.Put(in.Text, in.Text)
			return nil
		})), dsl.Shuffle[Line]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithStore(store))
		Stop(r) // its stop commits "7" -> "7"
		Expect(store.Committed(context.Background())).To(BeNumerically(">", 0))

		// The same program, its state now read as int: on main "7" came back as -28.
		b = dsl.New("retyped", nil)
		b.Streams(Line{})
		src = b.Spout("lines", sheltertest.NewLog[Line]().Spout())
		b.Anchored(src, b.Bolt("count", dsl.Stateful(func(Line, *dsl.State[string, int], dsl.Emitter) error { return nil })), dsl.Shuffle[Line]())
		_, err := supervision.Run(context.Background(), Build(b), supervision.WithStore(store), supervision.WithLogger(ginkgoLogger()))
		Expect(err).To(MatchError(ContainSubstring(`component "count" was checkpointed as stateful bolt, state key string, value string, and is now stateful bolt, state key string, value int`)))
	})

	It("Build refuses state types that cannot come back from the store, naming the component and the type", Label("validation"), func() {
		b := dsl.New("unstorable", nil)
		b.Streams(Line{}, Word{})
		src := b.Spout("lines", sheltertest.NewLog[Line]().Spout())
		hidden := b.Bolt("hidden", dsl.Stateful(func(Line, *dsl.State[hiddenKey, int], dsl.Emitter) error { return nil }))
		loose := b.Bolt("loose", dsl.Stateful(func(Line, *dsl.State[string, looseValue], dsl.Emitter) error { return nil }))
		b.Anchored(src, hidden, dsl.Shuffle[Line]())
		b.Anchored(src, loose, dsl.Shuffle[Line]())
		_, err := b.Build()
		var v *dsl.ValidationError
		Expect(errors.As(err, &v)).To(BeTrue(), "%v", err)
		Expect(v.Problems).To(ContainElements(
			ContainSubstring(`stateful bolt "hidden": its state's key type specs_test.hiddenKey cannot be checkpointed faithfully: specs_test.hiddenKey.user: unexported field of type string`),
			ContainSubstring(`stateful bolt "loose": its state's value type specs_test.looseValue cannot be checkpointed faithfully: specs_test.looseValue.Extra: an interface`),
			ContainSubstring(`stateful bolt "loose": its state's value type specs_test.looseValue cannot be checkpointed faithfully: specs_test.looseValue.Done: a chan cannot be stored`),
			ContainSubstring(`stateful bolt "loose": its state's value type specs_test.looseValue cannot be checkpointed faithfully: specs_test.looseValue.Inner.n: unexported field of type int`),
		))
	})
})

// hiddenKey's field is unexported: on main every key was stored as {}, and
// a restore merged them all into one.
type hiddenKey struct{ user string }

// looseValue holds what JSON cannot give back.
type looseValue struct {
	N     int
	Extra any
	Done  chan struct{}
	Inner struct{ n int }
}
