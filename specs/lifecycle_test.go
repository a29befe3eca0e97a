package specs_test

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

var _ = Describe("Topology lifecycle", Label("lifecycle"), func() {
	// lifecycleTopology is a reliable spout (2 tasks) -> middle (2) -> sink (1),
	// with 2 ackers. Bolts get activation and deactivation tuples; user hooks
	// append to journal.
	lifecycleTopology := func(src *lifecycleSource, journal *journal) *dsl.Topology {
		b := dsl.New("lifecycle", dsl.Conf{dsl.AckerTasks: 2})
		b.Streams(Num{})
		spout := b.Spout("source", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Num] {
			return &activatedSource{lifecycleSource: src, journal: journal}
		}), dsl.Parallelism(2))
		hooks := dsl.AutoAck(func(in Num, out dsl.Emitter) error {
			switch in.N {
			case -1:
				journal.add("bolt activation tuple")
			case -2:
				journal.add("bolt deactivation tuple")
			default:
				out.Emit(in)
			}
			return nil
		})
		middle := b.Bolt("middle", hooks, dsl.Parallelism(2),
			dsl.LifecycleTuples(Num{N: -1}, Num{N: -2}))
		sink := b.Bolt("sink", new(sheltertest.Recorder[Num]).Bolt())
		b.Anchored(spout, middle, dsl.Shuffle[Num]())
		b.Anchored(middle, sink, dsl.Shuffle[Num]())
		return Build(b)
	}

	It("activates ackers, bolts, spouts, then the system task, and stops in reverse: system, spouts, bolts", func() {
		trace, journal := NewTrace(), &journal{}
		r := sheltertest.Start(GinkgoTB(), lifecycleTopology(&lifecycleSource{}, journal), trace.Option(), NewManualClock().Option())
		Stop(r)

		role := func(e Event) string {
			switch e.Component {
			case "__acker", "__system":
				return e.Component
			case "source":
				return "spouts"
			}
			return "bolts"
		}
		Expect(runs(trace.Events(KindIs("Activate")), role)).To(Equal([]run{
			{"__acker", 2}, {"bolts", 3}, {"spouts", 2}, {"__system", 1},
		}))
		Expect(runs(trace.Events(KindIs("Deactivate")), role)).To(Equal([]run{
			{"__system", 1}, {"spouts", 2}, {"bolts", 3},
		}))

		By("user code hears of it in the same order")
		Expect(journal.entries()).To(Equal([]string{
			"bolt activation tuple", "bolt activation tuple",
			"spout activated", "spout activated",
			"spout deactivated", "spout deactivated",
			"bolt deactivation tuple", "bolt deactivation tuple",
		}))
	})

	It("ends the drain as soon as nothing is in flight, well before a long drain timeout", func() {
		src := &lifecycleSource{}
		for n := 1; n <= 20; n++ {
			src.Push(Num{N: n})
		}
		r := sheltertest.Start(GinkgoTB(), lifecycleTopology(src, &journal{}), supervision.WithDrainTimeout(time.Hour))
		Eventually(src.Acked).Should(HaveLen(20))

		stopped := stopAsync(r)
		Eventually(stopped, Scaled(5*time.Second)).Should(Receive(BeNil()), "Stop waited for the hour-long drain timeout")
	})

	It("drains the work in flight before stopping the bolts, so it completes", func() {
		src := sheltertest.NewSource(Num{N: 1})
		hold := newHolder()
		b := dsl.New("lifecycle-drain", nil)
		spout := b.Spout("source", src.Spout())
		bolt := b.Bolt("slow", dsl.Manual(hold.handler))
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		topo := Build(b)
		trace := NewTrace()
		r := sheltertest.Start(GinkgoTB(), topo, trace.Option(), supervision.WithDrainTimeout(time.Hour))
		DeferCleanup(hold.releaseAll)
		Eventually(hold.count).Should(Equal(1))

		stopped := stopAsync(r)
		Eventually(func() int { return trace.Count(FromComponent("source"), KindIs("Deactivate")) }).Should(Equal(1))
		Consistently(stopped).ShouldNot(Receive(), "Stop must wait for the tuple in flight")
		Expect(trace.Count(FromComponent("slow"), KindIs("Deactivate"))).To(BeZero(), "bolts are deactivated after the drain")

		hold.release(taskIDs(topo, "slow")[0])
		Eventually(stopped).Should(Receive(BeNil()))
		Expect(src.Acked()).To(Equal([]int{1}))
		Expect(src.Nacked()).To(BeEmpty())
	})

	It("ends the drain at the drain timeout when work never completes, nacking what is left", func() {
		src := sheltertest.NewSource(Num{N: 1})
		hold := newHolder()
		b := dsl.New("lifecycle-drain-timeout", nil)
		spout := b.Spout("source", src.Spout())
		bolt := b.Bolt("stuck", dsl.Manual(hold.handler))
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithDrainTimeout(50*time.Millisecond))
		DeferCleanup(hold.releaseAll)
		Eventually(hold.count).Should(Equal(1))

		Eventually(stopAsync(r), Scaled(5*time.Second)).Should(Receive(BeNil()))
		Expect(src.Nacked()).To(Equal([]int{1}), "the abandoned message is nacked to its source")
		Expect(src.Acked()).To(BeEmpty())
	})

	It("leaves no goroutine behind once stopped, and reports a second Stop", func() {
		src := &lifecycleSource{}
		for n := 1; n <= 100; n++ {
			src.Push(Num{N: n})
		}
		r := sheltertest.Start(GinkgoTB(), lifecycleTopology(src, &journal{}))
		Eventually(src.Acked).Should(HaveLen(100))
		Stop(r)

		Expect(r.Done()).To(BeClosed())
		Expect(r.Wait()).To(Succeed())
		Expect(goleak.Find(leakOptions()...)).To(Succeed())
		Expect(r.Stop(context.Background())).To(MatchError(supervision.ErrStopped))
	})
})

