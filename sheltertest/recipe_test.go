package sheltertest_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// recipeRuns is how many times TestREADMERecipeHolds runs the recipe: 1,000
// with GOSHELTER_SOAK=1 (the bar, under -race), 5 with -short, 50
// otherwise. WaitIdle used to return early in about 1 run in 4.
func recipeRuns() int {
	switch {
	case os.Getenv("GOSHELTER_SOAK") == "1":
		return 1000
	case testing.Short():
		return 5
	}
	return 50
}

// TestREADMERecipeHolds runs the README's "Testing a topology" recipe again
// and again: 300 messages, max spout pending 1, a manual clock advanced past
// the message timeout, WaitIdle, then Verify and every message's outcome.
func TestREADMERecipeHolds(t *testing.T) {
	runs := recipeRuns()
	for i := range runs {
		if err := readmeRecipe(300); err != nil {
			t.Fatalf("run %d of %d: %v", i+1, runs, err)
		}
	}
}

func readmeRecipe(n int) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	values := make([]item, n)
	for i := range values {
		values[i] = item{i + 1}
	}
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.NewSource(values...)
	b := dsl.New("recipe", dsl.Conf{dsl.MaxSpoutPending: 1})
	items := b.Spout("items", src.Spout())
	b.Anchored(items, b.Bolt("sink", dsl.AutoAck(func(item, dsl.Emitter) error { return nil })), dsl.Shuffle[item]())
	topo, err := b.Build()
	if err != nil {
		return err
	}
	running, err := supervision.Run(context.Background(), topo, clk.Option(), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := running.Stop(context.Background()); err == nil {
			err = stopErr
		}
	}()
	// First with no timeout to wait for (the clock's Advance can take long
	// enough to hide an early return), then as the README has it.
	if err := idleAndVerified(ctx, running, src, n); err != nil {
		return fmt.Errorf("before Advance: %w", err)
	}
	clk.Advance(45 * time.Second)
	return idleAndVerified(ctx, running, src, n)
}

// idleAndVerified waits until r is idle and checks that each of src's n
// messages got exactly one outcome, an ack.
func idleAndVerified(ctx context.Context, r *supervision.Running, src *sheltertest.Source[item], n int) error {
	if err := sheltertest.WaitIdle(ctx, r); err != nil {
		return err
	}
	if err := src.Verify(); err != nil {
		return err
	}
	if got := len(src.Acked()); got != n {
		return fmt.Errorf("WaitIdle returned after %d acks of %d messages", got, n)
	}
	return nil
}

// TestPackageDocRecipe is the package doc's recipe, as written there, with
// every outcome checked: the delivered parcels acked, the lost ones nacked
// (none when nothing is lost: then every parcel is acked), each exactly once.
// One run per call: run it with -count=1000 to soak it. It used to advance the
// clock right after Start, and lost about half of 1,000 runs to parcels timed
// out on their way to the bolt or their ack's way to the acker.
func TestPackageDocRecipe(t *testing.T) {
	for _, every := range []int{0, 100} { // every n-th parcel is lost; 0: none
		t.Run(fmt.Sprintf("lost every %d", every), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			lost := func(id int) bool { return every > 0 && id%every == 0 }
			ackUnlessLost := func(dsl.TaskInfo) dsl.ManualHandler[Parcel] {
				return sheltertest.ManualFunc[Parcel](func(p Parcel, in dsl.Tuple, c dsl.Collector) error {
					if !p.Lost {
						c.Ack(in)
					}
					return nil
				})
			}
			var wantAcked, wantNacked []int
			for id := 1; id <= 300; id++ {
				if lost(id) {
					wantNacked = append(wantNacked, id)
				} else {
					wantAcked = append(wantAcked, id)
				}
			}

			clk := sheltertest.NewClock(time.Unix(0, 0))
			src := sheltertest.Generate(300, func(i int) Parcel { return Parcel{ID: i + 1, Lost: lost(i + 1)} })
			shipped := new(sheltertest.Recorder[Parcel])
			b := dsl.New("shipping", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
			parcels := b.Spout("parcels", src.Spout())
			b.Anchored(parcels, b.Bolt("ship", shipped.Manual(ackUnlessLost)), dsl.Shuffle[Parcel]())
			topo, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			running := sheltertest.Start(t, topo, clk.Option())
			if err := shipped.Wait(ctx, 300); err != nil {
				t.Fatal(err)
			}
			if err := src.WaitOutcomes(ctx, len(wantAcked)); err != nil {
				t.Fatal(err)
			}
			clk.Advance(45 * time.Second)
			if err := sheltertest.WaitIdle(ctx, running); err != nil {
				t.Fatal(err)
			}
			if err := src.Verify(); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(src.Acked())); !slices.Equal(got, wantAcked) {
				t.Errorf("acked %d parcels %v, want the %d delivered", len(got), got, len(wantAcked))
			}
			if got := slices.Sorted(slices.Values(src.Nacked())); !slices.Equal(got, wantNacked) {
				t.Errorf("nacked %v, want the lost parcels %v", got, wantNacked)
			}
		})
	}
}
