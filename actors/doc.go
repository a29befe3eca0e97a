// Package actors runs a compiled topology: every spout, bolt, acker and the
// system task is a protoactor-go actor. It is a runtime layer: applications use
// dsl and supervision, which hosts incarnations through [System].
//
// [System.Start] spawns an incarnation and activates it in Storm's order, and
// [Topology.Stop] drains it and stops every actor exactly once.
//
// # Mailboxes
//
// Each task's mailbox has a control lane and data lanes. There is a data lane
// per task that sends to it (an edge): a ring of tuple batches with one writer
// and one reader, which no lock and no counter of both sides guards (edge.go
// says how the sender wakes a sleeping receiver and how a full ring parks
// its sender). The receiver serves its lanes in turn, one batch each, so no
// sender starves another, and a sender whose lane is full parks instead of
// spinning, without holding back the other senders. The control lane carries
// acker traffic, acks, nacks, ticks and lifecycle messages; it is never full,
// so control traffic cannot wait behind data, and it is served first. Because
// the data path is acyclic (the dsl rejects cycles) and control never blocks,
// a parked sender always wakes.
//
// # Bounds, in tuples
//
// A task's lanes share topology.executor.receive.buffer.size slots (a power
// of two), each holding a batch of up to goshelter.batch.size tuples: a lane
// gets slots / senders, rounded down to a power of two and at least 2 (one
// batch fills while the other executes). A task thus holds at most
// max(slots, 2 x senders) x batch size tuples: 256 x 64 = 16,384 at the
// defaults with up to 128 senders (4 slots of 64 give the reference's ring of
// 256). Lanes are made on a sender's first batch, so memory follows the
// edges that carry data: a lane costs 192 bytes and 16 bytes a slot, plus the
// batches in it. Each sending task also holds at most one open batch per
// destination, or one batch parked on a full lane.
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
