// Package supervision hosts running topologies: it starts an incarnation of the
// tasks and, when a task fails, replaces it with a fresh one after an
// exponential back-off, or fails fast.
//
// # Running a topology
//
//	running, err := supervision.Run(ctx, topo) // cancelling ctx stops it
//	if err != nil { ... }
//	defer running.Stop(context.Background())
//
// [Run] restarts on failure (FsShelter's runWith); [WithoutRestarts] makes the
// first failure final, for an outer supervisor such as systemd or Kubernetes.
//
// # Lifetimes
//
// Run's ctx is the topology's lifetime, as exec.CommandContext's is the
// process's: cancelling it stops the topology and [Running.Wait] returns its
// cause. [Running.Stop] drains (at most the drain timeout, by default the
// message timeout) and stops every task; it returns by its own ctx's deadline
// in every state, and names in its error any task still running user code a
// grace after the drain (Go cannot stop a goroutine; that one is abandoned).
// Called from inside the topology, from a component or an event callback,
// Stop starts the stop and returns [ErrStopping] at once.
//
// The grace is twice the drain timeout, a second at least, and a stuck task
// costs two of them: with a bolt blocked forever in user code, Stop with no
// deadline returns after about five drain timeouts (the drain, a grace for the
// bolts to deactivate, another for them to stop; measured 5.0 s with a 1 s
// drain, 20 s with 4 s, so 2.5 minutes with the default 30 s message
// timeout), with a blocked spout about three. A ctx with a deadline bounds
// the wait; the stop then goes on, bounded, until [Running.Done] closes.
//
// # Restarts
//
// After the n-th consecutive failure the host waits min(base·2^n, cap)
// (defaults: base 1 s, so the first wait is 2 s; cap 30 s), at most Max times
// in a row (default 5); see [Restarts] and [WithRestarts]. Meanwhile the
// failed incarnation's spouts stop emitting and its trees in flight may
// complete (no longer than the drain timeout); then what is still open is
// nacked once and, when the back-off is over, a fresh incarnation starts. A
// task parked on a full mailbox of the failed incarnation (upstream of the
// failed bolt) is released when that drain ends, so the restart waits for no
// grace unless a task is stuck in user code. The count goes back to zero only
// after an incarnation has run for the stable period without failing. Failures
// that arrive while a restart is under way are coalesced into it. A failure
// wrapping state.ErrDiverged (the store lost checkpoints this process
// committed) is never restarted: a new incarnation would start over from
// what the store has left, so the host gives up at once.
//
// # At-least-once across restarts
//
// When an incarnation ends, each reliable spout task nacks every message whose
// tree is still open (the Source's Nack is called), so a source that replays
// nacked messages and outlives incarnations loses nothing. Such a source must
// (1) keep its messages outside the task (shared by Reliable's functions, or
// handed to each new Source by ReliableFrom), (2) hand a message out again after
// Nack, and (3) forget it only on Ack.
package supervision
