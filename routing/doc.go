// Package routing compiles a topology into tasks and decides where every emitted
// tuple goes. It is a runtime layer: applications use dsl and supervision.
//
// [Compile] lists the tasks dsl numbered; [Plan.NewRouter] builds each task's
// emit path at start, with one distributor per (stream, destination component), so
// the per-tuple work is a type comparison, a grouping choice and a delivery.
//
// # Tracking
//
// Routers also speak the acker's language: a tracked spout emit starts a tree
// (Track) and every tracked delivery adds an edge (Anchor), in that order, through
// the task's [Sink]. Tuple and edge ids come from the task's own id source.
// Which emits are tracked is the caller's to say: a spout per emit, a bolt by
// the anchors it passes, those whose trees its emit joins by the edges they
// came in on (the edge into the bolt decides). Every delivery of a tracked
// emit is tracked, whatever the anchoring of the edge it travels.
package routing
