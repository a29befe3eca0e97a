package specs_test

// Guaranteed processing: scenarios B to E of the reference message flows, the
// acker's rotation, capacity, multi-anchoring and all-grouping rules, and the
// exactly-once-callback property over seeded randomized runs.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/acker"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
	"go.uber.org/zap"
)

// Streams of these specs besides Num.
type (
	GPPart struct{ N, Part int }
	GPPair struct{ A, B int }
)

// gpTimeout is the message timeout of these specs. The clock is manual, so it
// costs no real time; gpPeriod is the acker's rotation period for it.
const gpTimeout = 30 * time.Second

var gpPeriod = gpTimeout / 2 // the acker rotates every half timeout

// gpAcker names acker tasks in traces and stats.
const gpAcker = "__acker"

// gpTasks returns the task ids of component id, as routing numbers them.
func gpTasks(topo *dsl.Topology, id string) []int {
	return topo.Component(id).Tasks
}

// gpIDs hands out fixed ids, then distinct large ones, so specs can replay the
// reference tables with known tuple ids.
type gpIDs struct {
	fixed []uint64
	n     uint64
}

func (g *gpIDs) Next() uint64 {
	if len(g.fixed) > 0 {
		v := g.fixed[0]
		g.fixed = g.fixed[1:]
		return v
	}
	g.n++
	return 1<<40 + g.n
}

// gpWithIDs gives the listed tasks fixed ids (root first for a spout, then edges).
func gpWithIDs(byTask map[int][]uint64) supervision.Option {
	return supervision.WithIDs(func(task int) func() uint64 {
		return (&gpIDs{fixed: append([]uint64(nil), byTask[task]...), n: uint64(task) << 20}).Next
	})
}

// AckerStep is an acker message as the acker applied it: the tree's XOR value
// and the outcome afterwards (a row of the reference tables).
type AckerStep struct {
	Op      string // "Track", "Anchor", "Ok" or "Fail"
	Root    uint64
	Edge    uint64
	Spout   int
	Value   uint64
	Outcome string // "", "complete", "failed" or "refused"
}

func stepOf(e Event) AckerStep {
	return AckerStep{Op: e.Op, Root: e.Root, Edge: e.Edge, Spout: e.Spout, Value: e.XOR, Outcome: e.Outcome}
}

// gpSteps keeps the acker steps of one tree, in the order the acker applied them.
func gpSteps(t *Trace, root uint64) []AckerStep {
	var out []AckerStep
	for _, e := range t.Events(FromComponent(gpAcker), KindIs("AckerStep")) {
		if e.Root == root {
			out = append(out, stepOf(e))
		}
	}
	return out
}

// gpAllSteps returns every acker step of a run.
func gpAllSteps(t *Trace) []AckerStep {
	var out []AckerStep
	for _, e := range t.Events(FromComponent(gpAcker), KindIs("AckerStep")) {
		out = append(out, stepOf(e))
	}
	return out
}

// gpRootOf returns the root of the tree a spout started for value v (0 if none yet).
func gpRootOf(t *Trace, spout string, v any) uint64 {
	for _, e := range t.Events(FromComponent(spout), Outbound, KindIs("Emit")) {
		if e.Value == v && len(e.Anchors) == 1 {
			return e.Anchors[0].Root
		}
	}
	return 0
}

func gpStep(op string, root, edge uint64, spout int, value uint64, outcome string) AckerStep {
	return AckerStep{Op: op, Root: root, Edge: edge, Spout: spout, Value: value, Outcome: outcome}
}

// gpApply applies one step's message to a tracker, as an acker task does, and
// returns the outcome and the spout task to tell.
func gpApply(t *acker.Tracker, s AckerStep) (outcome string, spout int) {
	switch s.Op {
	case "Track":
		if !t.Track(s.Root, s.Spout, 0) {
			return "refused", s.Spout
		}
	case "Anchor":
		t.Anchor(s.Root, s.Edge)
	case "Ok":
		if spout, done := t.Ok(s.Root, s.Edge); done {
			return "complete", spout
		}
	case "Fail":
		if spout, found := t.Fail(s.Root); found {
			return "failed", spout
		}
	}
	return "", 0
}

// The reference tables of fsshelter-acker-algorithm.txt, for a tree aid started by
// spout task spout: edges 100 (spout->A), 200 (A->B) and 300 (A->C).
func gpLinearTable(aid uint64, spout int) []AckerStep {
	return []AckerStep{
		gpStep("Track", aid, 0, spout, 0, ""),
		gpStep("Anchor", aid, 100, 0, 100, ""),
		gpStep("Anchor", aid, 200, 0, 100^200, ""),
		gpStep("Ok", aid, 100, 0, 200, ""),
		gpStep("Ok", aid, 200, 0, 0, "complete"),
	}
}

