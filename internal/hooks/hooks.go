// Package hooks lets the test kit (sheltertest) make host options that are not
// part of the host's public API. supervision fills the hooks in its init.
package hooks

import (
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
)

// WithClock returns a supervision.Option that sets the host's clock.
var WithClock func(c clock.Clock) any

// Topology returns the topology a *supervision.Running runs, so that the
// kit's WaitIdle can find the kit's sources among its spouts.
var Topology func(running any) *dsl.Topology
