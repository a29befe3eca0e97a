package acker

// buckets is the number of rotating buckets.
const buckets = 3

type tree struct {
	xor   uint64
	spout int
}

// Tracker is one acker task's open trees. It is not safe for concurrent use: an
// acker task owns it.
type Tracker struct {
	buckets  [buckets]map[uint64]tree
	current  int
	capacity int
	open     int
}

// New returns a tracker that refuses new trees beyond capacity open ones.
func New(capacity int) *Tracker {
	t := &Tracker{capacity: capacity}
	for i := range t.buckets {
		t.buckets[i] = make(map[uint64]tree)
	}
	return t
}

// Track opens the tree root for spout task spout. It returns false, opening
// nothing, when the tracker is at capacity: the caller nacks the tree at once.
func (t *Tracker) Track(root uint64, spout int) bool {
	if t.open >= t.capacity {
		return false
	}
	t.buckets[t.current][root] = tree{spout: spout}
	t.open++
	return true
}

// find returns the bucket holding root, or -1. The current bucket is looked at
// first: most trees complete before a rotation.
func (t *Tracker) find(root uint64) int {
	if _, ok := t.buckets[t.current][root]; ok {
		return t.current
	}
	for b := range t.buckets {
		if _, ok := t.buckets[b][root]; ok && b != t.current {
			return b
		}
	}
	return -1
}

// Anchor XORs edge into tree root. Unknown roots (already failed or expired) are
// ignored.
func (t *Tracker) Anchor(root, edge uint64) {
	if b := t.find(root); b >= 0 {
		tr := t.buckets[b][root]
		tr.xor ^= edge
		t.buckets[b][root] = tr
	}
}

// Ok XORs edge into tree root. When the tree is complete it is removed and Ok
// returns its spout task and true.
func (t *Tracker) Ok(root, edge uint64) (spout int, complete bool) {
	b := t.find(root)
	if b < 0 {
		return 0, false
	}
	tr := t.buckets[b][root]
	tr.xor ^= edge
	if tr.xor != 0 {
		t.buckets[b][root] = tr
		return 0, false
	}
	delete(t.buckets[b], root)
	t.open--
	return tr.spout, true
}

// Fail removes tree root and returns its spout task, or false if unknown.
func (t *Tracker) Fail(root uint64) (spout int, found bool) {
	b := t.find(root)
	if b < 0 {
		return 0, false
	}
	tr := t.buckets[b][root]
	delete(t.buckets[b], root)
	t.open--
	return tr.spout, true
}

// Value returns the accumulator of tree root, for tracing and specs.
func (t *Tracker) Value(root uint64) (xor uint64, open bool) {
	if b := t.find(root); b >= 0 {
		return t.buckets[b][root].xor, true
	}
	return 0, false
}

// Rotate expires the oldest bucket, calling expired for each of its trees, and
// makes it the newest.
func (t *Tracker) Rotate(expired func(root uint64, spout int)) {
	oldest := (t.current + 1) % buckets
	for root, tr := range t.buckets[oldest] {
		expired(root, tr.spout)
	}
	t.open -= len(t.buckets[oldest])
	clear(t.buckets[oldest])
	t.current = oldest
}
