package actors

import (
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/task"
)

// newSpoutTask makes a spout's task from its spec (package internal/task).
func newSpoutTask(c *dsl.Component, info dsl.TaskInfo) dsl.SpoutTask {
	return task.NewSpout(c, info)
}

// newBoltTask is newSpoutTask for bolts.
func newBoltTask(c *dsl.Component, info dsl.TaskInfo) dsl.BoltTask {
	return task.NewBolt(c, info)
}

// tickOf is the value of tick tuples at frequency f: Storm's whole seconds
// (at least 1) and the exact period.
func tickOf(f time.Duration) dsl.Tick {
	return dsl.Tick{RateSecs: max(1, int(f/time.Second)), Period: f}
}
