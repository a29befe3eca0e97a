// Package acker tracks tuple trees with Storm's XOR algorithm, so every spout
// message is known to be fully processed, failed or timed out. A [Tracker] is one
// acker task's state; the runtime feeds it Track, Anchor, Ok and Fail messages
// and rotation ticks, one at a time.
//
// # The XOR tree
//
// A tree is a 64-bit accumulator keyed by its root id. Every edge (a tuple
// delivered to a bolt task) has a random non-zero id that is XORed in twice: once
// when the edge is anchored and once when its bolt acks it. The accumulator is
// zero again exactly when every edge has been acked, barring a 2^-64 chance.
//
// # Expiry
//
// Trees expire as if they lived in three rotating buckets (Storm's scheme): a
// tick expires every tree tracked three ticks ago. With rotation period P, a tree started at time t expires
// at a tick between t+2·P and t+3·P. Rotating every P = timeout/2 makes a tree
// expire no earlier than the message timeout and no later than 1.5 times it
// (plus the delay of the tick).
//
// This is a runtime layer: applications use dsl and supervision.
package acker
