package actors

import (
	"fmt"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

// newSpoutTask creates a spout's task through its spec. A spec whose NewTask
// returns something else than the contract is a programming error of the
// adapter that made it: the task fails, naming the component.
func newSpoutTask(c *dsl.Component, info dsl.TaskInfo) component.SpoutTask {
	return contract[component.SpoutTask]("spout", c.ID, c.Spout.NewTask(info))
}

// newBoltTask is newSpoutTask for bolts.
func newBoltTask(c *dsl.Component, info dsl.TaskInfo) component.BoltTask {
	return contract[component.BoltTask]("bolt", c.ID, c.Bolt.NewTask(info))
}

// contract returns impl as the task contract T, or panics naming the component.
func contract[T any](kind, id string, impl any) T {
	t, ok := impl.(T)
	if !ok {
		panic(fmt.Errorf("%s %q: its spec made a %T, which is not a %s task", kind, id, impl, kind))
	}
	return t
}

// tickOf is the value of tick tuples at frequency f: Storm's whole seconds
// (at least 1) and the exact period.
func tickOf(f time.Duration) dsl.Tick {
	return dsl.Tick{RateSecs: max(1, int(f/time.Second)), Period: f}
}
