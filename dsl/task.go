package dsl

import "time"

// What a spec gives the runtime to make a task of. The model holds
// descriptions; the runtime (its task package) holds the semantics: when a
// bolt acks or fails, how ticks reach a handler, how a reliable spout maps
// tree roots back to message ids. Go has no generic methods, so the typed call
// of a user's handler or Source is made here, by the generic constructors, as
// a small shim ([TypedBolt], [TypedSource]) that the runtime's task drives.
// Adapters that make their own tasks (multilang's shell components) fill a
// spec's NewTask with a [BoltTask] or [SpoutTask] instead.

// BoltTask is one running task of a bolt, as the runtime drives it. The
// runtime calls Execute on the task's goroutine, one input at a time, so an
// implementation needs no lock. Execute acks or fails in through c, now or
// later; a returned error is logged, and a panic fails in. in is valid during
// the call only (the runtime reuses it for the next input): a task that holds
// an input keeps a copy.
type BoltTask interface {
	Execute(in *Tuple, c Collector) error
}

// SpoutTask is one running task of a spout, as the runtime drives it: every
// method is called on the task's goroutine, one at a time. A panic fails the
// task (under supervision the topology restarts).
type SpoutTask interface {
	// Next asks the source for at most one message, emits it through e and
	// reports whether the source had one.
	Next(e SpoutEmitter) bool
	// Ack reports that the tree with this root was fully processed.
	Ack(root uint64)
	// Nack reports that the tree with this root failed or timed out.
	Nack(root uint64)
	// Abandon is called when the task stops with trees still open (a restart,
	// or a drain that timed out): their outcome will never be known, so the task
	// nacks every pending message to its source.
	Abandon()
}

// SpoutEmitter is the runtime's side of a spout's emit. Emit routes tuple;
// when tracked is true it starts a tuple tree and returns its root, which the
// task's Ack or Nack later receives, or 0 when no subscriber tracks it (the
// message is complete at once). It is valid on the task's goroutine only.
// It never panics: a tuple the topology cannot route fails its message (the
// root it returns is of a tree already failed, whose Nack follows like any
// outcome) and the host logs why; see [Emitter].
type SpoutEmitter interface {
	Emit(tuple any, tracked bool) (root uint64)
}

// TypedBolt is the typed half of one task of a bolt defined by [AutoAck],
// [AutoAckFrom], [Terminator], [Manual], [Stateful] or [StatefulFrom]: the
// user's handler and the conversion of an input to its type. The runtime
// builds the task around it with the semantics of the spec's Kind.
type TypedBolt struct {
	// Handler is the user's handler; the runtime finds its optional hooks
	// (Tick) on it.
	Handler any
	// Execute converts in's value to the handler's input type and calls the
	// handler with it (a manual handler also gets *in and c, a stateful one
	// its task's State). ok is false, and the handler is not called, when the
	// value is not of that type.
	Execute func(in *Tuple, c Collector) (ok bool, err error)
	// Restore and Snapshot reach a stateful bolt task's [State] (nil for the
	// other kinds): Restore loads one key of the last committed checkpoint,
	// Snapshot hands put every key changed since the last one (a nil value for
	// a deleted key) and returns the bytes handed.
	Restore  func(key, value []byte) error
	Snapshot func(put func(key, value []byte)) (size int, err error)
	// Window is a windowed bolt task's typed half (nil for the other kinds,
	// and Handler and Execute are nil for a window).
	Window TypedWindow
}

// TypedWindow is the typed half of one task of a bolt defined by [Windowed]:
// its spec, normalized (a tumbling window slides by its length), and the
// values the task holds, in a slice kept typed so that a window is a subslice
// handed to the handler without copying. The runtime's window task keeps each
// held value's time and tuple at the same index of slices of its own, and
// calls every method on the task's goroutine. Indexes are into the whole
// slice, held or not yet let go of.
type TypedWindow interface {
	// Counts returns the window's length and slide in tuples (0 when in time).
	Counts() (count, slideCount int)
	// Durations returns the window's length and slide in time (0 when in
	// tuples) and its lag.
	Durations() (length, slide, lag time.Duration)
	// EventTime reports whether the window follows its tuples' timestamps.
	EventTime() bool
	// MaxTuples is how many tuples the task may hold.
	MaxTuples() int
	// Now returns the spec's processing-time clock, or nil for the
	// topology's.
	Now() func() time.Time
	// Problems lists what is wrong with the spec (Build rejects it then).
	Problems() []string

	// Stage converts in's value to the window's input type and holds it as
	// the staged value; it reports false when the value is not of that type.
	Stage(in *Tuple) bool
	// Stamp returns the staged value's event time.
	Stamp() time.Time
	// Late returns the tuple the spec's Late makes of the staged value, or
	// ok false when the spec has no Late.
	Late() (tuple any, ok bool)
	// Insert puts the staged value at index at, after moving the values from
	// there on up by one.
	Insert(at int)
	// Compact moves the values from index from on to the front, and lets go
	// of the rest.
	Compact(from int)
	// Clear lets go of the values at indexes from to to-1 (zeroes them); when
	// to is the length, the slice is emptied.
	Clear(from, to int)
	// Expire records the value at index i as expired: the next Call reports it.
	Expire(i int)
	// Call hands the handler the window of the values from index from to
	// to-1, of which those from newFrom on are new, with the expired values,
	// from start to end, and forgets the expired values.
	Call(from, newFrom, to int, start, end time.Time, out Emitter) error
}

// TypedSource is the typed half of one task of a spout defined by [Reliable]
// or [ReliableFrom]: the user's [Source], and the ids of its messages kept
// typed under their tree roots, so that an id is never boxed on the
// per-message path. The runtime's task drives it on the task's goroutine.
type TypedSource interface {
	// Source returns the user's Source; the runtime finds its optional hooks
	// (Activate, Deactivate, Position, Rewind) on it.
	Source() any
	// Next asks the Source for a message and holds its id as the current
	// message, until Pend or Settle.
	Next() (tuple any, ok bool)
	// DirectTask returns the Source's DirectTask hook, which names the task
	// of a tuple it emitted, or nil when the Source has no such hook.
	DirectTask() func(tuple any) (task int)
	// Pend keeps the current message pending under its tree's root.
	Pend(root uint64)
	// Settle acks (ack true) or nacks the current message, which no tree holds.
	Settle(ack bool)
	// Done acks (ack true) or nacks the message pending under root, and
	// forgets it; a root with no message pending is ignored.
	Done(root uint64, ack bool)
	// Abandon nacks every pending message and forgets them.
	Abandon()
	// Forget forgets every pending message without telling the Source (a
	// rewind replays them).
	Forget()
}
