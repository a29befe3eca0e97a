// Package grouping names the groupings as dsl.Grouping.Kind holds them, for the
// packages that act on a grouping (routing, multilang's Flux export, graphs).
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
