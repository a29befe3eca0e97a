package multilang

import (
	"sort"
	"strconv"

	"github.com/goshelter/goshelter/dsl"
)

// renumbered returns topo with the task ids the host gave in the handshake's
// task->component (Storm numbers its tasks its own way: its ackers, "__acker",
// sort among the components), so that a served component sees the ids of the
// cluster it runs in: TaskInfo.Model.Component(id).Tasks and AckerTasks, the
// targets of direct emits. A component the host did not list keeps
// goshelter's ids. topo itself is not changed.
func renumbered(topo *dsl.Topology, taskToComponent map[string]string) *dsl.Topology {
	tasks := map[string][]int{}
	for id, comp := range taskToComponent {
		if n, err := strconv.Atoi(id); err == nil && n > 0 {
			tasks[comp] = append(tasks[comp], n)
		}
	}
	if len(tasks) == 0 {
		return topo
	}
	t := *topo
	comps := make(map[*dsl.Component]*dsl.Component, len(topo.Components))
	t.Components = make([]*dsl.Component, len(topo.Components))
	for i, c := range topo.Components {
		cc := *c
		if ids := tasks[c.ID]; len(ids) > 0 {
			sort.Ints(ids)
			cc.Tasks = ids
		}
		t.Components[i], comps[c] = &cc, &cc
	}
	t.Edges = make([]*dsl.Edge, len(topo.Edges))
	for i, e := range topo.Edges {
		ee := *e
		ee.From, ee.To = comps[e.From], comps[e.To]
		t.Edges[i] = &ee
	}
	if ids := tasks[ackerComponent]; len(ids) > 0 {
		sort.Ints(ids)
		t.AckerTasks = ids
	}
	return &t
}