func gpFanOutTable(aid uint64, spout int) []AckerStep {
	return []AckerStep{
		gpStep("Track", aid, 0, spout, 0, ""),
		gpStep("Anchor", aid, 100, 0, 100, ""),
		gpStep("Anchor", aid, 200, 0, 100^200, ""),
		gpStep("Anchor", aid, 300, 0, 100^200^300, ""),
		gpStep("Ok", aid, 100, 0, 200^300, ""),
		gpStep("Ok", aid, 200, 0, 300, ""),
		gpStep("Ok", aid, 300, 0, 0, "complete"),
	}
}

// gpHeld is an input a holding bolt has not acked yet, with its task's Post.
type gpHeld struct {
	in   dsl.Tuple
	post func(func(dsl.Collector))
}

// gpHolder is a manual-ack bolt that acks nothing until the spec releases inputs.
type gpHolder[In any] struct {
	held     chan gpHeld
	received atomic.Int64
}

func newGPHolder[In any]() *gpHolder[In] { return &gpHolder[In]{held: make(chan gpHeld, 1<<12)} }

func (h *gpHolder[In]) spec() *dsl.BoltSpec {
	return dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[In] {
		return sheltertest.ManualFunc[In](func(_ In, input dsl.Tuple, _ dsl.Collector) error {
			h.held <- gpHeld{in: input, post: info.Post}
			h.received.Add(1)
			return nil
		})
	})
}

// Received returns how many inputs the bolt got (a func value for Eventually).
func (h *gpHolder[In]) Received() int { return int(h.received.Load()) }

// release acks (or fails) the oldest held input on its own task and returns it.
func (h *gpHolder[In]) release(ack bool) dsl.Tuple {
	GinkgoHelper()
	var got gpHeld
	Eventually(h.held).Should(Receive(&got), "no input is held")
	got.post(func(c dsl.Collector) {
		if ack {
			c.Ack(got.in)
		} else {
			c.Fail(got.in)
		}
	})
	return got.in
}

func gpNums(from, to int) []Num {
	var out []Num
	for i := from; i <= to; i++ {
		out = append(out, Num{N: i})
	}
	return out
}

var _ = Describe("Scenario B: reliable tuple flow", Label("scenario-B"), func() {
	const aid = 0xA1D

	DescribeTable("the acker's XOR steps, replayed on acker.Tracker",
		func(table func(uint64, int) []AckerStep) {
			t := acker.New(16)
			for i, want := range table(aid, 7) {
				outcome, spout := gpApply(t, want)
				v, _ := t.Value(aid)
				got := want
				got.Value, got.Outcome = v, outcome
				Expect(got).To(Equal(want), "step %d", i+1)
				if outcome == "complete" {
					Expect(spout).To(Equal(7))
				}
			}
			_, open := t.Value(aid)
			Expect(open).To(BeFalse(), "the tree ended")
		},
		Entry("linear chain spout -> A -> B", gpLinearTable),
		Entry("fan-out spout -> A -> (B, C)", gpFanOutTable),
	)

	It("replays the linear table: spout -> A -> B, then acks the spout", func() {
		src := sheltertest.NewSource(Num{N: 1})
		b := dsl.New("scenario-b-linear", dsl.Conf{dsl.AckerTasks: 1})
		b.Streams(GPPart{})
		spout := b.Spout("spout", src.Spout())
		a := b.Bolt("a", dsl.AutoAck(func(in Num, out dsl.Emitter) error {
			out.Emit(GPPart{N: in.N})
			return nil
		}))
		last := b.Bolt("b", dsl.AutoAck(func(GPPart, dsl.Emitter) error { return nil }))
		b.Anchored(spout, a, dsl.Shuffle[Num]())
		b.Anchored(a, last, dsl.Shuffle[GPPart]())
		topo := Build(b)
		spoutTask, aTask := gpTasks(topo, "spout")[0], gpTasks(topo, "a")[0]

		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), topo, trace.Option(), NewManualClock().Option(),
			gpWithIDs(map[int][]uint64{spoutTask: {aid, 100}, aTask: {200}}))

		Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1}))
		Expect(gpSteps(trace, aid)).To(Equal(gpLinearTable(aid, spoutTask)))
		Expect(src.Nacked()).To(BeEmpty())
		Expect(trace.Events(FromComponent("spout"), Inbound, KindIs("Ack"))).To(HaveLen(1))
		Stop(r)
	})

	It("replays the fan-out table: spout -> A -> (B, C), completing when C acks last", func() {
		src := sheltertest.NewSource(Num{N: 1})
		hold := newGPHolder[GPPart]()
		b := dsl.New("scenario-b-fanout", dsl.Conf{dsl.AckerTasks: 1})
		b.Streams(GPPart{})
		spout := b.Spout("spout", src.Spout())
		a := b.Bolt("a", dsl.AutoAck(func(in Num, out dsl.Emitter) error {
			out.Emit(GPPart{N: in.N}) // one emit, two subscribers: edges 200 (B) and 300 (C)
			return nil
		}))
		bb := b.Bolt("b", dsl.AutoAck(func(GPPart, dsl.Emitter) error { return nil }))
		cc := b.Bolt("c", hold.spec())
		b.Anchored(spout, a, dsl.Shuffle[Num]())
		b.Anchored(a, bb, dsl.Shuffle[GPPart]())
		b.Anchored(a, cc, dsl.Shuffle[GPPart]())
		topo := Build(b)
		spoutTask, aTask := gpTasks(topo, "spout")[0], gpTasks(topo, "a")[0]

		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), topo, trace.Option(), NewManualClock().Option(),
			gpWithIDs(map[int][]uint64{spoutTask: {aid, 100}, aTask: {200, 300}}))

		table := gpFanOutTable(aid, spoutTask)
		Eventually(func() []AckerStep { return gpSteps(trace, aid) }).Should(Equal(table[:6]), "B acks while C holds")
		Expect(src.Acked()).To(BeEmpty())
		hold.release(true)
		Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1}))
		Expect(gpSteps(trace, aid)).To(Equal(table))
		Expect(src.Nacked()).To(BeEmpty())
		Stop(r)
	})
})

