// Command served is the storm-host suite's topology with the shapes whose
// semantics under Storm must equal goshelter's own runtime: a reliable spout
// on an unanchored edge, windows by count and by event time, and a
// processing-time window whose ticks only the Flux export can ask for.
//
//	served -flux ./served serve   # the Flux definition
//	served serve                  # one component, as Storm's ShellSpout/ShellBolt start it
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
)

// Num is a spout message: its number and how many times it was handed out.
type Num struct {
	N       int
	Attempt int
}

// Event is a number with an event time, in milliseconds.
type Event struct {
	N  int
	At int64
}

// Sum is what a window emits: the sum of the numbers in it, and how many.
type Sum struct {
	Total int
	Count int
}

// replaying hands out 1..n and replays what is nacked. On the first attempt
// of an odd number the "judge" bolt fails it, so the message comes back only
// if the spout's source hears the Storm acker's fail.
type replaying struct {
	next, n int
	retry   []int
	tries   map[int]int
}

func (r *replaying) Next() (int, Num, bool) {
	id := 0
	switch {
	case len(r.retry) > 0:
		id, r.retry = r.retry[0], r.retry[1:]
	case r.next < r.n:
		r.next++
		id = r.next
	default:
		return 0, Num{}, false
	}
	r.tries[id]++
	return id, Num{N: id, Attempt: r.tries[id]}, true
}

func (r *replaying) Ack(int) {}

func (r *replaying) Nack(id int) { r.retry = append(r.retry, id) }

// events hands out n events, 1 s of event time apart.
type events struct{ next, n int }

func (e *events) Next() (int, Event, bool) {
	if e.next >= e.n {
		return 0, Event{}, false
	}
	e.next++
	return e.next, Event{N: e.next, At: int64(e.next) * 1000}, true
}

func (*events) Ack(int)  {}
func (*events) Nack(int) {}

func topology() (*dsl.Topology, error) {
	b := dsl.New("served", dsl.Conf{dsl.MessageTimeout: 60})
	b.Streams(Num{}, Event{}, Sum{})
	numbers := b.Spout("numbers", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Num] {
		return &replaying{n: 6, tries: map[int]int{}}
	}))
	judge := b.Bolt("judge", dsl.AutoAck(func(in Num, _ dsl.Emitter) error {
		if in.N%2 == 1 && in.Attempt == 1 {
			return errors.New("odd numbers fail their first attempt")
		}
		return nil
	}))
	b.Unanchored(numbers, judge, dsl.Shuffle[Num]())

	evs := b.Spout("events", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Event] { return &events{n: 9} }))
	sum := func(w dsl.Window[Event], out dsl.Emitter) error {
		s := Sum{}
		for _, e := range w.Tuples {
			s.Total += e.N
			s.Count++
		}
		out.Emit(s)
		return nil
	}
	byCount := b.Bolt("bycount", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Event], dsl.Emitter) error { return sum },
		dsl.WindowSpec[Event]{Count: 3}))
	byTime := b.Bolt("bytime", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Event], dsl.Emitter) error { return sum },
		dsl.WindowSpec[Event]{Length: 3 * time.Second, Timestamp: func(e Event) time.Time { return time.UnixMilli(e.At) }}))
	sliding := b.Bolt("sliding", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Event], dsl.Emitter) error { return sum },
		dsl.WindowSpec[Event]{Length: 4 * time.Second, Slide: 2 * time.Second}))
	sink := b.Bolt("sink", dsl.AutoAck(func(Sum, dsl.Emitter) error { return nil }))
	for _, w := range []string{byCount, byTime} {
		b.Anchored(evs, w, dsl.Shuffle[Event]())
	}
	// The processing-time window reads the child's own clock: it gets a
	// spout of its own, which the suite leaves idle.
	b.Anchored(b.Spout("moments", dsl.Unreliable(func() (Event, bool) { return Event{}, false })), sliding, dsl.Shuffle[Event]())
	for _, w := range []string{byCount, byTime, sliding} {
		b.Anchored(w, sink, dsl.Shuffle[Sum]())
	}
	return b.Build()
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "served:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	topo, err := topology()
	if err != nil {
		return err
	}
	switch {
	case len(args) > 0 && args[0] == "-flux":
		return multilang.Flux(os.Stdout, topo, args[1:]...)
	case len(args) > 0 && args[0] == "serve":
		return multilang.Serve(context.Background(), topo, os.Stdin, os.Stdout)
	}
	return errors.New("usage: served -flux COMMAND... | served serve")
}
