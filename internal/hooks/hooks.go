// Package hooks lets the test kit (sheltertest) make host options that are not
// part of the host's public API. supervision fills the hooks in its init.
package hooks

import "github.com/goshelter/goshelter/internal/clock"

// WithClock returns a supervision.Option that sets the host's clock.
var WithClock func(c clock.Clock) any
