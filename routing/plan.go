package routing

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goshelter/goshelter/dsl"
)

// Task is one instance of a component, or an acker.
type Task struct {
	ID        int
	Component *dsl.Component // nil for ackers
	Index     int            // position among the component's (or the ackers') tasks
}

// IsAcker reports whether the task is an acker.
func (t Task) IsAcker() bool { return t.Component == nil }

// String names the task, e.g. "split[2]#7".
func (t Task) String() string {
	name := "__acker"
	if t.Component != nil {
		name = t.Component.ID
	}
	return fmt.Sprintf("%s[%d]#%d", name, t.Index, t.ID)
}

// Route is one subscription of a bolt to a component's stream, with the bolt's
// task ids in ascending order.
type Route struct {
	Edge  *dsl.Edge
	Tasks []int
}

// Plan is a compiled topology: task ids and routes. Task ids start at 1 and are
// assigned component by component in id order, then ackers, as Storm does.
type Plan struct {
	Topology *dsl.Topology
	// Tasks holds every task; Tasks[i].ID == i+1.
	Tasks []Task
	// ComponentTasks lists each component's task ids, by component index.
	ComponentTasks [][]int
	// Ackers lists the acker task ids.
	Ackers []int
	// Routes lists, by component index and stream index, where its tuples go.
	Routes [][][]Route
}

// Compile numbers the tasks of t and wires its routes.
func Compile(t *dsl.Topology) *Plan {
	p := &Plan{Topology: t, ComponentTasks: make([][]int, len(t.Components))}
	byID := append([]*dsl.Component(nil), t.Components...)
	sort.Slice(byID, func(i, j int) bool { return byID[i].ID < byID[j].ID })
	for _, c := range byID {
		for i := 0; i < c.Parallelism; i++ {
			id := len(p.Tasks) + 1
			p.Tasks = append(p.Tasks, Task{ID: id, Component: c, Index: i})
			p.ComponentTasks[c.Index] = append(p.ComponentTasks[c.Index], id)
		}
	}
	for i := 0; i < t.Settings.AckerTasks; i++ {
		id := len(p.Tasks) + 1
		p.Tasks = append(p.Tasks, Task{ID: id, Index: i})
		p.Ackers = append(p.Ackers, id)
	}
	p.Routes = make([][][]Route, len(t.Components))
	for i := range p.Routes {
		p.Routes[i] = make([][]Route, len(t.Streams))
	}
	for _, e := range t.Edges {
		r := Route{Edge: e, Tasks: p.ComponentTasks[e.To.Index]}
		p.Routes[e.From.Index][e.Stream.Index] = append(p.Routes[e.From.Index][e.Stream.Index], r)
	}
	return p
}

// Task returns the task with id, or false.
func (p *Plan) Task(id int) (Task, bool) {
	if id < 1 || id > len(p.Tasks) {
		return Task{}, false
	}
	return p.Tasks[id-1], true
}

// AckerOf returns the acker task that tracks the tree with this root.
func (p *Plan) AckerOf(root uint64) int {
	return p.Ackers[root%uint64(len(p.Ackers))]
}

// String prints the wired graph, one task or route per line.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan %q\n", p.Topology.Name)
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "  task %v\n", t)
	}
	for _, e := range p.Topology.Edges {
		fmt.Fprintf(&b, "  route %v tasks %v\n", e, p.ComponentTasks[e.To.Index])
	}
	return b.String()
}
