package dsl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// Original, Odd and Even are the streams of FsShelter's "guaranteed" sample.
type (
	Original struct{ X int }
	Odd      struct{ X int }
	Even     struct{ X int }
)

// A topology is built once, printed, and run: a reliable spout hands out 1..6,
// a bolt adds one and splits the results into odd and even streams, and two
// sinks sum them. Every message is acked once its tree is done.
func ExampleNew() {
	var (
		next, acked int // touched only by the spout's task
		done        = make(chan struct{})
		mu          sync.Mutex // mu guards sums
		sums        = map[string]int{}
	)
	numbers := dsl.Reliable(
		func() (int, Original, bool) {
			if next == 6 {
				return 0, Original{}, false
			}
			next++
			return next, Original{X: next}, true
		},
		func(int) {
			if acked++; acked == 6 {
				close(done)
			}
		},
		func(id int) { fmt.Println("nacked", id) },
	)
	sum := func(stream string) func(x int) {
		return func(x int) { mu.Lock(); sums[stream] += x; mu.Unlock() }
	}

	b := dsl.New("guaranteed", dsl.Conf{dsl.MaxSpoutPending: 4})
	b.Streams(Odd{}, Even{})
	spout := b.Spout("numbers", numbers)
	addOne := b.Bolt("addOne", dsl.AutoAck(func(in Original, out dsl.Emitter) error {
		if (in.X+1)%2 == 1 {
			out.Emit(Odd{in.X + 1})
		} else {
			out.Emit(Even{in.X + 1})
		}
		return nil
	}), dsl.Parallelism(2))
	odds := b.Bolt("odds", dsl.AutoAck(func(o Odd, _ dsl.Emitter) error { sum("odd")(o.X); return nil }))
	evens := b.Bolt("evens", dsl.AutoAck(func(e Even, _ dsl.Emitter) error { sum("even")(e.X); return nil }))
	b.Anchored(spout, addOne, dsl.Shuffle[Original]())
	b.Anchored(addOne, odds, dsl.Fields(func(o Odd) int { return o.X % 10 }, "X"))
	b.Anchored(addOne, evens, dsl.Shuffle[Even]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range topo.Edges {
		fmt.Printf("%s %s/%s %s\n", e.From.ID, e.Stream.Name, e.Grouping, e.To.ID)
	}

	running, err := supervision.Run(context.Background(), topo)
	if err != nil {
		fmt.Println(err)
		return
	}
	select { // a failure ends the wait
	case <-done:
	case <-time.After(20 * time.Second):
		fmt.Println("not done")
	}
	if err := running.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println("acked:", acked, "odd sum:", sums["odd"], "even sum:", sums["even"])
	// Output:
	// numbers Original/shuffle addOne
	// addOne Odd/fields[X] odds
	// addOne Even/shuffle evens
	// acked: 6 odd sum: 15 even sum: 12
}

// A windowed bolt sums every three numbers. A number is acked when the window
// that holds it has closed, so the spout hears of the sixth only after the
// second window.
func ExampleWindowed() {
	var next, acked int // touched only by the spout's task
	done := make(chan struct{})
	numbers := dsl.Reliable(
		func() (int, Original, bool) {
			if next == 6 {
				return 0, Original{}, false
			}
			next++
			return next, Original{X: next}, true
		},
		func(int) {
			if acked++; acked == 6 {
				close(done)
			}
		},
		func(id int) { fmt.Println("nacked", id) },
	)
	b := dsl.New("sums", nil)
	spout := b.Spout("numbers", numbers)
	sums := b.Bolt("sums", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Original], dsl.Emitter) error {
		return func(w dsl.Window[Original], _ dsl.Emitter) error {
			sum := 0
			for _, n := range w.Tuples {
				sum += n.X
			}
			fmt.Println(len(w.Tuples), "numbers, sum", sum)
			return nil
		}
	}, dsl.WindowSpec[Original]{Count: 3}))
	b.Anchored(spout, sums, dsl.Shuffle[Original]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(context.Background(), topo)
	if err != nil {
		fmt.Println(err)
		return
	}
	select { // a failure ends the wait
	case <-done:
	case <-time.After(20 * time.Second):
		fmt.Println("not done")
	}
	if err := running.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println("acked:", acked)
	// Output:
	// 3 numbers, sum 6
	// 3 numbers, sum 15
	// acked: 6
}

