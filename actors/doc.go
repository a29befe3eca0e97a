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
// # Batching
//
// Tuples travel in batches per destination task, flushed when full, whenever
// the sending task has nothing more to do right now, and at the latest when the
// flush beat (topology.batch.flush.interval.millis) moved while a spout's burst
// of Next calls or a bolt's batch of inputs ran: a tuple waits about one
// interval plus the call that produced it. Acker messages are batched per acker
// the same way and always flushed before the data they describe.
//
// # Timer beats
//
// Ticks (tick tuples, acker rotations, spout nudges) coalesce: a busy task has
// at most one pending, and it is served alternately with other messages, so
// neither starves the other.
package actors