// stopAsync stops r on another goroutine and delivers Stop's result.
func stopAsync(r *supervision.Running) <-chan error {
	out := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), Scaled(20*time.Second))
		defer cancel()
		out <- r.Stop(ctx)
	}()
	return out
}

// journal is an ordered record of user-visible lifecycle hooks; safe for
// concurrent use.
type journal struct {
	mu   sync.Mutex // mu guards list
	list []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.list = append(j.list, s)
	j.mu.Unlock()
}

func (j *journal) entries() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.list...)
}

// lifecycleSource is a reliable queue shared by a spout's tasks; it records acks.
type lifecycleSource struct {
	mu     sync.Mutex // mu guards every field below
	queue  []Num
	last   int
	acked  []int
	nacked []int
}

func (s *lifecycleSource) Push(values ...Num) {
	s.mu.Lock()
	s.queue = append(s.queue, values...)
	s.mu.Unlock()
}

func (s *lifecycleSource) Next() (int, Num, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return 0, Num{}, false
	}
	v := s.queue[0]
	s.queue = s.queue[1:]
	s.last++
	return s.last, v, true
}

func (s *lifecycleSource) Ack(id int)  { s.mu.Lock(); s.acked = append(s.acked, id); s.mu.Unlock() }
func (s *lifecycleSource) Nack(id int) { s.mu.Lock(); s.nacked = append(s.nacked, id); s.mu.Unlock() }

// Acked returns the acked ids (a func value for Eventually).
func (s *lifecycleSource) Acked() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.acked...)
}

// activatedSource is a lifecycleSource that writes its activation hooks to a journal.
type activatedSource struct {
	*lifecycleSource
	journal *journal
}

func (s *activatedSource) Activate()   { s.journal.add("spout activated") }
func (s *activatedSource) Deactivate() { s.journal.add("spout deactivated") }

// run is a stretch of consecutive events of one role.
type run struct {
	Role  string
	Count int
}

// runs collapses events into consecutive stretches of the same role.
func runs(events []Event, role func(Event) string) []run {
	var out []run
	for _, e := range events {
		r := role(e)
		if n := len(out); n > 0 && out[n-1].Role == r {
			out[n-1].Count++
			continue
		}
		out = append(out, run{Role: r, Count: 1})
	}
	return out
}
