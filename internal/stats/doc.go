// Package stats is the one statement of a task's figures: the runtime
// (actors) produces a [Task] for each task, the host (supervision) hands it
// to users as supervision.TaskStats, an alias, and sums it per component with
// [Sum], and the status page (observe) reads the same values and subtracts
// them over its windows with [Window]. No layer copies the figures into a
// struct of its own.
//
// Task has no methods: through the alias they would become supervision's
// API. The operations are functions of this package.
package stats
