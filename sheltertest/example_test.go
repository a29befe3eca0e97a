package sheltertest_test

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Order is the stream of the example.
type Order struct {
	ID   int
	Item string
}

// ship acks the orders it can ship and holds the others, which only the
// message timeout ends.
type ship struct{ holding chan<- Order }

func (s ship) Execute(o Order, input dsl.Tuple, c dsl.Collector) error {
	if o.Item == "lost" {
		s.holding <- o // never acked
		return nil
	}
	c.Ack(input)
	return nil
}

// A topology under test: the kit's Source feeds it and records every outcome,
// its Clock makes a 30-second message timeout pass at once, and WaitIdle
// waits until nothing is in flight.
func Example() {
	ctx := context.Background()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}, Order{3, "lost"})
	holding := make(chan Order, 1)

	b := dsl.New("orders", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
	orders := b.Spout("orders", src.Spout())
	shipper := b.Bolt("ship", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Order] { return ship{holding} }))
	b.Anchored(orders, shipper, dsl.Shuffle[Order]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(ctx, topo, clk.Option())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	fmt.Println("holding", (<-holding).Item)
	for len(src.Outcomes()) < 2 { // the shipped orders' trees complete
		time.Sleep(time.Millisecond)
	}
	clk.Advance(45 * time.Second) // the held order's tree times out
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	outcomes := src.Outcomes()
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].ID < outcomes[j].ID })
	for _, o := range outcomes {
		fmt.Printf("%d %s acked=%v\n", o.ID, o.Value.Item, o.Acked)
	}
	fmt.Println("exactly once:", src.Verify() == nil)
	// Output:
	// holding lost
	// 1 book acked=true
	// 2 lamp acked=true
	// 3 lost acked=false
	// exactly once: true
}
