package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/supervision"
)

// Event is the benchmark tuple. It holds one pointer, so boxing it into the
// Emit(any) interface does not allocate: the allocations measured are the
// runtime's own. (A struct larger than a pointer costs the emitter one small
// allocation per Emit; the word count below keeps its strings in chunks and
// emits pointer-shaped tuples, as dsl's package doc shows.)
type Event struct {
	Body *Body `storm:"body"`
}

// Relay is what the middle bolt emits: the same body on a stream of its own.
type Relay struct {
	Body *Body `storm:"body"`
}

// Body is the immutable payload every tuple points to.
type Body struct {
	Key  uint64
	Text string
}

var body = &Body{Key: 42, Text: "benchmark"}

// Sentence and Word are the word count's streams. Each holds one pointer, so
// emitting them allocates nothing: the texts live in chunks (see dsl's package
// doc, "Emitting without an allocation per tuple").
type Sentence struct {
	Text *string `storm:"sentence"`
}

type Word struct {
	Text *string `storm:"word"`
}

// chunk hands out pointers to copies of strings, allocating them chunkSize at
// a time. Slots are never reused: emitted values are immutable.
type chunk []string

const chunkSize = 256

func (c *chunk) put(s string) *string {
	if len(*c) == cap(*c) {
		*c = make([]string, 0, chunkSize)
	}
	*c = append(*c, s)
	return &(*c)[len(*c)-1]
}

var sentences = []string{
	"the cow jumped over the moon",
	"an apple a day keeps the doctor away",
	"four score and seven years ago",
	"snow white and the seven dwarfs",
	"i am at two with nature",
}

// eachWord calls fn for every space-separated word of s without allocating.
func eachWord(s string, fn func(string)) {
	start := -1
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if start >= 0 {
				fn(s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// eventSource is the reliable spout's source: message ids are the emit stamp of
// sampled tuples (0 for the others), so Ack turns an id into a latency at no cost.
type eventSource struct {
	p   *probe
	lim *limiter
	seq uint64
}

func (e *eventSource) Next() (int64, Event, bool) {
	if !e.lim.take() {
		return 0, Event{}, false
	}
	e.seq++
	var id int64
	if e.seq%sampleEvery == 0 {
		id = stamp()
	}
	return id, Event{Body: body}, true
}

func (e *eventSource) Ack(id int64) {
	if id != 0 {
		e.p.lat.record(time.Duration(stamp() - id))
	}
}

func (e *eventSource) Nack(int64) { e.p.nacks.Add(1) }

// handlerFunc makes a function a dsl.Handler, for bolts whose state is a
// closure's.
type handlerFunc[In any] func(In, dsl.Emitter) error

func (f handlerFunc[In]) Execute(in In, out dsl.Emitter) error { return f(in, out) }

// sinkBolt counts its inputs and acks them.
func sinkBolt[T any](p *probe) *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[T] {
		t := p.tally()
		return handlerFunc[T](func(T, dsl.Emitter) error {
			t.inc()
			return nil
		})
	})
}

func goshelterConf(s setup) dsl.Conf {
	c := dsl.Conf{
		dsl.MaxSpoutPending: s.pending,
		dsl.AckerTasks:      s.ackers,
		dsl.SpoutWait:       s.spoutWait,
		dsl.BatchSize:       batchSize,
	}
	if s.flushOff {
		c[dsl.BatchFlushInterval] = 0
	}
	return c
}

// goshelterTopology builds the pipeline for s: reliable spout and anchored edges
// when acked, an unreliable spout and unanchored edges otherwise.
func goshelterTopology(s setup) (*dsl.Topology, error) {
	b := dsl.New("bench", goshelterConf(s))
	switch s.shape {
	case wordCount:
		return wordCountTopology(b, s)
	case slidingWindow:
		return windowTopology(b, s)
	case slowSource:
		return slowSourceTopology(b, s)
	}
	var spout string
	edge, tasks := b.Unanchored, dsl.Parallelism(max(s.tasks, 1))
	if s.acked {
		edge = b.Anchored
		spout = b.Spout("spout", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int64, Event] {
			return &eventSource{p: s.probe, lim: newLimiter(s.rate)}
		}), tasks)
	} else {
		spout = b.Spout("spout", dsl.UnreliableFrom(func(dsl.TaskInfo) func() (Event, bool) {
			lim := newLimiter(s.rate)
			return func() (Event, bool) { return Event{Body: body}, lim.take() }
		}), tasks)
	}
	if s.shape == oneHop {
		edge(spout, b.Bolt("null", sinkBolt[Event](s.probe), tasks), dsl.Shuffle[Event]())
		return b.Build()
	}
	b.Streams(Relay{})
	relay := b.Bolt("relay", dsl.AutoAck(func(e Event, out dsl.Emitter) error {
		out.Emit(Relay(e))
		return nil
	}))
	edge(spout, relay, dsl.Shuffle[Event]())
	edge(relay, b.Bolt("null", sinkBolt[Relay](s.probe)), dsl.Shuffle[Relay]())
	return b.Build()
}

