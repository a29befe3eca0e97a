package multilang

import (
	"reflect"
	"testing"

	"github.com/goshelter/goshelter/dsl"
)

// renumbered takes the host's task ids for what the host's context lists and
// keeps goshelter's for the rest; ids that are not a Storm task's (not a
// number, 0, the system task's -1) are ignored.
func TestRenumberedKeepsWhatTheHostDoesNotNumber(t *testing.T) {
	b := dsl.New("renumber", dsl.Conf{dsl.AckerTasks: 1})
	src := b.Spout("nums", dsl.Unreliable(func() (line, bool) { return line{}, false }))
	b.Unanchored(src, b.Bolt("sink", dsl.AutoAck(func(line, dsl.Emitter) error { return nil })), dsl.Shuffle[line]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	own := map[string][]int{}
	for _, c := range topo.Components {
		own[c.ID] = c.Tasks
	}
	got := renumbered(topo, map[string]string{"12": "nums", "11": "nums", "0": "sink", "-1": "__system", "x": "sink"})
	if tasks := got.Component("nums").Tasks; !reflect.DeepEqual(tasks, []int{11, 12}) {
		t.Errorf("nums: tasks %v, want the host's [11 12]", tasks)
	}
	if tasks := got.Component("sink").Tasks; !reflect.DeepEqual(tasks, own["sink"]) {
		t.Errorf("sink: tasks %v, want its own %v", tasks, own["sink"])
	}
	if !reflect.DeepEqual(got.AckerTasks, topo.AckerTasks) || len(got.AckerTasks) != 1 {
		t.Errorf("ackers %v, want their own %v", got.AckerTasks, topo.AckerTasks)
	}
	if got.Edges[0].From != got.Component("nums") || got.Edges[0].To != got.Component("sink") {
		t.Error("the edges do not join the renumbered components")
	}
	if !reflect.DeepEqual(topo.Component("nums").Tasks, own["nums"]) {
		t.Error("renumbered changed the topology it was given")
	}
}
