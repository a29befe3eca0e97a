package sheltertest

import (
	"context"
	"fmt"
	"sync"

	"github.com/goshelter/goshelter/dsl"
)

// Recorder keeps what the tasks of a recording bolt received, in order: a
// bolt from [Recorder.Bolt] (or [Recorder.Manual]) records every input before
// it is acked, with the task that got it. The zero value is ready to use; one
// Recorder backs one bolt (of any parallelism). It is safe for concurrent use:
// a test reads it while the tasks record. It must not be copied after first
// use.
type Recorder[T any] struct {
	mu     sync.Mutex  // mu guards the fields below
	all    []T         // every input, in the order recorded
	byTask map[int][]T // task id -> its inputs; a key for every task created
	// changed is closed, and cleared, when an input is recorded; Wait makes
	// it, so recording allocates nothing while no one waits.
	changed chan struct{}
}

// Bolt returns an auto-ack bolt that records each input, then acks it. Tick
// tuples are not recorded.
func (r *Recorder[T]) Bolt() *dsl.BoltSpec {
	return dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[T] {
		r.created(info.Task)
		return HandlerFunc[T](func(in T, _ dsl.Emitter) error {
			r.add(info.Task, in)
			return nil
		})
	})
}

// Manual returns [dsl.Manual](newHandler) with every input recorded before
// the task's handler sees it: the handler acks it, fails it (an error it
// returns fails it too) or holds it, as the test needs. A handler with a
// Tick(dsl.Tick, dsl.Collector) error method receives tick tuples, which are
// not recorded.
func (r *Recorder[T]) Manual(newHandler func(dsl.TaskInfo) dsl.ManualHandler[T]) *dsl.BoltSpec {
	return dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[T] {
		r.created(info.Task)
		return &recording[T]{r: r, task: info.Task, h: newHandler(info)}
	})
}

// recording records an input, then hands it to the task's own handler.
type recording[T any] struct {
	r    *Recorder[T]
	task int
	h    dsl.ManualHandler[T]
}

func (x *recording[T]) Execute(in T, input dsl.Tuple, c dsl.Collector) error {
	x.r.add(x.task, in)
	return x.h.Execute(in, input, c)
}

// Tick passes tick tuples on to a handler that wants them; the runtime only
// sends them to a bolt given a tick frequency.
func (x *recording[T]) Tick(t dsl.Tick, c dsl.Collector) error {
	if tk, ok := x.h.(interface {
		Tick(dsl.Tick, dsl.Collector) error
	}); ok {
		return tk.Tick(t, c)
	}
	return nil
}

func (r *Recorder[T]) created(task int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byTask == nil {
		r.byTask = map[int][]T{}
	}
	if _, ok := r.byTask[task]; !ok { // a restarted task keeps what it got
		r.byTask[task] = nil
	}
}

func (r *Recorder[T]) add(task int, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, v)
	r.byTask[task] = append(r.byTask[task], v)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// All returns every input recorded so far, in the order the tasks recorded
// them (each task's own inputs in the order it received them).
func (r *Recorder[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.all...)
}

// ByTask returns each task's inputs in the order it received them, keyed by
// task id (see [dsl.Component] for the numbering). Every task of the bolt has
// a key once created, even one that received nothing, so len(ByTask()) is the
// number of tasks.
func (r *Recorder[T]) ByTask() map[int][]T {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int][]T, len(r.byTask))
	for task, inputs := range r.byTask {
		out[task] = append([]T(nil), inputs...)
	}
	return out
}

// Len returns how many inputs were recorded.
func (r *Recorder[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.all)
}

// Wait waits until at least n inputs were recorded. If ctx ends first it
// returns ctx's cause with the count so far.
func (r *Recorder[T]) Wait(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		got := len(r.all)
		if got >= n {
			r.mu.Unlock()
			return nil
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("sheltertest: %d of %d inputs recorded: %w", got, n, context.Cause(ctx))
		}
	}
}
