package sheltertest

import (
	"context"
	"fmt"
	"sync"
	"time"

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

	records []Record[T]                       // all, with their tasks and times
	ticks   []Record[dsl.Tick]                // the tick tuples, in the order received
	posts   map[int]func(func(dsl.Collector)) // each task's TaskInfo.Post, for Clock.Quiet

	// changed is closed, and cleared, when an input is recorded; Wait makes
	// it, so recording allocates nothing while no one waits.
	changed chan struct{}
}

// Record is one input (or tick tuple) a recording bolt's task received, and
// when: At reads the clock the topology runs on (a [Clock] given to it, else
// the wall clock) as the task received it.
type Record[T any] struct {
	Value T
	Task  int
	At    time.Time
}

// Bolt returns an auto-ack bolt that records each input, then acks it, and
// records the tick tuples it gets (see [Recorder.Ticks]).
func (r *Recorder[T]) Bolt() *dsl.BoltSpec {
	spec := dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[T] {
		r.created(info)
		return HandlerFunc[T](func(in T, _ dsl.Emitter) error {
			r.add(info, in)
			return nil
		}).WithTick(func(t dsl.Tick, _ dsl.Collector) error {
			r.tick(info, t)
			return nil
		})
	})
	spec.Impl = r
	return spec
}

// Hold returns a bolt that records each input and holds it: it never acks or
// fails one, so every tuple tree through it stays open until it times out,
// for tests of timeouts and of what waits on open trees (max spout pending, a
// stop's drain). It records tick tuples as [Recorder.Bolt] does. Inputs still
// held when the topology stops keep its drain waiting for the whole drain
// timeout: give such a test a short one (supervision.WithDrainTimeout).
func (r *Recorder[T]) Hold() *dsl.BoltSpec {
	return r.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[T] {
		return ManualFunc[T](func(T, dsl.Tuple, dsl.Collector) error { return nil })
	})
}

// Manual returns [dsl.Manual](newHandler) with every input recorded before
// the task's handler sees it: the handler acks it, fails it (an error it
// returns fails it too) or holds it, as the test needs. Tick tuples are
// recorded (see [Recorder.Ticks]), then passed to a handler with a
// Tick(dsl.Tick, dsl.Collector) error method ([ManualFunc.WithTick] makes
// one).
func (r *Recorder[T]) Manual(newHandler func(dsl.TaskInfo) dsl.ManualHandler[T]) *dsl.BoltSpec {
	spec := dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[T] {
		r.created(info)
		return &recording[T]{r: r, info: info, h: newHandler(info)}
	})
	spec.Impl = r
	return spec
}

// recording records an input, then hands it to the task's own handler.
type recording[T any] struct {
	r    *Recorder[T]
	info dsl.TaskInfo
	h    dsl.ManualHandler[T]
}

func (x *recording[T]) Execute(in T, input dsl.Tuple, c dsl.Collector) error {
	x.r.add(x.info, in)
	return x.h.Execute(in, input, c)
}

// Tick records a tick tuple and passes it on to a handler that wants it; the
// runtime only sends them to a bolt given a tick frequency.
func (x *recording[T]) Tick(t dsl.Tick, c dsl.Collector) error {
	x.r.tick(x.info, t)
	if tk, ok := x.h.(interface {
		Tick(dsl.Tick, dsl.Collector) error
	}); ok {
		return tk.Tick(t, c)
	}
	return nil
}

func (r *Recorder[T]) created(info dsl.TaskInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byTask == nil {
		r.byTask, r.posts = map[int][]T{}, map[int]func(func(dsl.Collector)){}
	}
	if _, ok := r.byTask[info.Task]; !ok { // a restarted task keeps what it got
		r.byTask[info.Task] = nil
	}
	if info.Post != nil {
		r.posts[info.Task] = info.Post // this incarnation's
	}
}

func (r *Recorder[T]) add(info dsl.TaskInfo, v T) {
	at := now(info)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, v)
	r.records = append(r.records, Record[T]{Value: v, Task: info.Task, At: at})
	r.byTask[info.Task] = append(r.byTask[info.Task], v)
	r.changedLocked()
}

func (r *Recorder[T]) tick(info dsl.TaskInfo, t dsl.Tick) {
	at := now(info)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks = append(r.ticks, Record[dsl.Tick]{Value: t, Task: info.Task, At: at})
	r.changedLocked()
}

// changedLocked wakes the waits.
func (r *Recorder[T]) changedLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// now reads the task's clock (TaskInfo.Now is nil in a TaskInfo made by hand).
func now(info dsl.TaskInfo) time.Time {
	if info.Now != nil {
		return info.Now()
	}
	return time.Now()
}

// postsOf returns each task's TaskInfo.Post, by task id.
func (r *Recorder[T]) postsOf() []func(func(dsl.Collector)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]func(func(dsl.Collector)), 0, len(r.posts))
	for _, task := range sortedKeys(r.posts) {
		out = append(out, r.posts[task])
	}
	return out
}

// Records returns every input recorded so far with the task that got it and
// when, in the order recorded (as [Recorder.All]).
func (r *Recorder[T]) Records() []Record[T] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record[T](nil), r.records...)
}

// Ticks returns every tick tuple the bolt's tasks received, with the task
// and when, in the order received. A bolt gets them only with a tick
// frequency (dsl.TickFrequency in its conf or the topology's).
func (r *Recorder[T]) Ticks() []Record[dsl.Tick] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record[dsl.Tick](nil), r.ticks...)
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
	return r.wait(ctx, n, "inputs", func() int { return len(r.all) })
}

// WaitTicks waits until at least n tick tuples were recorded. If ctx ends
// first it returns ctx's cause with the count so far.
func (r *Recorder[T]) WaitTicks(ctx context.Context, n int) error {
	return r.wait(ctx, n, "tick tuples", func() int { return len(r.ticks) })
}

// wait waits until count, called with r.mu held, reaches n.
func (r *Recorder[T]) wait(ctx context.Context, n int, what string, count func() int) error {
	for {
		r.mu.Lock()
		got := count()
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
			return fmt.Errorf("sheltertest: %d of %d %s recorded: %w", got, n, what, context.Cause(ctx))
		}
	}
}