// wordCountTopology is sentences -> split (shuffle) -> count (fields on the
// word, 2 tasks), unreliable and unanchored.
func wordCountTopology(b *dsl.Builder, s setup) (*dsl.Topology, error) {
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.UnreliableFrom(func(dsl.TaskInfo) func() (Sentence, bool) {
		i := 0
		return func() (Sentence, bool) {
			i++
			// The corpus is immutable: point at it, nothing to allocate.
			return Sentence{&sentences[i%len(sentences)]}, true
		}
	}))
	split := b.Bolt("split", splitBolt())
	count := b.Bolt("count", countBolt(s), dsl.Parallelism(2))
	b.Unanchored(spout, split, dsl.Shuffle[Sentence]())
	b.Unanchored(split, count, dsl.Fields(func(w Word) string { return *w.Text }, "word"))
	return b.Build()
}

type goshelterPipe struct{ r *supervision.Running }

func startGoshelter(s setup) (pipeline, error) {
	topo, err := goshelterTopology(s)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if s.hops != nil { // this topology's tasks time their hops; no other's do
		ctx = hops.NewContext(ctx, s.hops)
	}
	r, err := supervision.Run(ctx, topo,
		supervision.WithoutRestarts(), supervision.WithDrainTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	return goshelterPipe{r}, nil
}

func (g goshelterPipe) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := g.r.Stop(ctx)
	if errors.Is(err, supervision.ErrStopped) {
		return fmt.Errorf("the topology stopped by itself: %w", g.r.Wait())
	}
	return err
}

// windowTopology is spout -> window (a sliding count window of 1,000 tuples
// every 100, unanchored) -> null. The tuples counted are those entering the
// window (each call's New); each call also sums a field over the whole window
// and emits the sum, as a windowed aggregation does.
func windowTopology(b *dsl.Builder, s setup) (*dsl.Topology, error) {
	b.Streams(Relay{})
	spout := b.Spout("spout", dsl.UnreliableFrom(func(dsl.TaskInfo) func() (Event, bool) {
		lim := newLimiter(s.rate)
		return func() (Event, bool) { return Event{Body: body}, lim.take() }
	}))
	window := b.Bolt("window", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Event], dsl.Emitter) error {
		t := s.probe.tally()
		return func(w dsl.Window[Event], out dsl.Emitter) error {
			t.add(len(w.New))
			var keys uint64
			for _, e := range w.Tuples {
				keys += e.Body.Key
			}
			out.Emit(Relay{Body: &Body{Key: keys}}) // a new body: emitted values are immutable
			return nil
		}
	}, dsl.WindowSpec[Event]{Count: 1000, SlideCount: 100}))
	null := b.Bolt("null", dsl.AutoAck(func(Relay, dsl.Emitter) error { return nil }))
	b.Unanchored(spout, window, dsl.Shuffle[Event]())
	b.Unanchored(window, null, dsl.Shuffle[Relay]())
	return b.Build()
}

// Stamped is the slow source's tuple: when its Next returned it.
type Stamped struct {
	At int64 `storm:"at"`
}

// slowPeriod is the slow source's time between tuples: 1,000 tuples/s.
const slowPeriod = time.Millisecond

// slowSourceTopology is a spout whose Next blocks until its next tuple is due
// (one every slowPeriod, as a source reading a slow socket would) -> null bolt,
// unreliable. The null bolt records each tuple's emit-to-execute latency: how
// long it waited in batches and mailboxes, which is what batching costs a slow
// source.
func slowSourceTopology(b *dsl.Builder, s setup) (*dsl.Topology, error) {
	spout := b.Spout("slow", dsl.UnreliableFrom(func(dsl.TaskInfo) func() (Stamped, bool) {
		due := time.Now()
		return func() (Stamped, bool) {
			due = due.Add(slowPeriod)
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			} else if d < -100*slowPeriod {
				due = time.Now() // after a long stall, do not burst to catch up
			}
			return Stamped{At: stamp()}, true
		}
	}))
	null := b.Bolt("null", dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Stamped] {
		t := s.probe.tally()
		return handlerFunc[Stamped](func(v Stamped, _ dsl.Emitter) error {
			s.probe.lat.record(time.Duration(stamp() - v.At))
			t.add(1) // publish every tuple: at 1,000 tuples/s a window holds few
			return nil
		})
	}))
	b.Unanchored(spout, null, dsl.Shuffle[Stamped]())
	return b.Build()
}

// splitBolt emits each word of a sentence, chunk-allocated (see chunk).
func splitBolt() *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Sentence] {
		var words chunk
		emit := func(out dsl.Emitter) func(string) {
			return func(w string) { out.Emit(Word{words.put(w)}) }
		}
		var out dsl.Emitter
		each := emit(nil)
		return handlerFunc[Sentence](func(s Sentence, e dsl.Emitter) error {
			if e != out { // the task's emitter: build the callback once, not per sentence
				out, each = e, emit(e)
			}
			eachWord(*s.Text, each)
			return nil
		})
	})
}

// countBolt counts words in a map per task, with the probe's tally.
func countBolt(s setup) *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(dsl.TaskInfo) dsl.Handler[Word] {
		t := s.probe.tally()
		counts := map[string]int{}
		return handlerFunc[Word](func(w Word, _ dsl.Emitter) error {
			counts[*w.Text]++
			t.inc()
			return nil
		})
	})
}
