// Package grouping holds Index, the one way a key picks one of n tasks: a
// fields grouping's hash picks its task, and a tree's root picks its acker.
// The kinds of grouping are the model's own (dsl.GroupingKind).
package grouping

// Index returns key mod n, the index among n tasks that key picks. For a
// power of two (the ackers by default: 4 tasks, on Storm's 2 executors; the
// bench runs 1) it is a mask: a 64-bit division on every tuple was a tenth of
// a relaying bolt's time.
func Index(key uint64, n int) int {
	if m := uint64(n); m&(m-1) == 0 {
		return int(key & (m - 1))
	}
	return int(key % uint64(n))
}
