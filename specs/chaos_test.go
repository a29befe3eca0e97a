package specs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// The chaos specs run seeded random topologies (chaos_helpers_test.go builds
// them, chaos_round_test.go runs and checks them) whose bolts panic, return
// errors, stall past the message timeout or never ack, whose shell children
// die, and whose spout and bolt tasks crash, forcing restarts under
// supervision. Every round checks Storm's promise through the replaying
// spout's ledger:
//
//   - each id the spout hands out gets exactly one ack or nack, from the task
//     that holds it, never after Stop returned;
//   - every message is eventually acked, exactly once, across restarts and a
//     stop and rerun in the middle;
//   - an acked attempt was processed by every bolt its tree covers;
//   - no spout task ever holds more ids than its max pending;
//   - the heap stays bounded, and no goroutine or child process outlives a stop.
//
// Replay one round with GOSHELTER_CHAOS_SEED=<seed>, or the whole run with
// ginkgo's --seed. The soak (GOSHELTER_SOAK=10m) runs rounds back to back for
// the given duration and reports its figures; docs/RELIABILITY.md has the commands.
var _ = Describe("Chaos: random topologies under injected faults", Label("chaos"), func() {
	seeds, seedErr := chaosSeeds(GinkgoRandomSeed())

	It("reads its seeds", func() {
		Expect(seedErr).NotTo(HaveOccurred())
	})

	for _, seed := range seeds {
		It(fmt.Sprintf("keeps every promise in round seed=%d (replay: %s=%d)", seed, chaosSeedEnv, seed), func(ctx SpecContext) {
			shape := newChaosShape(seed, 150, 400, chaosShellAvailable())
			round := newChaosRound(shape, defaultChaosSettings())
			GinkgoWriter.Printf("round: %v\n", shape)
			DeferCleanup(func() {
				if CurrentSpecReport().Failed() {
					GinkgoWriter.Printf("replay this round with %s=%d go tool ginkgo --label-filter=chaos ./specs\n%s\n",
						chaosSeedEnv, seed, round.logs)
				}
			})

			fig, problems := round.run(ctx)
			GinkgoWriter.Printf("figures: %v\n", fig)
			Expect(problems).To(BeEmpty(), "round seed=%d broke its invariants\nshape: %v\nfigures: %v", seed, shape, fig)
			Expect(fig.Messages).To(Equal(shape.Messages))
			Expect(fig.Lost).To(BeZero())
			Expect(fig.Duplicates).To(BeZero())
			Expect(fig.MaxPending).To(BeNumerically("<=", shape.MaxPending))
		}, SpecTimeout(Scaled(2*time.Minute)))
	}

	It("soaks for the duration in GOSHELTER_SOAK without losing a message", Label("soak"), func(ctx SpecContext) {
		d, err := soakDuration()
		Expect(err).NotTo(HaveOccurred())
		if d == 0 {
			Skip("set GOSHELTER_SOAK=10m (a Go duration) to run the soak")
		}
		// Soak rounds are bigger than the short ones; GOSHELTER_CHAOS_SEED
		// replays one of them at its size.
		base, only := uint64(GinkgoRandomSeed())*1000+500, false
		if v := os.Getenv(chaosSeedEnv); v != "" {
			base, err = strconv.ParseUint(v, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "%s=%q", chaosSeedEnv, v)
			only = true
		}
		var total chaosFigures
		start := time.Now()
		reported := start
		for i := uint64(0); i == 0 || (!only && time.Since(start) < d); i++ {
			seed := base + i
			shape := newChaosShape(seed, 1000, 3000, chaosShellAvailable())
			round := newChaosRound(shape, defaultChaosSettings())
			fig, problems := round.run(ctx)
			total.add(fig)
			Expect(problems).To(BeEmpty(), "soak round seed=%d broke its invariants (replay: %s=%d %s=1s go tool ginkgo --label-filter=soak ./specs)\nshape: %v\nfigures: %v\n%s",
				seed, chaosSeedEnv, seed, chaosSoakEnv, shape, fig, round.logs)
			Expect(goleak.Find(leakOptions()...)).To(Succeed(), "soak round seed=%d left goroutines behind", seed)
			if time.Since(reported) > time.Minute {
				reported = time.Now()
				GinkgoWriter.Printf("soak %v: %v\n", time.Since(start).Round(time.Second), total)
			}
		}
		summary := fmt.Sprintf("soak: duration=%v base-seed=%d %v goroutines-leaked=0 children-left=0",
			time.Since(start).Round(time.Second), base, total)
		AddReportEntry("soak summary", summary)
		Expect(total.Lost).To(BeZero())
	}, SpecTimeout(24*time.Hour))
})

