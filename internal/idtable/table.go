// Package idtable is a hash table keyed by tuple-tree ids: non-zero uint64s.
// The acker's open trees and a reliable spout's pending messages live in one,
// looked up once or twice per tuple.
//
// It exists because those lookups were a third of an acked tuple's CPU in Go
// maps (hashing, control-byte matching, tombstones). Here a key's home slot is
// its low bits: the runtime's tree roots come in sequence from a random start
// (ids.Roots), so the trees open at a time sit in consecutive slots and are
// opened, looked up and closed in about the order of memory, and random keys
// spread as well. Keys that share their low bits (a stride of a power of two,
// from a test's id source) share homes: the table stays correct
// (TestTableAgreesWithAMap runs such strides) but probes long runs. Slots
// hold key and value side by side. Collisions are resolved by linear probing in Robin Hood order (a key that is further from
// its home takes the slot of one that is nearer), so a lookup stops at the
// first key nearer its home than it would be, and a removal shifts the keys
// after it back only as far as the next key at its home: removing one of a
// long run of consecutive keys moves none of the others.
package idtable

import "math/bits"

// minSlots is the smallest table; a power of two, as every size is.
const minSlots = 16

type slot[V any] struct {
	key uint64 // 0: free
	val V
}

// Table maps non-zero uint64 keys to values of type V. Its zero value is an
// empty table ready to use. It is not safe for concurrent use.
type Table[V any] struct {
	slots []slot[V]
	n     int
	shift uint8 // 64 - log2(len(slots))
}

// home is key's first slot: its low bits.
func (t *Table[V]) home(key uint64) uint64 {
	return key & (^uint64(0) >> t.shift)
}

// dist is how far slot i is past the home of the key it holds.
func (t *Table[V]) dist(i uint64) uint64 {
	return (i - t.home(t.slots[i].key)) & uint64(len(t.slots)-1)
}

// Len returns how many keys the table holds.
func (t *Table[V]) Len() int { return t.n }

// find returns key's slot, or -1. In Robin Hood order the probe can stop at a
// free slot or at a key nearer its home than key would be there.
func (t *Table[V]) find(key uint64) int {
	if t.n == 0 || key == 0 {
		return -1
	}
	mask := uint64(len(t.slots) - 1)
	for i, d := t.home(key), uint64(0); ; i, d = (i+1)&mask, d+1 {
		switch k := t.slots[i].key; {
		case k == key:
			return int(i)
		case k == 0 || t.dist(i) < d:
			return -1
		}
	}
}

// Get returns key's value and whether the table holds key.
func (t *Table[V]) Get(key uint64) (V, bool) {
	if i := t.find(key); i >= 0 {
		return t.slots[i].val, true
	}
	var zero V
	return zero, false
}

// Ref returns a pointer to key's value, valid until the next Put, Delete or
// Sweep, or nil when the table does not hold key: an update in place costs
// one lookup.
func (t *Table[V]) Ref(key uint64) *V {
	if i := t.find(key); i >= 0 {
		return &t.slots[i].val
	}
	return nil
}

// Put sets key's value. Key 0 is reserved for free slots: Put panics on it.
func (t *Table[V]) Put(key uint64, val V) {
	if key == 0 {
		panic("idtable: key 0")
	}
	if (t.n+1)*4 > len(t.slots)*3 { // over three quarters full: grow first
		t.resize(max(minSlots, len(t.slots)*2))
	}
	mask := uint64(len(t.slots) - 1)
	for i, d := t.home(key), uint64(0); ; i, d = (i+1)&mask, d+1 {
		s := &t.slots[i]
		if s.key == key {
			s.val = val
			return
		}
		if s.key == 0 {
			s.key, s.val = key, val
			t.n++
			return
		}
		if sd := t.dist(i); sd < d { // key is absent: it takes the slot, the resident goes on
			key, val, s.key, s.val = s.key, s.val, key, val
			d = sd
		}
	}
}

// Take removes key and returns its value and whether the table held it.
func (t *Table[V]) Take(key uint64) (V, bool) {
	i := t.find(key)
	if i < 0 {
		var zero V
		return zero, false
	}
	v := t.slots[i].val
	t.removeAt(i)
	return v, true
}

// Delete removes key, if the table holds it.
func (t *Table[V]) Delete(key uint64) {
	if i := t.find(key); i >= 0 {
		t.removeAt(i)
	}
}

// removeAt frees slot i and moves each following key one slot back, up to a
// free slot or a key at its home, which keeps the Robin Hood order: every
// lookup still meets its key before it stops.
func (t *Table[V]) removeAt(i int) {
	mask := len(t.slots) - 1
	hole := i
	for j := (i + 1) & mask; t.slots[j].key != 0 && t.dist(uint64(j)) != 0; j = (j + 1) & mask {
		t.slots[hole] = t.slots[j]
		hole = j
	}
	t.slots[hole] = slot[V]{}
	t.n--
}

// Sweep calls f for every key, removing those f returns true for. f must not
// change the table. No key is skipped, and f removes a key once; a key f kept
// may be shown to it again (a removal can move a kept key from the start of
// the slots to past the sweep's position), and f must keep it again. When the
// sweep leaves the table under an eighth full, it shrinks: a burst's keys do
// not hold memory for ever.
func (t *Table[V]) Sweep(f func(key uint64, val *V) (remove bool)) {
	for i := 0; i < len(t.slots); {
		s := &t.slots[i]
		if s.key != 0 && f(s.key, &s.val) {
			t.removeAt(i) // a later key may have moved into i: look at i again
			continue
		}
		i++
	}
	if len(t.slots) > minSlots && t.n*8 < len(t.slots) {
		t.resize(max(minSlots, 1<<bits.Len(uint(t.n*2))))
	}
}

// Clear removes every key, keeping the slots.
func (t *Table[V]) Clear() {
	clear(t.slots)
	t.n = 0
}

func (t *Table[V]) resize(size int) {
	old := t.slots
	t.slots = make([]slot[V], size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
	for i := range old {
		if old[i].key != 0 {
			t.Put(old[i].key, old[i].val)
		}
	}
}
