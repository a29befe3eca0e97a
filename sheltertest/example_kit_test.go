package sheltertest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// ticked acks its inputs and passes on the tick tuples it gets.
type ticked struct{ ticks chan<- dsl.Tick }

func (t ticked) Execute(_ Order, input dsl.Tuple, c dsl.Collector) error {
	c.Ack(input)
	return nil
}

func (t ticked) Tick(tick dsl.Tick, _ dsl.Collector) error {
	t.ticks <- tick
	return nil
}

// A Clock drives everything the runtime times: here a bolt's tick tuples,
// every 10 s, come when the test moves the clock and carry its time.
func ExampleClock() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	ticks := make(chan dsl.Tick, 1)
	b := dsl.New("ticking", dsl.Conf{dsl.TickFrequency: 10})
	orders := b.Spout("orders", sheltertest.NewSource[Order]().Spout())
	b.Anchored(orders, b.Bolt("tally", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Order] { return ticked{ticks} })), dsl.Shuffle[Order]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(ctx, topo, clk.Option(), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	clk.Advance(10 * time.Second)
	var tick dsl.Tick
	select {
	case tick = <-ticks:
	case <-ctx.Done():
		fmt.Println("no tick:", ctx.Err())
		return
	}
	fmt.Println("now", clk.Now().Format(time.TimeOnly))
	fmt.Println("tick at", tick.Time.Format(time.TimeOnly), "every", tick.Period)
	// Output:
	// now 00:00:10
	// tick at 00:00:10 every 10s
}

// WaitIdle returns once every message the source handed out is settled and
// nothing is in flight: here the even orders fail, the odd ones ship.
func ExampleWaitIdle() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.Generate(5, func(i int) Order { return Order{ID: i + 1, Item: "book"} })
	running, err := runOrders(src, func(o Order) error {
		if o.ID%2 == 0 {
			return errors.New("out of stock")
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acked", ids(src, true), "nacked", ids(src, false))
	// Output: acked [1 3 5] nacked [2 4]
}

// NewSource holds a list of values, handed out in order with ids 1, 2, ...;
// Outcomes says what became of each.
func ExampleNewSource() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	running, err := runOrders(src, func(o Order) error {
		if o.Item == "lamp" {
			return errors.New("broken")
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	if err := src.WaitSettled(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range src.Outcomes() { // max spout pending 1: in order
		fmt.Printf("%d %s acked=%v\n", o.ID, o.Value.Item, o.Acked)
	}
	// Output:
	// 1 book acked=true
	// 2 lamp acked=false
}

// Push feeds a running source more values, as a test of a live topology
// would.
func ExampleSource_Push() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"})
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	if err := src.WaitSettled(ctx); err != nil {
		fmt.Println(err)
		return
	}
	src.Push(Order{2, "lamp"}, Order{3, "pen"})
	if err := src.WaitSettled(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acked", ids(src, true))
	// Output: acked [1 2 3]
}

// Verify checks that every message handed out got exactly one outcome; a
// source that handed out nothing fails it too, since its test checked nothing.
func ExampleSource_Verify() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	fmt.Println(sheltertest.NewSource(Order{1, "book"}).Verify())

	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := src.WaitSettled(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(src.Verify())
	// Output:
	// sheltertest: no message was handed out
	// <nil>
}