var _ = Describe("Scenario C: spout backpressure", Label("scenario-C"), func() {
	It("never has more than max spout pending trees per task, and resumes on each ack", func() {
		const maxPending, spouts, total = 3, 2, 40
		src := sheltertest.NewSource(gpNums(1, total)...)
		hold := newGPHolder[Num]()
		b := dsl.New("scenario-c", dsl.Conf{dsl.MaxSpoutPending: maxPending})
		spout := b.Spout("spout", src.Spout(), dsl.Parallelism(spouts))
		sink := b.Bolt("hold", hold.spec())
		b.Anchored(spout, sink, dsl.Shuffle[Num]())
		topo := Build(b)

		// Open trees per spout task, counted from the spout's own messages:
		// a tracked emit opens one, an Ack or Nack closes one.
		var mu sync.Mutex
		pending, highest := map[int]int{}, map[int]int{}
		trace := NewTrace()
		record := func(e Event) {
			trace.Record(e)
			if e.Component != "spout" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch e.Kind {
			case "Emit":
				if len(e.Anchors) > 0 {
					pending[e.Task]++
					highest[e.Task] = max(highest[e.Task], pending[e.Task])
				}
			case "Ack", "Nack":
				pending[e.Task]--
			}
		}
		clk := NewManualClock()
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithTrace(record), clk.Option())
		emitted := func() int { return trace.Count(FromComponent("spout"), KindIs("Emit")) }

		By("filling every spout task up to max pending, then stopping")
		Eventually(emitted).Should(Equal(maxPending * spouts))
		Eventually(hold.Received).Should(Equal(maxPending * spouts))
		Consistently(emitted).Should(Equal(maxPending * spouts))
		clk.Advance(gpPeriod) // a rotation tick nudges the spouts; they must still wait
		Consistently(emitted).Should(Equal(maxPending * spouts))

		By("resuming with one emit per ack")
		hold.release(true)
		Eventually(emitted).Should(Equal(maxPending*spouts + 1))
		Consistently(emitted).Should(Equal(maxPending*spouts + 1))

		By("flowing to the end, one release at a time")
		for released := 1; released < total; released++ {
			hold.release(released%5 != 0) // some fail: a nack frees the slot too
		}
		Eventually(func() int { return len(src.Acked()) + len(src.Nacked()) }).Should(Equal(total))
		Stop(r)
		mu.Lock()
		defer mu.Unlock()
		Expect(highest).To(HaveLen(spouts))
		for task, h := range highest {
			Expect(h).To(Equal(maxPending), "the most trees spout task %d had open at once", task)
		}
	})
})

// gpTickLog records, for every acker tick, the manual time and how many trees
// the ackers had expired before that tick was handled.
type gpTickLog struct {
	mu      sync.Mutex // mu guards at and expired
	at      []time.Time
	expired []int64
	running atomic.Pointer[supervision.Running]
	clk     *sheltertest.Clock
}

// record runs on the acker's goroutine before it rotates, so the stats it reads
// hold every expiry of the earlier ticks and none of this one.
func (l *gpTickLog) record(e Event) {
	if e.Kind != "Tick" || e.Component != gpAcker {
		return
	}
	var expired int64
	if r := l.running.Load(); r != nil {
		expired = r.Stats().Components[gpAcker].Expired
	}
	l.mu.Lock()
	l.at = append(l.at, l.clk.Now())
	l.expired = append(l.expired, expired)
	l.mu.Unlock()
}

func (l *gpTickLog) ticks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.at)
}

// expiredAt returns the time of the tick that expired the first tree, or false.
func (l *gpTickLog) expiredAt() (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 1; i < len(l.expired); i++ {
		if l.expired[i] > 0 {
			return l.at[i-1], true
		}
	}
	return time.Time{}, false
}

