// Package state defines where stateful bolts keep their checkpoints: the
// [Store] interface that durable stores implement, and [NewMemory], a store
// for tests that lives as long as its value. The checkpoint protocol itself
// belongs to the runtime; a store only has to apply one [Checkpoint] at a
// time, atomically, and read back what was committed.
//
// # Stores
//
//   - [NewMemory]: in memory, for tests (survives a topology restart in the
//     process, not a crash).
//   - github.com/goshelter/goshelter/state/pebble (its own module): an
//     embedded durable store in a directory (one fsynced write batch per
//     checkpoint); the default for a path.
//   - github.com/goshelter/goshelter/state/redis (its own module): Redis, one
//     Lua script per checkpoint, which checks the ID and applies every change
//     atomically.
//
// Package state/statetest checks that a Store keeps this contract; every store
// of the project runs it.
package state
