package actors

import (
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/routing"
)

type ackerOfNum struct{ N int }

func TestAckerOfSpreadsRootsOverTheAckers(t *testing.T) {
	for _, ackers := range []int{1, 2, 3, 4} {
		b := dsl.New("ackers", dsl.Conf{dsl.AckerTasks: ackers})
		b.Spout("s", dsl.Unreliable(func() (ackerOfNum, bool) { return ackerOfNum{}, false }))
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		p := routing.Compile(topo)
		// Consecutive roots, and roots ackers apart (a stride that the
		// residue alone would deal to one acker), spread evenly: each acker
		// gets between 3/4 and 5/4 of its share of 4,000.
		for _, stride := range []uint64{1, uint64(ackers), 1 << 8} {
			got := map[int]int{}
			for i := range uint64(4000) {
				got[ackerOf(p, 1000+i*stride)]++
			}
			for _, a := range p.Ackers {
				if share := 4000 / ackers; got[a]*4 < share*3 || got[a]*4 > share*5 {
					t.Errorf("%d ackers, stride %d: acker %d got %d roots of 4000, want about %d (all: %v)", ackers, stride, a, got[a], share, got)
				}
			}
			if len(got) != ackers {
				t.Errorf("%d ackers, stride %d: roots went to %v, not only to the ackers %v", ackers, stride, got, p.Ackers)
			}
		}
	}
}