var _ = Describe("Scenario D: tuple timeout and nack", Label("scenario-D"), func() {
	// A tree is tracked `offset` after activation (the phase of the rotation
	// timer); its bolt never acks. acker's doc comment bounds the expiry: no
	// earlier than the message timeout, no later than 1.5 times it.
	DescribeTable("a tree nobody completes is nacked between the timeout and 1.5 times it",
		func(offset, wantAge time.Duration) {
			src := sheltertest.NewSource[Num]()
			hold := newGPHolder[Num]()
			conf := dsl.Conf{dsl.AckerTasks: 1, dsl.MessageTimeout: gpTimeout}
			if offset > 0 {
				conf[dsl.SpoutWait] = offset // the empty source is polled again at `offset`
			} else {
				src.Push(Num{N: 1}) // emitted at activation
			}
			b := dsl.New("scenario-d", conf)
			spout := b.Spout("spout", src.Spout())
			sink := b.Bolt("hold", hold.spec())
			b.Anchored(spout, sink, dsl.Shuffle[Num]())
			topo := Build(b)

			clk := NewManualClock()
			start := clk.Now()
			ticks := &gpTickLog{clk: clk}
			trace := NewTrace()
			r := sheltertest.Start(GinkgoTB(), topo, clk.Option(), supervision.WithTrace(func(e Event) {
				trace.Record(e)
				ticks.record(e)
			}))
			ticks.running.Store(r)
			if offset > 0 {
				src.Push(Num{N: 1})
				clk.Advance(offset)
			}
			Eventually(func() int { return trace.Count(FromComponent(gpAcker), KindIs("AckerStep")) }).Should(Equal(2), "Track and Anchor applied")
			Eventually(hold.Received).Should(Equal(1))
			tracked := clk.Now()
			Expect(tracked.Sub(start)).To(Equal(offset))

			By("moving the manual clock tick by tick, each tick handled before the next")
			next := start.Add(gpPeriod)
			for tick := 1; tick <= 4; tick++ {
				clk.Advance(next.Sub(clk.Now()))
				next = next.Add(gpPeriod)
				Eventually(ticks.ticks).Should(Equal(tick))
			}
			at, expired := ticks.expiredAt()
			Expect(expired).To(BeTrue(), "not expired by the third tick after it was tracked")
			age := at.Sub(tracked)
			Expect(age).To(BeNumerically(">=", gpTimeout))
			Expect(age).To(BeNumerically("<=", gpTimeout*3/2))
			Expect(age).To(Equal(wantAge))

			Eventually(func() []int { return src.Nacked() }).Should(Equal([]int{1}))
			Expect(src.Acked()).To(BeEmpty())
			Expect(r.Stats().Components[gpAcker].Expired).To(Equal(int64(1)))
			Expect(trace.Events(FromComponent("spout"), Inbound, KindIs("Nack"))).To(HaveLen(1))

			By("ignoring the bolt's late ack")
			late := hold.release(true)
			Eventually(func() []AckerStep { return gpSteps(trace, late.ID.Root) }).Should(HaveLen(3))
			Expect(gpSteps(trace, late.ID.Root)[2].Outcome).To(Equal(""))
			Expect(src.Acked()).To(BeEmpty())
			Stop(r)
		},
		Entry("tracked right after activation: expires at the latest bound, 1.5 x timeout", time.Duration(0), gpTimeout*3/2),
		Entry("tracked just before a rotation: expires just after the timeout", gpPeriod-time.Millisecond, gpTimeout+time.Millisecond),
	)
})

