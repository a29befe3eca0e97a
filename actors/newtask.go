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
	impl := c.Spout.NewTask(info)
	t, ok := impl.(component.SpoutTask)
	if !ok {
		panic(fmt.Errorf("spout %q: its spec made a %T, which is not a spout task", c.ID, impl))
	}
	return t
}

// newBoltTask is newSpoutTask for bolts.
func newBoltTask(c *dsl.Component, info dsl.TaskInfo) component.BoltTask {
	impl := c.Bolt.NewTask(info)
	t, ok := impl.(component.BoltTask)
	if !ok {
		panic(fmt.Errorf("bolt %q: its spec made a %T, which is not a bolt task", c.ID, impl))
	}
	return t
}

// tickOf is the value of tick tuples at frequency f: Storm's whole seconds
// (at least 1) and the exact period.
func tickOf(f time.Duration) dsl.Tick {
	return dsl.Tick{RateSecs: max(1, int(f/time.Second)), Period: f}
}
