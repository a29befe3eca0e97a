package state

import (
	"context"
	"errors"
)

// ErrStale is returned by [Store.Commit] for a checkpoint whose ID is not
// above the committed one: a late writer (an incarnation being replaced, or a
// second process on the same store) must not overwrite newer state.
var ErrStale = errors.New("state: checkpoint is not newer than the committed one")

// ErrDiverged is returned by [Store.Commit] for a checkpoint whose Previous
// is not the store's committed ID: the store is not where its writer left it.
// It went back (a Redis restarted empty, a directory restored from an old
// backup) or another writer committed meanwhile (two processes on one
// store). Carrying on would checkpoint a state built on commits the store no
// longer holds, or overwrite another writer's; the runtime stops the topology
// instead of restarting it, and a restart does not help until someone looks.
var ErrDiverged = errors.New("state: the store's committed checkpoint is not the one its writer committed last")

// ErrClosed is returned by a Store's methods after Close.
var ErrClosed = errors.New("state: store closed")

// Change is one key's new value in a space, or its removal.
type Change struct {
	// Space names the owner of the key: a stateful bolt's task, or a source's
	// position. Spaces never share keys.
	Space string
	Key   []byte
	// Value is the key's new value; nil with Delete set removes the key.
	Value  []byte
	Delete bool
}

// Checkpoint is what one checkpoint of a topology changes: every change of
// every task since the previous checkpoint, recorded with its ID.
type Checkpoint struct {
	// ID numbers checkpoints from 1; each commit's ID is above the last one's.
	ID uint64
	// Previous is the ID of the checkpoint its writer committed last (or read
	// as committed when it started), 0 for none: the store commits c only if
	// that is still its committed ID, in the same atomic step as the commit.
	Previous uint64
	Changes  []Change
}

// Store keeps the committed checkpoints of one topology. Its methods are
// safe for concurrent use. A store may keep Changes' slices until Commit
// returns, never after: the caller reuses them.
type Store interface {
	// Committed returns the ID of the last committed checkpoint, 0 if none.
	Committed(ctx context.Context) (uint64, error)
	// Scan calls fn for every key of space as of the last committed
	// checkpoint, in ascending byte order of the keys. fn must not keep key or
	// value after it returns. An error from fn ends the scan and is returned.
	Scan(ctx context.Context, space string, fn func(key, value []byte) error) error
	// Commit applies c's changes and records c.ID as committed, atomically
	// and durably: after a crash at any moment a reader sees all of c or none
	// of it. It returns an error wrapping [ErrStale] when c.ID is not above
	// the committed ID, else one wrapping [ErrDiverged] when the committed ID
	// is not c.Previous, and changes nothing then. Both errors name the two
	// IDs.
	Commit(ctx context.Context, c Checkpoint) error
	// Close releases the store. Close is idempotent; other methods return
	// [ErrClosed] afterwards.
	Close() error
}