var _ = Describe("Scenario E: bolt failure", Label("scenario-E"), func() {
	DescribeTable("a failed input nacks its tree at once, with no clock movement",
		func(consume func(Num) error, wantLog string) {
			src := sheltertest.NewSource(Num{N: 1})
			b := dsl.New("scenario-e", dsl.Conf{dsl.AckerTasks: 1})
			spout := b.Spout("spout", src.Spout())
			work := b.Bolt("work", dsl.AutoAck(func(in Num, _ dsl.Emitter) error { return consume(in) }))
			b.Anchored(spout, work, dsl.Shuffle[Num]())
			topo := Build(b)

			logOpt, logs := ObserveLogs()
			clk := NewManualClock()
			trace := NewTrace()
			r := sheltertest.Start(GinkgoTB(), topo, trace.Option(), clk.Option(), logOpt)

			Eventually(func() []int { return src.Nacked() }).Should(Equal([]int{1}))
			Expect(src.Acked()).To(BeEmpty())
			Expect(clk.Now()).To(Equal(NewManualClock().Now()), "no time passed: not a timeout")
			root := gpRootOf(trace, "spout", Num{N: 1})
			steps := gpSteps(trace, root)
			Expect(steps).To(HaveLen(3))
			Expect(steps[2].Op).To(Equal("Fail"))
			Expect(steps[2].Outcome).To(Equal("failed"))
			Expect(trace.Events(FromComponent("work"), Outbound, KindIs("Fail"))).To(HaveLen(1))
			Expect(trace.Events(FromComponent("work"), Outbound, KindIs("Ok"))).To(BeEmpty())
			if wantLog != "" {
				Eventually(func() int {
					return logs.FilterMessage("bolt failed its input").FilterFieldKey("error").Len()
				}).Should(Equal(1))
				Expect(fmt.Sprint(logs.FilterMessage("bolt failed its input").All()[0].ContextMap()["error"])).To(ContainSubstring(wantLog))
			}
			Expect(r.Stats().Restarts).To(BeZero(), "a bolt failure is not a task failure")
			Expect(r.Done()).NotTo(BeClosed())
			Stop(r)
		},
		Entry("consume returns an error", func(Num) error { return errors.New("boom") }, "boom"),
		Entry("consume panics", func(Num) error { panic("kaboom") }, "panic: kaboom"),
	)

	It("nacks at once even while other edges of the tree are open, and ignores their later acks", func() {
		src := sheltertest.NewSource(Num{N: 1})
		hold := newGPHolder[GPPart]()
		b := dsl.New("scenario-e-open-edges", dsl.Conf{dsl.AckerTasks: 1})
		b.Streams(GPPart{})
		spout := b.Spout("spout", src.Spout())
		split := b.Bolt("split", dsl.AutoAck(func(in Num, out dsl.Emitter) error {
			out.Emit(GPPart{N: in.N, Part: 1})
			return errors.New("failed after emitting")
		}))
		sink := b.Bolt("hold", hold.spec())
		b.Anchored(spout, split, dsl.Shuffle[Num]())
		b.Anchored(split, sink, dsl.Shuffle[GPPart]())
		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), Build(b), trace.Option(), NewManualClock().Option())

		Eventually(func() []int { return src.Nacked() }).Should(Equal([]int{1}))
		Eventually(hold.Received).Should(Equal(1))
		late := hold.release(true)
		// Track, Anchor (spout -> split), Anchor (split -> hold), Fail, then the late Ok.
		Eventually(func() []AckerStep { return gpSteps(trace, late.ID.Root) }).Should(HaveLen(5))
		steps := gpSteps(trace, late.ID.Root)
		Expect(steps[3].Op).To(Equal("Fail"))
		Expect(steps[3].Outcome).To(Equal("failed"))
		Expect([]any{steps[4].Op, steps[4].Root, steps[4].Edge}).To(Equal([]any{"Ok", late.ID.Root, late.ID.Edge}))
		Expect(steps[4].Outcome).To(Equal(""), "the late ack of a failed tree is ignored")
		Expect(src.Acked()).To(BeEmpty())
		Expect(src.Nacked()).To(Equal([]int{1}))
		Stop(r)
	})
})

