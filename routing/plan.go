package routing

import (
	"github.com/goshelter/goshelter/dsl"
)

// Task is one instance of a component, or an acker.
type Task struct {
	ID        int
	Component *dsl.Component // nil for ackers
	Index     int            // position among the component's (or the ackers') tasks
}

// route is one subscription of a bolt to a component's stream, with the bolt's
// task ids in ascending order.
type route struct {
	edge  *dsl.Edge
	tasks []int
}

// Plan is a compiled topology: its tasks, numbered as dsl numbers them, and the
// routes between them.
type Plan struct {
	Topology *dsl.Topology
	// Tasks holds every task; Tasks[i].ID == i+1. Ackers have a nil Component.
	Tasks []Task
	// Ackers lists the acker task ids.
	Ackers []int
	// routes lists, by component index and stream index, where its tuples go.
	routes [][][]route
}

// Compile lists the tasks of t and wires its routes.
func Compile(t *dsl.Topology) *Plan {
	p := &Plan{Topology: t, Ackers: t.AckerTasks}
	n := len(t.AckerTasks)
	for _, c := range t.Components {
		n += len(c.Tasks)
	}
	p.Tasks = make([]Task, n)
	for _, c := range t.Components {
		for i, id := range c.Tasks {
			p.Tasks[id-1] = Task{ID: id, Component: c, Index: i}
		}
	}
	for i, id := range t.AckerTasks {
		p.Tasks[id-1] = Task{ID: id, Index: i}
	}
	p.routes = make([][][]route, len(t.Components))
	for i := range p.routes {
		p.routes[i] = make([][]route, len(t.Streams))
	}
	for _, e := range t.Edges {
		r := route{edge: e, tasks: e.To.Tasks}
		p.routes[e.From.Index][e.Stream.Index] = append(p.routes[e.From.Index][e.Stream.Index], r)
	}
	return p
}
