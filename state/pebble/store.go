package pebble

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/goshelter/goshelter/state"
)

// Keys start with a tag byte so that the committed ID never shares a key
// with data. A data key is its space, length-prefixed so that no space is a
// prefix of another's encoding ("a" + key "bx" and "ab" + key "x" differ),
// then the key: a space's keys are a contiguous range in byte order.
const (
	tagData = 'd'
	tagMeta = 'm'
)

var committedKey = []byte{tagMeta, 'i', 'd'}

// spacePrefix returns the prefix of space's data keys.
func spacePrefix(space string) []byte {
	p := make([]byte, 0, 1+binary.MaxVarintLen64+len(space))
	p = append(p, tagData)
	p = binary.AppendUvarint(p, uint64(len(space)))
	return append(p, space...)
}

// prefixEnd returns the least key above every key that starts with p. p
// starts with tagData, so it is never all 0xff.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	panic("unreachable: a prefix of 0xff bytes")
}

// Store is a [state.Store] in a directory. Create it with [Open].
type Store struct {
	dir string
	db  *pebble.DB

	// commitMu serializes commits: the check of the committed ID and the
	// batch that moves it must not interleave with another commit's.
	commitMu sync.Mutex

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup // calls using db; Close waits for them

	closeOnce sync.Once
	closeErr  error
}

// Open opens the store kept in dir, creating it if needed. Only one Store at
// a time may have dir open; Pebble locks it.
func Open(dir string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// Pebble's defaults are modest (an 8 MB block cache, 4 MB memtables),
	// which suits a store embedded in an application. The plain file system
	// skips Pebble's disk health checks: their ticker goroutine outlives a
	// failed Open and stops only after Close returns, and the slow-disk events
	// it raises would have no listener here.
	db, err := pebble.Open(dir, &pebble.Options{FS: vfs.Default, Logger: logger{o.logger}})
	if err != nil {
		return nil, fmt.Errorf("state/pebble: open %s: %w", dir, err)
	}
	return &Store{dir: dir, db: db}, nil
}

// enter registers a call that uses the database, unless the store is closed.
// The caller calls s.inflight.Done when it no longer uses the database.
func (s *Store) enter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("state/pebble: %s: %w", s.dir, state.ErrClosed)
	}
	s.inflight.Add(1)
	return nil
}

// Committed returns the ID of the last committed checkpoint, 0 if none.
func (s *Store) Committed(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("state/pebble: %s: %w", s.dir, err)
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.inflight.Done()
	id, err := s.committed()
	if err != nil {
		return 0, fmt.Errorf("state/pebble: %s: read committed ID: %w", s.dir, err)
	}
	return id, nil
}

func (s *Store) committed() (uint64, error) {
	v, closer, err := s.db.Get(committedKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("committed ID is %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Scan calls fn for every key of space in ascending byte order, as of the
// last checkpoint committed when Scan was called: a Pebble iterator reads a
// snapshot. fn must not call Close.
func (s *Store) Scan(ctx context.Context, space string, fn func(key, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("state/pebble: %s: scan %q: %w", s.dir, space, err)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done()
	prefix := spacePrefix(space)
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("state/pebble: %s: scan %q: %w", s.dir, space, err)
	}
	var key, value []byte
	for valid := it.First(); valid; valid = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return fmt.Errorf("state/pebble: %s: scan %q: %w", s.dir, space, err)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("state/pebble: %s: scan %q: %w", s.dir, space, err)
		}
		// Pebble's slices may point into its block cache: fn gets copies it
		// may scribble on.
		key = append(key[:0], it.Key()[len(prefix):]...)
		value = append(value[:0], v...)
		if err := fn(key, value); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("state/pebble: %s: scan %q: %w", s.dir, space, err)
	}
	return nil
}

// Commit applies c's changes and records c.ID as committed in one write
// batch, fsynced before Commit returns. It returns an error wrapping
// [state.ErrStale] when c.ID is not above the committed ID, and one wrapping
// [state.ErrDiverged] when the committed ID is not c.Previous (the directory
// was replaced by an older copy, say).
func (s *Store) Commit(ctx context.Context, c state.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d: %w", s.dir, c.ID, err)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.inflight.Done()
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	committed, err := s.committed()
	if err != nil {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d: read committed ID: %w", s.dir, c.ID, err)
	}
	if c.ID <= committed {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d, committed %d: %w", s.dir, c.ID, committed, state.ErrStale)
	}
	if committed != c.Previous {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d after %d, committed %d: %w", s.dir, c.ID, c.Previous, committed, state.ErrDiverged)
	}

	b := s.db.NewBatch()
	defer b.Close()
	var key []byte
	for _, ch := range c.Changes {
		key = append(append(key[:0], spacePrefix(ch.Space)...), ch.Key...)
		// The batch copies key and value: the caller may reuse them after
		// Commit returns.
		if ch.Delete {
			err = b.Delete(key, nil)
		} else {
			err = b.Set(key, ch.Value, nil)
		}
		if err != nil {
			return fmt.Errorf("state/pebble: %s: commit checkpoint %d: %w", s.dir, c.ID, err)
		}
	}
	if err := b.Set(committedKey, binary.BigEndian.AppendUint64(nil, c.ID), nil); err != nil {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d: %w", s.dir, c.ID, err)
	}
	// The last moment the caller can still give up and find nothing changed.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d: %w", s.dir, c.ID, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("state/pebble: %s: commit checkpoint %d: %w", s.dir, c.ID, err)
	}
	return nil
}

// Close waits for the calls in progress and closes the database; no goroutine
// of Pebble's outlives it. Close is idempotent; other methods return
// [state.ErrClosed] afterwards.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.inflight.Wait()
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("state/pebble: close %s: %w", s.dir, err)
		}
	})
	return s.closeErr
}

var _ state.Store = (*Store)(nil)
