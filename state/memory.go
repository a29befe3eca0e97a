package state

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory is a [Store] that keeps its checkpoints in the process's memory,
// for tests. It survives a topology restart in the process, not a crash.
// Create it with [NewMemory].
type Memory struct {
	mu        sync.RWMutex
	closed    bool
	committed uint64
	// Values are never changed in place, only replaced, so a Scan can read
	// the ones it collected under the lock after releasing it.
	spaces map[string]map[string][]byte
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{spaces: make(map[string]map[string][]byte)}
}

// Committed returns the ID of the last committed checkpoint, 0 if none.
func (m *Memory) Committed(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return 0, ErrClosed
	}
	return m.committed, nil
}

// Scan calls fn for every key of space in ascending byte order, as of the
// last checkpoint committed when Scan was called.
func (m *Memory) Scan(ctx context.Context, space string, fn func(key, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return ErrClosed
	}
	kv := m.spaces[space]
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	values := make([][]byte, len(keys))
	slices.Sort(keys) // strings compare bytewise, as bytes.Compare does
	for i, k := range keys {
		values[i] = kv[k]
	}
	// fn runs without the lock: it may call the store, and a slow fn must
	// not hold up commits.
	m.mu.RUnlock()

	var key, value []byte
	for i, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Copies, so that fn scribbling over its arguments cannot reach the
		// committed state.
		key = append(key[:0], k...)
		value = append(value[:0], values[i]...)
		if err := fn(key, value); err != nil {
			return err
		}
	}
	return nil
}

// Commit applies c's changes and records c.ID as committed, atomically. It
// returns an error wrapping [ErrStale] when c.ID is not above the committed
// ID, and one wrapping [ErrDiverged] when the committed ID is not c.Previous.
func (m *Memory) Commit(ctx context.Context, c Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if c.ID <= m.committed {
		return fmt.Errorf("state: commit checkpoint %d, committed %d: %w", c.ID, m.committed, ErrStale)
	}
	if c.Previous != m.committed {
		return fmt.Errorf("state: commit checkpoint %d after %d, committed %d: %w", c.ID, c.Previous, m.committed, ErrDiverged)
	}
	for _, ch := range c.Changes {
		kv := m.spaces[ch.Space]
		if ch.Delete {
			delete(kv, string(ch.Key))
			if len(kv) == 0 {
				delete(m.spaces, ch.Space)
			}
			continue
		}
		if kv == nil {
			kv = make(map[string][]byte)
			m.spaces[ch.Space] = kv
		}
		// string(ch.Key) copies the key; the value needs an explicit copy,
		// non-nil so that an empty value still reads back as a value.
		kv[string(ch.Key)] = append([]byte{}, ch.Value...)
	}
	m.committed = c.ID
	return nil
}

// Close releases the store's contents. Close is idempotent; other methods
// return [ErrClosed] afterwards.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.spaces = nil
	return nil
}

var _ Store = (*Memory)(nil)
