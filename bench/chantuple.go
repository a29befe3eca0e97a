package main

import (
	"errors"

	"github.com/goshelter/goshelter/dsl"
)

// The limit with goshelter's data model: the unacked pipelines again, but each
// tuple is a dsl.Tuple (the value boxed in an interface, stream, source, task,
// id) and every stage calls its handler through a function value with a type
// assertion, as a dsl handler is called. The gap between this and the plain
// limit is what the tuple representation costs; the gap between this and
// goshelter is what the runtime costs.

var tupleStream = &dsl.Stream{Name: "Event"}

// handlers are called through variables so the compiler cannot inline them.
var (
	relayHandler = func(v any, emit func(any)) { emit(Relay(v.(Event))) }
	sinkHandler  = func(v any, t *tally) {
		if v.(Relay).Body != nil {
			t.inc()
		}
	}
)

func startChanTuple(s setup) (pipeline, error) {
	if s.acked || s.shape == wordCount {
		return nil, errors.New("chan+tuple has the unacked spout pipelines only")
	}
	c := &chanPipe{stopped: make(chan struct{})}
	first := newLink[dsl.Tuple]()
	last := first
	if s.shape == twoHop {
		last = newLink[dsl.Tuple]()
		c.goRun(func() { relayTuples(first, last) })
	}
	t := s.probe.tally()
	c.goRun(func() {
		for b := range last.data {
			for i := range b.t {
				v := b.t[i].Value
				if e, ok := v.(Event); ok {
					v = Relay(e)
				}
				sinkHandler(v, t)
			}
			last.recycle(b)
		}
	})
	go func() {
		defer close(c.stopped)
		for !c.stop.Load() {
			b := <-first.free
			for range batchSize {
				b.t = append(b.t, dsl.Tuple{Value: Event{Body: body}, Stream: tupleStream, Source: "spout", Task: 1})
			}
			first.data <- b
		}
		close(first.data)
	}()
	return c, nil
}

func relayTuples(in, out *link[dsl.Tuple]) {
	w := &writer[dsl.Tuple]{l: out}
	emit := func(v any) { w.put(dsl.Tuple{Value: v, Stream: tupleStream, Source: "relay", Task: 2}) }
	for b := range in.data {
		for i := range b.t {
			relayHandler(b.t[i].Value, emit)
		}
		in.recycle(b)
		if len(in.data) == 0 {
			w.flush()
		}
	}
	w.flush()
	close(out.data)
}
