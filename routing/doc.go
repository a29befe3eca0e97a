// Package routing compiles a topology into tasks and decides where every emitted
// tuple goes. [Compile] numbers the tasks once; [Plan.NewRouter] builds each task's
// emit path at start, with one distributor per (stream, destination component), so
// the per-tuple work is a type comparison, a grouping choice and a delivery.
//
// # Tracking
//
// Routers also speak the acker's language: a tracked spout emit starts a tree
// (Track) and every tracked delivery adds an edge (Anchor), in that order, through
// the task's [Sink]. Tuple and edge ids come from the task's own [IDs].
package routing
