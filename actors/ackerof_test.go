package actors

import (
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/routing"
)

type ackerOfNum struct{ N int }

func TestAckerOfSpreadsRootsOverTheAckers(t *testing.T) {
	b := dsl.New("ackers", dsl.Conf{dsl.AckerTasks: 2})
	b.Spout("s", dsl.Unreliable(func() (ackerOfNum, bool) { return ackerOfNum{}, false }))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := routing.Compile(topo) // s is task 1, the ackers 2 and 3
	if got := [3]int{ackerOf(p, 10), ackerOf(p, 11), ackerOf(p, 12)}; got != [3]int{2, 3, 2} {
		t.Errorf("ackers of roots 10, 11, 12 = %v, want [2 3 2]", got)
	}
}