var _ = Describe("The acker", Label("acker"), func() {
	It("expires a tree on the third rotation after it was tracked, never earlier", func() {
		t := acker.New(16)
		t.Track(1, 3, 0)
		t.Anchor(1, 100)
		var expired []uint64
		rotate := func() { t.Rotate(func(root uint64, spout int) { expired = append(expired, root) }) }
		rotate()
		t.Track(2, 3, 0) // one rotation younger
		rotate()
		t.Anchor(1, 200) // trees in older buckets still take edges
		t.Ok(1, 100)
		Expect(expired).To(BeEmpty())
		rotate()
		Expect(expired).To(Equal([]uint64{1}))
		rotate()
		Expect(expired).To(Equal([]uint64{1, 2}))
		for _, root := range []uint64{1, 2} {
			_, open := t.Value(root)
			Expect(open).To(BeFalse(), "tree %d expired", root)
		}
	})

	It("nacks a new tree at once past its high-water capacity, and logs it", func() {
		src := sheltertest.NewSource(gpNums(1, 5)...)
		hold := newGPHolder[Num]()
		b := dsl.New("acker-capacity", dsl.Conf{dsl.AckerTasks: 1, dsl.AckerCapacity: 2, dsl.MaxSpoutPending: 10})
		spout := b.Spout("spout", src.Spout())
		sink := b.Bolt("hold", hold.spec())
		b.Anchored(spout, sink, dsl.Shuffle[Num]())
		logOpt, logs := ObserveLogs()
		clk := NewManualClock()
		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), Build(b), trace.Option(), clk.Option(), logOpt)

		Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(3, 4, 5))
		Expect(src.Acked()).To(BeEmpty())
		var refused int
		for _, s := range gpAllSteps(trace) {
			if s.Outcome == "refused" {
				refused++
				Expect(s.Op).To(Equal("Track"))
			}
		}
		Expect(refused).To(Equal(3))

		By("logging the refusals at the next rotation")
		clk.Advance(gpPeriod)
		Eventually(func() int { return logs.FilterMessage("acker at capacity: new trees were nacked at once").Len() }).Should(Equal(1))
		Expect(logs.FilterMessage("acker at capacity: new trees were nacked at once").All()[0].ContextMap()).To(HaveKeyWithValue("refused", int64(3)))

		By("acking the two trees it holds; late acks of refused trees change nothing")
		Eventually(hold.Received).Should(Equal(5))
		for range 5 {
			hold.release(true)
		}
		Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2))
		Eventually(func() int { return trace.Count(FromComponent(gpAcker), KindIs("AckerStep")) }).Should(Equal(15))
		Expect(src.Nacked()).To(ConsistOf(3, 4, 5))
		Stop(r)
	})

	DescribeTable("multi-anchoring: an emit anchored to inputs of two trees belongs to both",
		func(sinkAcks bool) {
			src := sheltertest.NewSource(Num{N: 1}, Num{N: 2})
			hold := newGPHolder[GPPair]()
			b := dsl.New("acker-multi-anchor", dsl.Conf{dsl.AckerTasks: 2})
			b.Streams(GPPair{})
			spout := b.Spout("spout", src.Spout())
			join := b.Bolt("join", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Num] {
				var inputs []dsl.Tuple
				return sheltertest.ManualFunc[Num](func(_ Num, input dsl.Tuple, c dsl.Collector) error {
					inputs = append(inputs, input)
					if len(inputs) == 2 {
						c.EmitAnchored(inputs, GPPair{A: inputs[0].Value.(Num).N, B: inputs[1].Value.(Num).N})
						c.Ack(inputs[0])
						c.Ack(inputs[1])
						inputs = nil
					}
					return nil
				})
			}))
			sink := b.Bolt("hold", hold.spec())
			b.Anchored(spout, join, dsl.Shuffle[Num]())
			b.Anchored(join, sink, dsl.Shuffle[GPPair]())
			trace := NewTrace()
			r := sheltertest.Start(GinkgoTB(), Build(b), trace.Option(), NewManualClock().Option())

			Eventually(hold.Received).Should(Equal(1))
			r1, r2 := gpRootOf(trace, "spout", Num{N: 1}), gpRootOf(trace, "spout", Num{N: 2})
			Expect(r1).NotTo(BeZero())
			Expect(r2).NotTo(BeZero())
			joined := trace.Events(FromComponent("hold"), Inbound, KindIs("Tuple"))[0].Input.ID
			Expect([]uint64{joined.Root, joined.Roots[0]}).To(ConsistOf(r1, r2))
			edge := joined.Edge

			By("anchoring the joined tuple's edge in both trees, which stay open while the sink holds it")
			for _, root := range []uint64{r1, r2} {
				Eventually(func() []AckerStep { return gpSteps(trace, root) }).Should(HaveLen(4))
				steps := gpSteps(trace, root)
				Expect([]any{steps[2].Op, steps[2].Root, steps[2].Edge}).To(Equal([]any{"Anchor", root, edge}))
				Expect(steps[3].Op).To(Equal("Ok"))
				Expect(steps[3].Value).To(Equal(edge))
				Expect(steps[3].Outcome).To(Equal(""))
			}
			Expect(src.Acked()).To(BeEmpty())

			hold.release(sinkAcks)
			if sinkAcks {
				Eventually(func() []int { return src.Acked() }).Should(ConsistOf(1, 2))
				Expect(src.Nacked()).To(BeEmpty())
			} else {
				Eventually(func() []int { return src.Nacked() }).Should(ConsistOf(1, 2))
				Expect(src.Acked()).To(BeEmpty())
			}
			Stop(r)
		},
		Entry("the sink acks: both trees complete", true),
		Entry("the sink fails: both trees are nacked", false),
	)

	It("completes an All-grouped tuple only after every instance acked it", func() {
		const instances = 3
		src := sheltertest.NewSource(Num{N: 1})
		hold := newGPHolder[Num]()
		b := dsl.New("acker-all", dsl.Conf{dsl.AckerTasks: 1})
		spout := b.Spout("spout", src.Spout())
		each := b.Bolt("each", hold.spec(), dsl.Parallelism(instances))
		b.Anchored(spout, each, dsl.All[Num]())
		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), Build(b), trace.Option(), NewManualClock().Option())

		Eventually(hold.Received).Should(Equal(instances))
		root := gpRootOf(trace, "spout", Num{N: 1})
		Eventually(func() []AckerStep { return gpSteps(trace, root) }).Should(HaveLen(1 + instances))
		steps := gpSteps(trace, root)
		edges := map[uint64]bool{}
		for _, s := range steps[1:] {
			Expect(s.Op).To(Equal("Anchor"))
			edges[s.Edge] = true
		}
		Expect(edges).To(HaveLen(instances), "every instance gets its own edge id")

		for acked := 1; acked < instances; acked++ {
			hold.release(true)
			Eventually(func() []AckerStep { return gpSteps(trace, root) }).Should(HaveLen(1 + instances + acked))
			last := gpSteps(trace, root)[instances+acked]
			Expect(last.Outcome).To(Equal(""), "after %d of %d acks", acked, instances)
			Expect(last.Value).NotTo(BeZero())
			Expect(src.Acked()).To(BeEmpty())
		}
		hold.release(true)
		Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1}))
		Expect(gpSteps(trace, root)[2*instances].Outcome).To(Equal("complete"))
		Stop(r)
	})

	It("tracks a reliable spout's tuple on an unanchored edge too, and acks it when the bolt does", Label("anchoring"), func() {
		src := sheltertest.NewSource(Num{N: 1})
		d := new(sheltertest.Recorder[Num])
		b := dsl.New("acker-untracked", nil)
		spout := b.Spout("spout", src.Spout())
		sink := b.Bolt("sink", d.Bolt())
		b.Unanchored(spout, sink, dsl.Shuffle[Num]())
		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), Build(b), trace.Option(), NewManualClock().Option())

		Eventually(func() []int { return src.Acked() }).Should(Equal([]int{1}))
		Eventually(d.Len).Should(Equal(1))
		steps := gpAllSteps(trace)
		Expect(steps).To(HaveLen(3), "Storm and FsShelter track a spout emit with an id on every edge")
		Expect([]string{steps[0].Op, steps[1].Op, steps[2].Op}).To(Equal([]string{"Track", "Anchor", "Ok"}))
		Expect(steps[2].Outcome).To(Equal("complete"))
		Stop(r)
	})
})

