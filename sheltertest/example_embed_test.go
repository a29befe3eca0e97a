package sheltertest_test

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// runBuilt builds b and runs it on clk (nil: the wall clock) with a short drain, so
// inputs a bolt holds do not keep the stop waiting. The caller stops it.
func runBuilt(b *dsl.Builder, clk *sheltertest.Clock) (*supervision.Running, error) {
	topo, err := b.Build()
	if err != nil {
		return nil, err
	}
	opts := []supervision.Option{supervision.WithLogger(zap.NewNop()), supervision.WithDrainTimeout(10 * time.Millisecond)}
	if clk != nil {
		opts = append(opts, clk.Option())
	}
	return supervision.Run(context.Background(), topo, opts...)
}

// VerifyOutcomes states the whole outcome at once: exactly these orders were
// acked and those nacked, each once per handout.
func ExampleSource_VerifyOutcomes() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.Generate(6, func(i int) Order { return Order{ID: i + 1} })
	running, err := runOrders(src, func(o Order) error {
		if o.ID%3 == 0 {
			return fmt.Errorf("order %d: out of stock", o.ID)
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
	fmt.Println(src.VerifyOutcomes([]int{1, 2, 4, 5}, []int{3, 6}))
	fmt.Println(src.VerifyOutcomes([]int{1, 2, 3, 4, 5}, []int{6}))
	// Output:
	// <nil>
	// sheltertest: not acked [3], which should be; nacked [3], which should not be
}

// SpoutPerTask gives each spout task a source of its own, as each partition
// of a topic feeds one consumer; WaitIdle waits for all of them, and each
// records its own task's outcomes.
func ExampleSpoutPerTask() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	east := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	west := sheltertest.NewSource(Order{1, "pen"})
	rec := new(sheltertest.Recorder[Order])
	b := dsl.New("regions", nil)
	orders := b.Spout("orders", sheltertest.SpoutPerTask(east, west), dsl.Parallelism(2))
	b.Anchored(orders, b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Order]())
	running, err := runBuilt(b, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("east acked", ids(east, true), "by task", east.Handouts()[0].Task)
	fmt.Println("west acked", ids(west, true), "by task", west.Handouts()[0].Task)
	// Output:
	// east acked [1 2] by task 1
	// west acked [1] by task 2
}

// A recording bolt records the tick tuples it gets too, with the time of the
// topology's clock: here one tick every 10 s, on the kit's clock.
func ExampleRecorder_Ticks() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := new(sheltertest.Recorder[Order])
	b := dsl.New("ticked", dsl.Conf{dsl.TickFrequency: 10})
	b.Anchored(b.Spout("orders", sheltertest.NewSource[Order]().Spout()), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Order]())
	running, err := runBuilt(b, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	for n := 1; n <= 2; n++ {
		clk.Advance(10 * time.Second)
		if err := rec.WaitTicks(ctx, n); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, t := range rec.Ticks() {
		fmt.Println("tick at", t.At.Format(time.TimeOnly), "every", t.Value.Period)
	}
	// Output:
	// tick at 00:00:10 every 10s
	// tick at 00:00:20 every 10s
}

// Records say when each input arrived, on the topology's clock: here the
// kit's, moved between the orders.
func ExampleRecorder_Records() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC))
	src := sheltertest.NewSource(Order{1, "book"})
	rec := new(sheltertest.Recorder[Order])
	b := dsl.New("timed", nil)
	b.Anchored(b.Spout("orders", src.Spout()), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Order]())
	running, err := runBuilt(b, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := rec.Wait(ctx, 1); err != nil {
		fmt.Println(err)
		return
	}
	// Quiet, not Advance: the hour ends the spout's back-off, and Quiet
	// returns once the spout has asked the source again, found nothing and
	// backed off anew (100 ms by default). Then the push and the end of that
	// wait. With Advance, that Next could find nothing before the push and
	// arm its wait after the 100 ms passed: the lamp would wait forever.
	if err := clk.Quiet(ctx, running, time.Hour); err != nil {
		fmt.Println(err)
		return
	}
	src.Push(Order{2, "lamp"})
	clk.Advance(100 * time.Millisecond)
	if err := rec.Wait(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rec.Records() {
		fmt.Println(r.Value.Item, "at", r.At.Format(time.TimeOnly))
	}
	// Output:
	// book at 09:00:00
	// lamp at 10:00:00
}

// Hold records every input and never acks it: the trees stay open until the
// message timeout, which the kit's clock passes at once.
func ExampleRecorder_Hold() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	held := new(sheltertest.Recorder[Order])
	b := dsl.New("held", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
	b.Anchored(b.Spout("orders", src.Spout()), b.Bolt("hold", held.Hold()), dsl.Shuffle[Order]())
	running, err := runBuilt(b, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := held.Wait(ctx, 2); err != nil { // both held: their trees are open
		fmt.Println(err)
		return
	}
	fmt.Println("outcomes before the timeout:", len(src.Outcomes()))
	clk.Advance(45 * time.Second)
	if err := sheltertest.WaitIdle(ctx, running); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(src.VerifyOutcomes(nil, []int{1, 2}))
	// Output:
	// outcomes before the timeout: 0
	// <nil>
}

// Count is what the counting bolt of ExampleHandlerFunc_WithTick emits.
type Count struct{ N int }

// WithTick gives a per-task handler made of functions a Tick hook: this bolt
// counts words and emits its count on each tick.
func ExampleHandlerFunc_WithTick() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.NewSource(Word{"a"}, Word{"b"}, Word{"c"})
	counts := new(sheltertest.Recorder[Count])
	b := dsl.New("counted", dsl.Conf{dsl.TickFrequency: 60})
	b.Streams(Count{})
	words := b.Spout("words", src.Spout())
	count := b.Bolt("count", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Word] {
		n := 0 // the task's own
		return sheltertest.HandlerFunc[Word](func(Word, dsl.Emitter) error {
			n++
			return nil
		}).WithTick(func(_ dsl.Tick, c dsl.Collector) error {
			c.Emit(Count{n})
			return nil
		})
	}))
	b.Anchored(words, count, dsl.Shuffle[Word]())
	b.Unanchored(count, b.Bolt("counts", counts.Bolt()), dsl.Shuffle[Count]())
	running, err := runBuilt(b, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := sheltertest.WaitIdle(ctx, running); err != nil { // every word counted
		fmt.Println(err)
		return
	}
	clk.Advance(time.Minute)
	if err := counts.Wait(ctx, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("count at the tick:", counts.All())
	// Output: count at the tick: [{3}]
}

// ManualFunc's WithTick: a bolt that holds its inputs and acks them all on
// each tick, as a batching sink does.
func ExampleManualFunc_WithTick() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"})
	rec := new(sheltertest.Recorder[Order])
	b := dsl.New("batched", dsl.Conf{dsl.TickFrequency: 5})
	orders := b.Spout("orders", src.Spout())
	batch := b.Bolt("batch", rec.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Order] {
		var held []dsl.Tuple // the task's own
		return sheltertest.ManualFunc[Order](func(_ Order, in dsl.Tuple, _ dsl.Collector) error {
			held = append(held, in)
			return nil
		}).WithTick(func(_ dsl.Tick, c dsl.Collector) error {
			for _, in := range held {
				c.Ack(in)
			}
			held = held[:0]
			return nil
		})
	}))
	b.Anchored(orders, batch, dsl.Shuffle[Order]())
	running, err := runBuilt(b, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := rec.Wait(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acked before the tick:", ids(src, true))
	clk.Advance(5 * time.Second)
	if err := src.WaitSettled(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acked after it:", ids(src, true))
	// Output:
	// acked before the tick: []
	// acked after it: [1 2]
}

// Quiet checks that something does not happen, with no sleep: the clock
// moves 9 s, short of the 10 s tick frequency, and once every kit task has
// handled what the clock sent it, no tick has come; at 10 s one has.
func ExampleClock_Quiet() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	clk := sheltertest.NewClock(time.Unix(0, 0))
	rec := new(sheltertest.Recorder[Order])
	b := dsl.New("quiet", dsl.Conf{dsl.TickFrequency: 10})
	b.Anchored(b.Spout("orders", sheltertest.NewSource[Order]().Spout()), b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Order]())
	running, err := runBuilt(b, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := clk.Quiet(ctx, running, 9*time.Second); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ticks after 9s:", len(rec.Ticks()))
	if err := clk.Quiet(ctx, running, time.Second); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ticks after 10s:", len(rec.Ticks()))
	// Output:
	// ticks after 9s: 0
	// ticks after 10s: 1
}
