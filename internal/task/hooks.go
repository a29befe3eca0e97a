package task

import "github.com/goshelter/goshelter/dsl"

// The optional hooks of users' handlers and Sources (see "Optional hooks" in
// dsl's package doc, whose Build checks their names and signatures).
type (
	// ticker is a handler that wants tick tuples.
	ticker interface {
		Tick(t dsl.Tick, c dsl.Collector) error
	}
	// activator and deactivator hear of their task's activation; a Source
	// may have either.
	activator   interface{ Activate() }
	deactivator interface{ Deactivate() }
	// closer is a Source that releases what it holds when its task ends.
	closer interface{ Close() error }
	// positioner is a Source that can say where it is and go back there.
	positioner interface {
		Position() []byte
		Rewind(position []byte) error
	}
)
