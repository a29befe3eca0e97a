package sheltertest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// Parcel is what the shipping topology ships; a lost one is never delivered.
type Parcel struct {
	ID   int
	Lost bool
}

// TestShipping runs a shipping topology on the test kit: a recording source of
// 300 parcels, a bolt that acks the parcels it delivers and holds the lost
// ones, and a manual clock that makes the 30-second message timeout pass at once.
func TestShipping(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.Generate(300, func(i int) Parcel { return Parcel{ID: i + 1, Lost: (i+1)%100 == 0} })
	shipped := new(sheltertest.Recorder[Parcel])

	b := dsl.New("shipping", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
	parcels := b.Spout("parcels", src.Spout())
	ship := b.Bolt("ship", shipped.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Parcel] {
		return sheltertest.ManualFunc[Parcel](func(p Parcel, in dsl.Tuple, c dsl.Collector) error {
			if !p.Lost {
				c.Ack(in) // a lost parcel is never acked: only its timeout ends its tree
			}
			return nil
		})
	}), dsl.Parallelism(2))
	b.Anchored(parcels, ship, dsl.Shuffle[Parcel]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Start stops the topology when the test ends, and fails the test if a
	// goroutine, a file descriptor or a child process outlives it.
	running := sheltertest.Start(t, topo, clk.Option())

	if err := shipped.Wait(ctx, 300); err != nil { // every parcel reached the bolt
		t.Fatal(err)
	}
	if err := src.WaitOutcomes(ctx, 297); err != nil { // every delivered parcel is acked
		t.Fatal(err)
	}
	// The lost parcels' trees time out, in microseconds.
	clk.Advance(45 * time.Second)
	if err := sheltertest.WaitIdle(ctx, running); err != nil { // every parcel settled, nothing in flight
		t.Fatal(err)
	}
	if err := src.Verify(); err != nil { // every parcel acked or nacked exactly once
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(src.Nacked())); !slices.Equal(got, []int{100, 200, 300}) {
		t.Errorf("nacked %v, want the lost parcels 100, 200 and 300", got)
	}
}
