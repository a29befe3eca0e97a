package sheltertest_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.uber.org/zap"

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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
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
	if err := src.WaitOutcomes(ctx, 2); err != nil { // the shipped orders' trees complete
		fmt.Println(err)
		return
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

// runOrders runs src into a bolt that acks each order for which handle
// returns nil and fails the others, one order at a time (max spout pending
// 1), restarting at once after a failure. The caller stops it.
func runOrders(src *sheltertest.Source[Order], handle func(Order) error, opts ...supervision.Option) (*supervision.Running, error) {
	b := dsl.New("orders", dsl.Conf{dsl.MaxSpoutPending: 1})
	orders := b.Spout("orders", src.Spout())
	b.Anchored(orders, b.Bolt("handle", dsl.AutoAck(func(o Order, _ dsl.Emitter) error { return handle(o) })), dsl.Shuffle[Order]())
	topo, err := b.Build()
	if err != nil {
		return nil, err
	}
	opts = append([]supervision.Option{supervision.WithLogger(zap.NewNop()),
		supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond, Cap: time.Millisecond})}, opts...)
	return supervision.Run(context.Background(), topo, opts...)
}

// shipAll ships every order.
func shipAll(Order) error { return nil }

// A generated source: 100 orders made as the spout asks for them.
func ExampleGenerate() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.Generate(100, func(i int) Order { return Order{ID: i + 1, Item: "book"} })
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil { // all 100 handed out and acked
		fmt.Println(err)
		return
	}
	fmt.Println(len(src.Acked()), "acked, exactly once:", src.Verify() == nil)
	// Output: 100 acked, exactly once: true
}

// A source that replays a failed order, as a spout over a broker would: the
// lamp fails twice, then ships.
func ExampleReplay() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}).With(sheltertest.Replay(3))
	failures := 0
	running, err := runOrders(src, func(o Order) error {
		if o.Item == "lamp" && failures < 2 {
			failures++
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
	for _, h := range src.Handouts() {
		fmt.Printf("%d %s, attempt %d\n", h.ID, h.Value.Item, h.Attempt)
	}
	fmt.Println("nacked", src.Nacked(), "acked", src.Acked(), "exactly once per attempt:", src.Verify() == nil)
	// Output:
	// 1 book, attempt 1
	// 2 lamp, attempt 1
	// 2 lamp, attempt 2
	// 2 lamp, attempt 3
	// nacked [2 2] acked [1 2] exactly once per attempt: true
}

// Options go on a source of values with With: here the lamp fails once and
// is replayed.
func ExampleSource_With() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}).With(
		sheltertest.Replay(-1), // every nacked order, without limit
		sheltertest.OnNack(func(id int) error { fmt.Println("nacked", id); return nil }),
	)
	failed := false
	running, err := runOrders(src, func(o Order) error {
		if o.Item == "lamp" && !failed {
			failed = true
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
	fmt.Println("acked", src.Acked())
	// Output:
	// nacked 2
	// acked [1 2]
}

// Next fails for one order: the spout's task fails, the topology restarts,
// and the order is handed out again with its id.
func ExampleOnNext() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	failed := false // OnNext runs on the spout's task, one call at a time
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}).With(sheltertest.OnNext(func(id int) error {
		if id == 2 && !failed {
			failed = true
			return errors.New("broker unreachable")
		}
		return nil
	}))
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	s := running.Stats()
	fmt.Println("restarts:", s.Restarts)
	fmt.Println("last error:", s.Components["orders"].LastError)
	fmt.Println("acked", src.Acked(), "exactly once:", src.Verify() == nil)
	// Output:
	// restarts: 1
	// last error: sheltertest: Next of message 2: broker unreachable
	// acked [1 2] exactly once: true
}

// Ack panics for one order: the ack counts, the spout's task fails, and the
// next incarnation goes on with the next order.
func ExampleOnAck() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}).With(sheltertest.OnAck(func(id int) error {
		if id == 1 {
			panic("commit failed")
		}
		return nil
	}))
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("restarts:", running.Stats().Restarts)
	fmt.Println("acked", src.Acked(), "exactly once:", src.Verify() == nil)
	// Output:
	// restarts: 1
	// acked [1 2] exactly once: true
}

// OnNack sees every nack, after it is recorded.
func ExampleOnNack() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}).With(
		sheltertest.OnNack(func(id int) error { fmt.Println("nacked", id); return nil }))
	running, err := runOrders(src, func(o Order) error {
		if o.Item == "lamp" {
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
	fmt.Println("acked", src.Acked())
	// Output:
	// nacked 2
	// acked [1]
}

// What Next handed out, to which task, and how many were outstanding then.
func ExampleSource_Handouts() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range src.Handouts() {
		fmt.Printf("%d %s to task %d, %d outstanding\n", h.ID, h.Value.Item, h.Task, h.Outstanding)
	}
	// Output:
	// 1 book to task 2, 1 outstanding
	// 2 lamp to task 2, 1 outstanding
}

// MaxOutstanding checks max spout pending from the source's side.
func ExampleSource_MaxOutstanding() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.Generate(50, func(i int) Order { return Order{ID: i} })
	running, err := runOrders(src, shipAll) // max spout pending 1
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("most outstanding:", src.MaxOutstanding())
	// Output: most outstanding: 1
}

// The ids acked and nacked, in the order of their outcomes.
func ExampleSource_Acked() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.Generate(4, func(i int) Order { return Order{ID: i + 1} })
	running, err := runOrders(src, func(o Order) error {
		if o.ID%2 == 1 {
			return errors.New("odd")
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
	fmt.Println("acked", src.Acked())
	// Output: acked [2 4]
}

// Nacked lists each nack, so a replayed message shows once per failure.
func ExampleSource_Nacked() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.Generate(4, func(i int) Order { return Order{ID: i + 1} })
	running, err := runOrders(src, func(o Order) error {
		if o.ID%2 == 1 {
			return errors.New("odd")
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
	fmt.Println("nacked", src.Nacked())
	// Output: nacked [1 3]
}

// Close after Stop: a call the stopped topology still made would fail Verify.
func ExampleSource_Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"})
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	if err := running.Stop(ctx); err != nil {
		fmt.Println(err)
		return
	}
	src.Close()
	fmt.Println("exactly once, nothing after the stop:", src.Verify() == nil)
	// Output: exactly once, nothing after the stop: true
}

// Waiting for outcomes: a signal from Ack and Nack, no polling.
func ExampleSource_WaitOutcomes() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	running, err := runOrders(src, shipAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := src.WaitOutcomes(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acked", src.Acked())
	// Output: acked [1 2]
}

// WaitSettled waits until every order is handed out and has its outcome;
// here one is held until its timeout, which the kit's clock brings.
func ExampleSource_WaitSettled() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lost"})
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

	select {
	case <-holding:
	case <-ctx.Done():
		fmt.Println("not held:", ctx.Err())
		return
	}
	if err := src.WaitOutcomes(ctx, 1); err != nil { // the book's tree completes
		fmt.Println(err)
		return
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	fmt.Println(src.WaitSettled(short))
	clk.Advance(45 * time.Second) // past the 30 s message timeout
	fmt.Println(src.WaitSettled(ctx), src.Acked(), src.Nacked())
	// Output:
	// sheltertest: 1 outstanding: context deadline exceeded
	// <nil> [1] [2]
}
