package sheltertest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// Word is a stream of the examples below.
type Word struct{ Text string }

// FirstSeen is what the dedup bolt of ExampleHandlerFunc emits.
type FirstSeen struct{ Text string }

// A recording bolt with two tasks, each getting every order (All grouping):
// ByTask has a key per task and keeps each task's inputs in the order it got
// them.
func ExampleRecorder() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	rec := new(sheltertest.Recorder[Order])
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lamp"}, Order{3, "pen"})

	b := dsl.New("recorded", nil)
	orders := b.Spout("orders", src.Spout())
	b.Anchored(orders, b.Bolt("sink", rec.Bolt(), dsl.Parallelism(2)), dsl.All[Order]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	if err := rec.Wait(ctx, 6); err != nil { // no polling: Wait wakes on each input
		fmt.Println(err)
		return
	}
	byTask := rec.ByTask()
	fmt.Println(len(byTask), "tasks,", rec.Len(), "inputs")
	for _, task := range slices.Sorted(maps.Keys(byTask)) {
		fmt.Println(byTask[task])
	}
	// Output:
	// 2 tasks, 6 inputs
	// [{1 book} {2 lamp} {3 pen}]
	// [{1 book} {2 lamp} {3 pen}]
}

// A recording bolt that settles its inputs itself: it records every order,
// fails the lost one and acks the others, so the source sees one nack.
func ExampleRecorder_Manual() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	rec := new(sheltertest.Recorder[Order])
	src := sheltertest.NewSource(Order{1, "book"}, Order{2, "lost"}, Order{3, "pen"})
	failLost := rec.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Order] {
		return sheltertest.ManualFunc[Order](func(o Order, input dsl.Tuple, c dsl.Collector) error {
			if o.Item == "lost" {
				return errors.New("lost in transit") // fails the input, and logs why
			}
			c.Ack(input)
			return nil
		})
	})

	b := dsl.New("manual", nil)
	orders := b.Spout("orders", src.Spout())
	b.Anchored(orders, b.Bolt("ship", failLost), dsl.Shuffle[Order]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	if err := rec.Wait(ctx, 3); err != nil {
		fmt.Println(err)
		return
	}
	if err := sheltertest.WaitIdle(ctx, running); err != nil { // every tree settled
		fmt.Println(err)
		return
	}
	fmt.Println("recorded", rec.All())
	fmt.Println("acked", ids(src, true), "nacked", ids(src, false))
	// Output:
	// recorded [{1 book} {2 lost} {3 pen}]
	// acked [1 3] nacked [2]
}

// HandlerFunc lets AutoAckFrom's per-task constructor return a closure over
// the task's own state: here each task remembers the words it has seen, and a
// fields grouping sends every copy of a word to the same task.
func ExampleHandlerFunc() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	firsts := new(sheltertest.Recorder[FirstSeen])
	src := sheltertest.NewSource(Word{"a"}, Word{"b"}, Word{"a"}, Word{"c"}, Word{"b"}, Word{"a"})
	dedup := dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Word] {
		seen := map[string]bool{} // this task's, so no lock
		return sheltertest.HandlerFunc[Word](func(w Word, out dsl.Emitter) error {
			if !seen[w.Text] {
				seen[w.Text] = true
				out.Emit(FirstSeen{w.Text})
			}
			return nil
		})
	})

	b := dsl.New("dedup", nil).Streams(FirstSeen{})
	words := b.Spout("words", src.Spout())
	d := b.Bolt("dedup", dedup, dsl.Parallelism(2))
	b.Anchored(words, d, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	b.Anchored(d, b.Bolt("firsts", firsts.Bolt()), dsl.Shuffle[FirstSeen]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	if err := firsts.Wait(ctx, 3); err != nil { // a, b and c, once each
		fmt.Println(err)
		return
	}
	got := firsts.All()
	sort.Slice(got, func(i, j int) bool { return got[i].Text < got[j].Text })
	fmt.Println(got)
	// Output:
	// [{a} {b} {c}]
}

// ManualFunc lets Manual's per-task constructor return a closure: here each
// task acks its inputs in pairs, the first when the second arrives.
func ExampleManualFunc() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	src := sheltertest.NewSource(Word{"a"}, Word{"b"}, Word{"c"}, Word{"d"})
	paired := make(chan struct{}, 2)
	pairs := dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Word] {
		var held []dsl.Tuple // this task's
		return sheltertest.ManualFunc[Word](func(_ Word, input dsl.Tuple, c dsl.Collector) error {
			held = append(held, input)
			if len(held) == 2 {
				for _, t := range held {
					c.Ack(t)
				}
				held = held[:0]
				paired <- struct{}{}
			}
			return nil
		})
	})

	b := dsl.New("pairs", nil)
	words := b.Spout("words", src.Spout())
	b.Anchored(words, b.Bolt("pairs", pairs), dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	for range 2 { // all four acked by the bolt
		select {
		case <-paired:
		case <-ctx.Done():
			fmt.Println("not acked:", ctx.Err())
			return
		}
	}
	if err := sheltertest.WaitIdle(ctx, running); err != nil { // and their trees settled
		fmt.Println(err)
		return
	}
	fmt.Println("acked", ids(src, true))
	// Output:
	// acked [1 2 3 4]
}

// Start runs a topology for the length of a test. In a test, t is the test's
// *testing.T (or GinkgoTB() in a ginkgo spec); here a stand-in runs the
// cleanups Start registers, as the test would when it ends: the topology is
// stopped, and nothing it started is left behind.
func ExampleStart() {
	t := &standIn{}
	rec := new(sheltertest.Recorder[Word])
	src := sheltertest.NewSource(Word{"hello"}, Word{"world"})
	b := dsl.New("started", nil)
	words := b.Spout("words", src.Spout())
	b.Anchored(words, b.Bolt("sink", rec.Bolt()), dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}

	running := sheltertest.Start(t, topo) // stopped and checked at t's cleanup
	if err := rec.Wait(context.Background(), 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.All())

	t.end()
	select {
	case <-running.Done():
		fmt.Println("stopped; test failed:", t.failed)
	default:
		fmt.Println("still running")
	}
	// Output:
	// [{hello} {world}]
	// stopped; test failed: false
}

// standIn is the part of a *testing.T that Start uses.
type standIn struct {
	testing.TB
	cleanups []func()
	failed   bool
}

func (t *standIn) Helper()                         {}
func (t *standIn) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (t *standIn) Logf(format string, args ...any) {}
func (t *standIn) Errorf(format string, args ...any) {
	t.failed = true
	fmt.Printf(format+"\n", args...)
}
func (t *standIn) Fatalf(format string, args ...any) { t.Errorf(format, args...); panic("fatal") }

// end runs the cleanups, last registered first, as a test does when it ends.
func (t *standIn) end() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// ids lists the ids src acked (or nacked), sorted.
func ids[T any](src *sheltertest.Source[T], acked bool) []int {
	var out []int
	for _, o := range src.Outcomes() {
		if o.Acked == acked {
			out = append(out, o.ID)
		}
	}
	sort.Ints(out)
	return out
}
