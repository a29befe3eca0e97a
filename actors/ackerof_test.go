package actors

import (
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/routing"
)

type ackerOfNum struct{ N int }

func TestAckerOfSpreadsRootsOverTheAckers(t *testing.T) {
	for _, c := range []struct {
		ackers int
		want   [4]int // the ackers of roots 10, 11, 12, 13 (s is task 1, the ackers 2 on)
	}{
		{1, [4]int{2, 2, 2, 2}},
		{2, [4]int{2, 3, 2, 3}},
		{3, [4]int{3, 4, 2, 3}}, // not a power of two: the residue by division
		{4, [4]int{4, 5, 2, 3}},
	} {
		b := dsl.New("ackers", dsl.Conf{dsl.AckerTasks: c.ackers})
		b.Spout("s", dsl.Unreliable(func() (ackerOfNum, bool) { return ackerOfNum{}, false }))
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		p := routing.Compile(topo)
		if got := [4]int{ackerOf(p, 10), ackerOf(p, 11), ackerOf(p, 12), ackerOf(p, 13)}; got != c.want {
			t.Errorf("%d ackers: ackers of roots 10-13 = %v, want %v", c.ackers, got, c.want)
		}
	}
}
