// Package pebble keeps a topology's checkpoints in a directory with
// github.com/cockroachdb/pebble, an embedded key-value store: [Open] returns a
// [state.Store] that commits each checkpoint as one write batch, fsynced
// before Commit returns. It is the durable store for a path, with no server
// to run.
package pebble