// gpShape is one randomized topology of the exactly-once-callback spec:
// spout -> first -> second, with random parallelism, groupings and limits.
type gpShape struct {
	Messages, Spouts, First, Second     int
	AllFirst, AllSecond, AnchoredSecond bool
	Ackers, MaxPending, Capacity        int
	Batch, Ring                         int
}

func gpRandomShape(rng *rand.Rand) gpShape {
	return gpShape{
		Messages: 100 + rng.IntN(150), Spouts: 1 + rng.IntN(3), First: 1 + rng.IntN(3), Second: 1 + rng.IntN(3),
		AllFirst: rng.IntN(4) == 0, AllSecond: rng.IntN(3) == 0, AnchoredSecond: rng.IntN(4) > 0,
		Ackers: 1 + rng.IntN(3), MaxPending: 4 + rng.IntN(48), Capacity: 4 + rng.IntN(200),
		Batch: 1 + rng.IntN(32), Ring: 2 << rng.IntN(4),
	}
}

// gpMix is a stateless hash, so each input's decision depends only on the seed,
// the bolt, the task and the input, not on scheduling.
func gpMix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

// gpRandomRun is the state of one randomized run.
type gpRandomRun struct {
	seed                             uint64
	shape                            gpShape
	firstDone, firstSent, secondDone atomic.Int64
	mu                               sync.Mutex // mu guards held
	held                             []gpHeld
}

func (g *gpRandomRun) hold(in dsl.Tuple, info dsl.TaskInfo) {
	g.mu.Lock()
	g.held = append(g.held, gpHeld{in: in, post: info.Post})
	g.mu.Unlock()
}

// first emits 0-2 parts, then acks, fails, holds, returns an error or panics.
func (g *gpRandomRun) first(info dsl.TaskInfo) dsl.ManualHandler[Num] {
	return sheltertest.ManualFunc[Num](func(in Num, input dsl.Tuple, c dsl.Collector) error {
		defer g.firstDone.Add(1)
		d := gpMix(g.seed ^ uint64(in.N)<<8 ^ uint64(info.Index)<<40 ^ 1<<60)
		for p := range int(d % 3) {
			c.Emit(GPPart{N: in.N, Part: p})
			g.firstSent.Add(1)
		}
		switch (d >> 8) % 20 {
		case 0, 1, 2:
			c.Fail(input)
		case 3, 4, 5:
			g.hold(input, info)
		case 6, 7:
			return errors.New("first: random error")
		case 8:
			panic("first: random panic")
		default:
			c.Ack(input)
		}
		return nil
	})
}

// second acks, fails or holds.
func (g *gpRandomRun) second(info dsl.TaskInfo) dsl.ManualHandler[GPPart] {
	return sheltertest.ManualFunc[GPPart](func(in GPPart, input dsl.Tuple, c dsl.Collector) error {
		defer g.secondDone.Add(1)
		switch gpMix(g.seed^uint64(in.N)<<8^uint64(in.Part)<<2^uint64(info.Index)<<40^2<<60) % 10 {
		case 0:
			c.Fail(input)
		case 1, 2:
			g.hold(input, info)
		default:
			c.Ack(input)
		}
		return nil
	})
}

// settled reports whether every message was emitted and every tuple executed.
func (g *gpRandomRun) settled(emitted func() int) bool {
	s := g.shape
	perMessage, perPart := 1, 1
	if s.AllFirst {
		perMessage = s.First
	}
	if s.AllSecond {
		perPart = s.Second
	}
	if emitted() != s.Messages || g.firstDone.Load() != int64(s.Messages*perMessage) {
		return false
	}
	return g.secondDone.Load() == g.firstSent.Load()*int64(perPart)
}

func gpSeeds() []uint64 {
	if s, err := strconv.ParseUint(os.Getenv("GOSHELTER_SEED"), 10, 64); err == nil {
		return []uint64{s}
	}
	var seeds []uint64
	for s := uint64(1); s <= 40; s++ {
		seeds = append(seeds, s)
	}
	return seeds
}

