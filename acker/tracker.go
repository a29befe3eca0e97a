package acker

// buckets is how many rotations a tree lives through: it expires at the
// buckets-th Rotate after it was tracked (Storm's rotating buckets, kept as a
// birth rotation per tree so that each operation is one map lookup).
const buckets = 3

type tree struct {
	xor   uint64
	spout int
	born  uint64 // Tracker.rotations when tracked
}

// Tracker is one acker task's open trees. It is not safe for concurrent use: an
// acker task owns it.
type Tracker struct {
	trees     map[uint64]tree // the open trees: len is their count
	rotations uint64
	capacity  int
}

// New returns a tracker that refuses new trees beyond capacity open ones.
func New(capacity int) *Tracker {
	return &Tracker{trees: make(map[uint64]tree), capacity: capacity}
}

// Track opens the tree root for spout task spout with the edges anchored at
// once XORed into edges (0 when none yet: Storm's init message carries the
// same). It returns false, opening nothing, when the tracker is at capacity:
// the caller nacks the tree at once.
func (t *Tracker) Track(root uint64, spout int, edges uint64) bool {
	if len(t.trees) >= t.capacity {
		return false
	}
	t.trees[root] = tree{xor: edges, spout: spout, born: t.rotations} // one hash: no lookup first
	return true
}

// Anchor XORs edge into tree root. Unknown roots (already failed or expired) are
// ignored.
func (t *Tracker) Anchor(root, edge uint64) {
	if tr, ok := t.trees[root]; ok {
		tr.xor ^= edge
		t.trees[root] = tr
	}
}

// Ok XORs edge into tree root. When the tree is complete it is removed and Ok
// returns its spout task and true.
func (t *Tracker) Ok(root, edge uint64) (spout int, complete bool) {
	tr, ok := t.trees[root]
	if !ok {
		return 0, false
	}
	tr.xor ^= edge
	if tr.xor != 0 {
		t.trees[root] = tr
		return 0, false
	}
	delete(t.trees, root)
	return tr.spout, true
}

// Fail removes tree root and returns its spout task, or false if unknown.
func (t *Tracker) Fail(root uint64) (spout int, found bool) {
	tr, ok := t.trees[root]
	if !ok {
		return 0, false
	}
	delete(t.trees, root)
	return tr.spout, true
}

// Value returns the accumulator of tree root, for tracing and specs.
func (t *Tracker) Value(root uint64) (xor uint64, open bool) {
	tr, ok := t.trees[root]
	return tr.xor, ok
}

// Rotate expires the trees tracked buckets rotations ago, calling expired for
// each. It visits every open tree, once per rotation (every half message
// timeout by default), so that Anchor and Ok need a single lookup.
func (t *Tracker) Rotate(expired func(root uint64, spout int)) {
	t.rotations++
	for root, tr := range t.trees {
		if t.rotations-tr.born >= buckets {
			delete(t.trees, root)
			expired(root, tr.spout)
		}
	}
}