// Build reports every problem of a definition in one *ValidationError.
func ExampleBuilder_Build() {
	b := dsl.New("broken", dsl.Conf{dsl.MaxSpoutPending: 0})
	spout := b.Spout("numbers", dsl.Unreliable(func() (Original, bool) { return Original{}, false }))
	addOne := b.Bolt("addOne", dsl.AutoAck(func(Original, dsl.Emitter) error { return nil }), dsl.Parallelism(0))
	b.Anchored(spout, addOne, dsl.Shuffle[Original]())
	b.Anchored("ghost", addOne, dsl.Shuffle[Original]())
	b.Bolt("orphan", dsl.Terminator(func(Odd) {}))

	_, err := b.Build()
	var invalid *dsl.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println(len(invalid.Problems), "problems")
	}
	fmt.Println(err)
	// Output:
	// 4 problems
	// dsl: topology "broken" is invalid:
	//   - topology dsl: bad conf: [conf "topology.max.spout.pending": 0 is below the minimum 1]
	//   - component "addOne" has parallelism 0; it must be at least 1
	//   - edge "ghost" -> "addOne": source component "ghost" is not defined
	//   - bolt "orphan" has no input
}

// A fields grouping hashes its key with a function that is the same in every
// process and run, so a key goes to the same task index every time.
func ExampleFields() {
	g := dsl.Fields(func(w Word) string { return w.Text }, "Text")
	h := g.Key(Word{"foobar"})
	fmt.Println(g)
	fmt.Printf("%#x, task index %d of 4\n", h, h%4)
	// Output:
	// fields[Text]
	// 0x85944171f73967e8, task index 0 of 4
}

// Word is a stream of the examples.
type Word struct{ Text string }

// Build numbers the tasks: component by component in the order of their ids,
// then the ackers. A bolt that emits direct finds its targets' task ids in
// TaskInfo.Model.Component(id).Tasks.
func ExampleTopology_Component() {
	b := dsl.New("numbering", dsl.Conf{dsl.AckerTasks: 2})
	spout := b.Spout("words", dsl.Unreliable(func() (Word, bool) { return Word{}, false }), dsl.Parallelism(2))
	router := b.Bolt("router", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Word] {
		targets := info.Model.Component("counter").Tasks
		return dsl.Handler[Word](directTo(targets))
	}))
	counter := b.Bolt("counter", dsl.Terminator(func(Word) {}), dsl.Parallelism(3))
	b.Anchored(spout, router, dsl.Shuffle[Word]())
	b.Unanchored(router, counter, dsl.Direct[Word]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []string{"words", "router", "counter"} {
		fmt.Println(id, topo.Component(id).Tasks)
	}
	fmt.Println("ackers", topo.AckerTasks)
	// Output:
	// words [5 6]
	// router [4]
	// counter [1 2 3]
	// ackers [7 8]
}

// directTo sends each word to one of targets, chosen by its length.
type directTo []int

func (d directTo) Execute(w Word, out dsl.Emitter) error {
	out.EmitDirect(d[len(w.Text)%len(d)], w)
	return nil
}

// Token is pointer-shaped (one pointer field), so emitting it allocates nothing.
type Token struct {
	Text *string `storm:"token"`
}

// A bolt that emits strings points each tuple into a chunk of 256 strings, so
// its emits cost 1/256 of an allocation instead of one each. Slots are never
// reused: emitted values stay immutable while other tasks hold them.
func ExampleEmitter_chunked() {
	var (
		mu   sync.Mutex // mu guards got
		got  []string
		done = make(chan struct{})
	)
	lines := []string{"to be or", "not to be"}
	b := dsl.New("tokens", dsl.Conf{})
	b.Streams(Token{})
	src := b.Spout("lines", dsl.Unreliable(func() (Line, bool) {
		if len(lines) == 0 {
			return Line{}, false
		}
		l := Line{Text: lines[0]}
		lines = lines[1:]
		return l, true
	}))
	split := b.Bolt("split", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Line] {
		chunk := make([]string, 0, 256) // this task's: no lock
		return tokenizer(func(l Line, out dsl.Emitter) error {
			for _, w := range strings.Fields(l.Text) {
				if len(chunk) == cap(chunk) {
					chunk = make([]string, 0, 256)
				}
				chunk = append(chunk, w)
				out.Emit(Token{Text: &chunk[len(chunk)-1]})
			}
			return nil
		})
	}))
	sink := b.Bolt("sink", dsl.AutoAck(func(t Token, _ dsl.Emitter) error {
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, *t.Text); len(got) == 6 {
			close(done)
		}
		return nil
	}))
	b.Unanchored(src, split, dsl.Shuffle[Line]())
	b.Unanchored(split, sink, dsl.Shuffle[Token]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := supervision.Run(context.Background(), topo)
	if err != nil {
		fmt.Println(err)
		return
	}
	select { // a failure ends the wait
	case <-done:
	case <-time.After(20 * time.Second):
		fmt.Println("not done")
	}
	if err := r.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}
	mu.Lock()
	fmt.Println(got)
	mu.Unlock()
	// Output: [to be or not to be]
}

// Line is a line of text.
type Line struct{ Text string }

// tokenizer makes a function a dsl.Handler.
type tokenizer func(Line, dsl.Emitter) error

func (f tokenizer) Execute(l Line, out dsl.Emitter) error { return f(l, out) }