// soakDuration reads GOSHELTER_SOAK: empty for no soak, else a Go duration.
func soakDuration() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(chaosSoakEnv))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive Go duration (e.g. 10m)", chaosSoakEnv, v)
	}
	return d, nil
}

// Found by the chaos rounds: a spout tree is held open only by its anchors, so
// when a delivery was flushed in the middle of a spout emit (a full batch) the
// first bolt task could ack its edge before the spout anchored the next one, and
// the acker saw the tree complete although the other edge was failing.
var _ = Describe("A spout tree stays open until every edge is anchored", Label("chaos", "acker"), func() {
	It("nacks every message when one of two All-grouped tasks fails each input, with batches of one", func() {
		const total = 2000
		src := sheltertest.NewSource[Num]()
		for i := 1; i <= total; i++ {
			src.Push(Num{N: i})
		}
		b := dsl.New("early-completion", dsl.Conf{dsl.BatchSize: 1, dsl.ReceiveBufferSize: 2, dsl.MaxSpoutPending: 1000})
		spout := b.Spout("spout", src.Spout())
		split := b.Bolt("split", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
			return sheltertest.HandlerFunc[Num](func(Num, dsl.Emitter) error {
				if info.Index == 1 {
					return errors.New("the second task fails every input")
				}
				return nil
			})
		}), dsl.Parallelism(2))
		b.Anchored(spout, split, dsl.All[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithLogger(zap.NewNop()))
		Eventually(func() int { return len(src.Acked()) + len(src.Nacked()) }).WithTimeout(Scaled(30 * time.Second)).Should(Equal(total))
		Stop(r)
		Expect(src.Acked()).To(BeEmpty(), "messages acked although an edge of their tree failed")
	})
})

// Found by the chaos rounds: a shell child died while its topology was being
// stopped. The failed task never handled its deactivation, and since Stop had
// already taken the incarnation out of the supervisor's hands nothing broke it,
// so Stop waited for its whole context and then abandoned every actor unstopped.
var _ = Describe("A task that fails while the topology stops", Label("chaos", "lifecycle"), func() {
	It("does not hold Stop up: the stop goes on, and the open message is settled once", func() {
		src := &stopSource{deactivated: make(chan struct{})}
		started, release := make(chan struct{}), make(chan struct{})
		b := dsl.New("fail-while-stopping", nil)
		spout := b.Spout("spout", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Num] { return src }))
		bolt := b.Bolt("crasher", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Num] {
			return sheltertest.HandlerFunc[Num](func(Num, dsl.Emitter) error {
				close(started)
				<-release
				info.Fail(errors.New("the task fails while the topology stops"))
				return nil
			})
		}))
		b.Anchored(spout, bolt, dsl.Shuffle[Num]())
		r := sheltertest.Start(GinkgoTB(), Build(b), supervision.WithLogger(zap.NewNop()), supervision.WithDrainTimeout(Scaled(5*time.Second)))
		Eventually(started).Should(BeClosed())

		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), Scaled(20*time.Second))
			defer cancel()
			stopped <- r.Stop(ctx)
		}()
		Eventually(src.deactivated).Should(BeClosed(), "Stop deactivates the spout, then drains")
		close(release) // the bolt now fails its task in the middle of the drain

		var err error
		Eventually(stopped).WithTimeout(Scaled(5*time.Second)).Should(Receive(&err), "Stop waited for the failed task")
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Wait()).To(Succeed())
		Expect(src.callbacks()).To(Equal(1), "the message in flight gets exactly one ack or nack")
	})
})

// stopSource hands out one message and says when its task is deactivated.
type stopSource struct {
	mu          sync.Mutex // mu guards sent and settled
	sent        bool
	settled     int
	deactivated chan struct{}
}

func (s *stopSource) Next() (int, Num, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent {
		return 0, Num{}, false
	}
	s.sent = true
	return 1, Num{N: 1}, true
}

func (s *stopSource) Ack(int)  { s.settle() }
func (s *stopSource) Nack(int) { s.settle() }

func (s *stopSource) settle() {
	s.mu.Lock()
	s.settled++
	s.mu.Unlock()
}

func (s *stopSource) callbacks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}

func (s *stopSource) Activate()   {}
func (s *stopSource) Deactivate() { close(s.deactivated) }
