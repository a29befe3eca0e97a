package sheltertest

import "github.com/goshelter/goshelter/dsl"

// HandlerFunc adapts a function to a [dsl.Handler], as http.HandlerFunc adapts
// one to an http.Handler. It lets a per-task constructor return a closure over
// the task's own state, which needs no lock:
//
//	dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Word] {
//		counts := map[string]int{} // this task's
//		return sheltertest.HandlerFunc[Word](func(w Word, out dsl.Emitter) error {
//			counts[w.Text]++
//			...
//		})
//	})
//
// The runtime calls it as it calls any Handler: from the task's goroutine,
// one input at a time.
type HandlerFunc[In any] func(in In, out dsl.Emitter) error

// Execute calls f(in, out).
func (f HandlerFunc[In]) Execute(in In, out dsl.Emitter) error { return f(in, out) }

// ManualFunc adapts a function to a [dsl.ManualHandler], for [dsl.Manual]'s
// per-task constructors. As with any ManualHandler, f acks or fails input
// through c, now or later (later from the task's goroutine, through
// [dsl.TaskInfo].Post); an error it returns fails input.
type ManualFunc[In any] func(in In, input dsl.Tuple, c dsl.Collector) error

// Execute calls f(in, input, c).
func (f ManualFunc[In]) Execute(in In, input dsl.Tuple, c dsl.Collector) error {
	return f(in, input, c)
}

// WithTick returns a handler that executes inputs with f and hands tick
// tuples to tick (the Tick hook: see "Optional hooks" in dsl's package doc),
// for a per-task constructor that needs both.
func (f HandlerFunc[In]) WithTick(tick func(t dsl.Tick, c dsl.Collector) error) dsl.Handler[In] {
	return tickingHandler[In]{f, tick}
}

// tickingHandler is a HandlerFunc with a Tick hook.
type tickingHandler[In any] struct {
	HandlerFunc[In]
	tick func(dsl.Tick, dsl.Collector) error
}

func (h tickingHandler[In]) Tick(t dsl.Tick, c dsl.Collector) error { return h.tick(t, c) }

// WithTick returns a manual handler that executes inputs with f and hands
// tick tuples to tick (the Tick hook), for [dsl.Manual]'s per-task
// constructors that need both: a bolt that acks what it batched on each
// tick, say.
func (f ManualFunc[In]) WithTick(tick func(t dsl.Tick, c dsl.Collector) error) dsl.ManualHandler[In] {
	return tickingManual[In]{f, tick}
}

// tickingManual is a ManualFunc with a Tick hook.
type tickingManual[In any] struct {
	ManualFunc[In]
	tick func(dsl.Tick, dsl.Collector) error
}

func (h tickingManual[In]) Tick(t dsl.Tick, c dsl.Collector) error { return h.tick(t, c) }
