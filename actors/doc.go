// Package actors runs a compiled topology: every spout, bolt, acker and the
// system task is a protoactor-go actor. It is a runtime layer: applications use
// dsl and supervision, which hosts incarnations through [System].
//
// [System.Start] spawns an incarnation and activates it in Storm's order, and
// [Topology.Stop] drains it and stops every actor exactly once.
//
// # Mailboxes
//
// Each task has a two-lane mailbox. The data lane is a bounded ring of tuple
// batches (topology.executor.receive.buffer.size slots, a power of two); a sender
// that finds it full parks on it instead of spinning. The control lane carries acker
// traffic, acks, nacks, ticks and lifecycle messages; it is never full, so control
// traffic cannot wait behind data, and it is always served first. Because the data
// path is acyclic (the dsl rejects cycles) and control never blocks, a parked sender
// always wakes.
//
// # Bounds, in tuples
//
// The reference sizes a task's ring in tuples (256). Here a slot holds a batch
// of up to goshelter.batch.size tuples, so a task's data lane holds at most
// slots x batch size tuples: 256 x 64 = 16,384 at the defaults (4 slots of 64
// give the reference's 256). Each sending task also holds at most one open
// batch per destination, or one batch parked on a full lane.
//
// The control lanes have no slots: max spout pending bounds their tree
// traffic, per tree. A spout task opens at most topology.max.spout.pending
// trees, and their outcomes are all that comes back to it; an acker's lane
// holds the operations of open trees (at most max spout pending per spout
// task) and of their tuples still on data lanes, so it grows with each tree's
// tuples, and an acker refuses trees beyond goshelter.acker.capacity. Timer
// beats coalesce into one message per task (below) and lifecycle messages are
// one per stage. Unreliable spouts open no trees and cause no control traffic.
// Functions given to dsl.TaskInfo.Post ride the control lane too, unbounded:
// Post never blocks, so a component pacing what it posts is what bounds them.
//
// # Compared with the reference
//
// Besides the bounds above: every task is an actor of its own, where the
// reference runs a component's tasks on executors that share a ring (so a
// component's task count is its parallelism, and the dsl's Build refuses a
// "topology.tasks" that says otherwise); and tasks are created in id order,
// the system task first, then the components' tasks, the ackers last, where
// the reference starts the system task, the ackers, the bolts, then the
// spouts. The order of creation is harmless: every task is created inactive,
// and no tuple flows before activation, which follows the reference's order
// (ackers, bolts, spouts, then the system task).
//
// # Batching
//
// Tuples travel in batches per destination task, flushed when full, whenever
// the sending task has nothing more to do right now, and at the latest when the
// flush beat (topology.batch.flush.interval.millis) moved while a spout's burst
// of Next calls or a bolt's batch of inputs ran: a tuple waits about one
// interval plus the call that produced it. Acker messages are batched per acker
// the same way and always flushed before the data they describe; an acker's
// outcomes to a spout leave when they fill a batch or the acker runs dry. So
// batches form only under load. A spout backing off after an empty Next tries
// again when outcomes arrive, not only when its wait ends.
//
// # Scheduling
//
// A mailbox with work runs on one of its incarnation's workers: goroutines
// that park between runs and keep their grown stacks, instead of a new
// goroutine per run (protoactor's default dispatcher).
//
// # Timer beats
//
// Ticks (tick tuples, acker rotations, spout nudges) coalesce: a busy task has
// at most one pending. It is served in order with the control messages sent
// before it (an acker rotates after the Tracks queued to it, so a test that
// moves a manual clock once a tuple reached a bolt times its tree out), ahead
// of the data lane, and after one input when the last message served was a
// tick too, so neither starves the other.
package actors
