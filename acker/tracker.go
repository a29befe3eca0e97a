package acker

import "github.com/goshelter/goshelter/internal/idtable"

// buckets is how many rotations a tree lives through: it expires at the
// buckets-th Rotate after it was tracked (Storm's rotating buckets, kept as a
// birth rotation per tree so that each operation is one map lookup).
const buckets = 3

type tree struct {
	xor   uint64
	spout int32  // task ids are ints that the plan keeps far below 2^31
	born  uint32 // Tracker.rotations when tracked; compared by difference, so wrapping is harmless
}

// Tracker is one acker task's open trees. It is not safe for concurrent use: an
// acker task owns it.
type Tracker struct {
	trees     idtable.Table[tree] // the open trees
	rotations uint32
	capacity  int
}

// New returns a tracker that refuses new trees beyond capacity open ones.
func New(capacity int) *Tracker {
	return &Tracker{capacity: capacity}
}

// Track opens the tree root for spout task spout with the edges anchored at
// once XORed into edges (0 when none yet: Storm's init message carries the
// same). It returns false, opening nothing, when the tracker is at capacity:
// the caller nacks the tree at once. Root 0, an untracked tuple's, opens
// nothing either.
func (t *Tracker) Track(root uint64, spout int, edges uint64) bool {
	if t.trees.Len() >= t.capacity || root == 0 {
		return false
	}
	t.trees.Put(root, tree{xor: edges, spout: int32(spout), born: t.rotations})
	return true
}

// Anchor XORs edge into tree root. Unknown roots (already failed or expired) are
// ignored.
func (t *Tracker) Anchor(root, edge uint64) {
	if tr := t.trees.Ref(root); tr != nil {
		tr.xor ^= edge
	}
}

// Ok XORs edge into tree root. When the tree is complete it is removed and Ok
// returns its spout task and true.
func (t *Tracker) Ok(root, edge uint64) (spout int, complete bool) {
	tr := t.trees.Ref(root)
	if tr == nil {
		return 0, false
	}
	if tr.xor ^= edge; tr.xor != 0 {
		return 0, false
	}
	spout = int(tr.spout)
	t.trees.Delete(root) // the same slot again: a cache hit
	return spout, true
}

// Fail removes tree root and returns its spout task, or false if unknown.
func (t *Tracker) Fail(root uint64) (spout int, found bool) {
	tr, ok := t.trees.Take(root)
	return int(tr.spout), ok
}

// Value returns the accumulator of tree root, for tracing and specs.
func (t *Tracker) Value(root uint64) (xor uint64, open bool) {
	tr, ok := t.trees.Get(root)
	return tr.xor, ok
}

// Rotate expires the trees tracked buckets rotations ago, calling expired for
// each. It visits every open tree, once per rotation (every half message
// timeout by default), so that Anchor and Ok need a single lookup. expired
// must not call the tracker.
func (t *Tracker) Rotate(expired func(root uint64, spout int)) {
	t.rotations++
	t.trees.Sweep(func(root uint64, tr *tree) bool {
		if t.rotations-tr.born < buckets {
			return false
		}
		expired(root, int(tr.spout))
		return true
	})
}
