// Package grouping names the groupings as dsl.Grouping.Kind holds them, for the
// packages that act on a grouping (routing, multilang's Flux export, graphs).
// It also holds Index, the one way a key picks one of n tasks: a fields
// grouping's hash picks its task, and a tree's root picks its acker.
package grouping

// The kinds of dsl.Grouping.
const (
	Shuffle = "shuffle" // round robin over the tasks
	Fields  = "fields"  // by a stable hash of a key, so equal keys meet on one task
	All     = "all"     // every task gets every tuple
	Direct  = "direct"  // the emitter names the task (EmitDirect)
	Global  = "global"  // the task with the lowest id
	// LocalOrShuffle prefers tasks in the emitter's worker process, which for
	// goshelter (one process) is every task: it routes as Shuffle.
	LocalOrShuffle = "local_or_shuffle"
	// None leaves the choice to the runtime; goshelter shuffles, as Storm does.
	None = "none"
)

// Index returns key mod n, the index among n tasks that key picks. For a
// power of two (one acker, by default) it is a mask: a 64-bit division on
// every tuple was a tenth of a relaying bolt's time.
func Index(key uint64, n int) int {
	if m := uint64(n); m&(m-1) == 0 {
		return int(key & (m - 1))
	}
	return int(key % uint64(n))
}