var _ = Describe("Every tracked message gets exactly one callback", Label("exactly-once-callback"), func() {
	// Each run builds a random topology, lets bolts ack, fail, hold, error or
	// panic at random, moves the manual clock past 1.5 times the timeout, and
	// checks that every message got exactly one Ack or one Nack. A failing run
	// names its seed; rerun it alone with GOSHELTER_SEED=<seed>.
	for _, seed := range gpSeeds() {
		It(fmt.Sprintf("seed %d (rerun with GOSHELTER_SEED=%d)", seed, seed), func() {
			g := &gpRandomRun{seed: seed, shape: gpRandomShape(rand.New(rand.NewPCG(seed, 0xe1ac)))}
			s := g.shape
			GinkgoWriter.Printf("seed %d: %+v\n", seed, s)

			src := sheltertest.NewSource(gpNums(1, s.Messages)...)
			b := dsl.New(fmt.Sprintf("exactly-once-%d", seed), dsl.Conf{
				dsl.AckerTasks: s.Ackers, dsl.MaxSpoutPending: s.MaxPending, dsl.AckerCapacity: s.Capacity,
				dsl.BatchSize: s.Batch, dsl.ReceiveBufferSize: s.Ring, dsl.MessageTimeout: gpTimeout,
			})
			b.Streams(GPPart{})
			spout := b.Spout("spout", src.Spout(), dsl.Parallelism(s.Spouts))
			first := b.Bolt("first", dsl.Manual(g.first), dsl.Parallelism(s.First))
			second := b.Bolt("second", dsl.Manual(g.second), dsl.Parallelism(s.Second))
			if s.AllFirst {
				b.Anchored(spout, first, dsl.All[Num]())
			} else {
				b.Anchored(spout, first, dsl.Shuffle[Num]())
			}
			g2 := dsl.Shuffle[GPPart]()
			if s.AllSecond {
				g2 = dsl.All[GPPart]()
			}
			if s.AnchoredSecond {
				b.Anchored(first, second, g2)
			} else {
				b.Unanchored(first, second, g2)
			}
			clk := NewManualClock()
			trace := NewTrace()
			r := sheltertest.Start(GinkgoTB(), Build(b), trace.Option(), clk.Option(), supervision.WithoutRestarts(),
				supervision.WithLogger(zap.NewNop())) // bolts fail on purpose: keep the output quiet
			emitted := func() int { return trace.Count(FromComponent("spout"), Outbound, KindIs("Emit")) }
			callbacks := func() int { return len(src.Acked()) + len(src.Nacked()) }

			By("running until every message is emitted and every tuple executed, moving the clock only when stuck")
			progress := -1
			Eventually(func() bool {
				now := emitted() + int(g.firstDone.Load()+g.secondDone.Load()) + callbacks()
				if now == progress && !g.settled(emitted) {
					clk.Advance(gpPeriod) // held trees block max pending: let them time out
				}
				progress = now
				return g.settled(emitted)
			}).WithTimeout(Scaled(30*time.Second)).WithPolling(5*time.Millisecond).Should(BeTrue(), "seed %d", seed)

			By("moving the clock 1.5 times the timeout: every tree must have an outcome")
			for range 3 { // the acker's buckets
				clk.Advance(gpPeriod)
			}
			Eventually(callbacks).Should(Equal(s.Messages), "seed %d: messages without a callback", seed)
			gpExpectOnce(src, s.Messages, seed)
			Expect(r.Done()).NotTo(BeClosed(), "seed %d: the topology failed", seed)

			By("acking every held input late: no callback may follow")
			g.mu.Lock()
			held := g.held
			g.held = nil
			g.mu.Unlock()
			lateEdges := map[uint64]bool{}
			for _, h := range held {
				h.post(func(c dsl.Collector) { c.Ack(h.in) })
				if h.in.ID.Edge != 0 {
					lateEdges[h.in.ID.Edge] = true
				}
			}
			lateSteps := func() []AckerStep {
				var out []AckerStep
				for _, st := range gpAllSteps(trace) {
					if st.Op == "Ok" && lateEdges[st.Edge] {
						out = append(out, st)
					}
				}
				return out
			}
			Eventually(lateSteps).Should(HaveLen(len(lateEdges)), "seed %d", seed)
			for _, st := range lateSteps() {
				Expect(st.Outcome).To(Equal(""), "seed %d: a late ack decided a tree", seed)
			}

			var decided int64
			for _, st := range gpAllSteps(trace) {
				if st.Outcome != "" {
					decided++
				}
			}
			expired := r.Stats().Components[gpAcker].Expired
			decided += expired
			GinkgoWriter.Printf("seed %d: acked=%d nacked=%d expired=%d held=%d late-acks=%d\n",
				seed, len(src.Acked()), len(src.Nacked()), expired, len(held), len(lateEdges))
			Expect(decided).To(Equal(int64(s.Messages)), "seed %d: outcomes decided by the ackers", seed)
			Stop(r)
			gpExpectOnce(src, s.Messages, seed)
		})
	}
})

// gpExpectOnce checks that messages 1..n each got exactly one Ack or one Nack.
func gpExpectOnce(src *sheltertest.Source[Num], n int, seed uint64) {
	GinkgoHelper()
	count := map[int]int{}
	for _, id := range src.Acked() {
		count[id]++
	}
	for _, id := range src.Nacked() {
		count[id]++
	}
	Expect(count).To(HaveLen(n), "seed %d: messages with a callback", seed)
	for id, c := range count {
		Expect(c).To(Equal(1), "seed %d: message %d got %d callbacks", seed, id, c)
	}
}
