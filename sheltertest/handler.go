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
