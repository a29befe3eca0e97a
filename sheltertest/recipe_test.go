package sheltertest_test

import (
	"context"
	"fmt"
	"os"
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
