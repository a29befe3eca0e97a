package actors

import (
	"reflect"
	"sync"

	"github.com/goshelter/goshelter/state"
)

// commitMarks remembers, per store, the highest checkpoint an incarnation of
// this System committed to it. A new incarnation that reads a lower committed
// ID from the store finds the store went back behind the process's back (a
// Redis restarted empty): restoring from it would silently drop state and
// positions the process already committed.
type commitMarks struct {
	mu    sync.Mutex // mu guards marks
	marks map[state.Store]uint64
}

// raise records that id was committed to store.
func (m *commitMarks) raise(store state.Store, id uint64) {
	if !keyable(store) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.marks == nil {
		m.marks = map[state.Store]uint64{}
	}
	if id > m.marks[store] {
		m.marks[store] = id
	}
}

// highest returns the highest ID committed to store, 0 if none.
func (m *commitMarks) highest(store state.Store) uint64 {
	if !keyable(store) {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.marks[store]
}

// keyable reports whether store can be a map key: a store of a type that
// is not comparable (a struct holding a slice, passed by value) is not
// tracked rather than panicking.
func keyable(store state.Store) bool {
	return store != nil && reflect.TypeOf(store).Comparable()
}
