package ids

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func take(s Source, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

func TestSequenceCountsAndSkipsZero(t *testing.T) {
	tests := []struct {
		name        string
		start, step uint64
		want        []uint64
	}{
		{"from 100 by 1", 100, 1, []uint64{100, 101, 102}},
		{"from 0: zero is skipped", 0, 5, []uint64{5, 10, 15}},
		{"wrapping through zero", ^uint64(0) - 1, 1, []uint64{^uint64(0) - 1, ^uint64(0), 1}},
	}
	for _, tt := range tests {
		got := take(Sequence(tt.start, tt.step), len(tt.want))
		for i := range tt.want {
			if got[i] != tt.want[i] {
				t.Errorf("%s: ids %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

func TestFuncSkipsZeros(t *testing.T) {
	vals := []uint64{0, 7, 0, 0, 9}
	i := 0
	f := Func(func() uint64 { v := vals[i]; i++; return v })
	if a, b := f.Next(), f.Next(); a != 7 || b != 9 {
		t.Errorf("Func ids %d, %d; want 7, 9", a, b)
	}
}

func TestSeededIsReproducibleAndRandomIsNot(t *testing.T) {
	a, b, c := take(Seeded(42), 64), take(Seeded(42), 64), take(Seeded(43), 64)
	same, other := true, true
	for i := range a {
		same = same && a[i] == b[i]
		other = other && a[i] == c[i]
		if a[i] == 0 || c[i] == 0 {
			t.Fatal("a seeded source returned 0")
		}
	}
	if !same {
		t.Error("two sources with one seed differ")
	}
	if other {
		t.Error("sources with different seeds agree")
	}
	r1, r2 := take(Random(), 64), take(Random(), 64)
	equal := true
	for i := range r1 {
		if r1[i] == 0 || r2[i] == 0 {
			t.Fatal("a random source returned 0")
		}
		equal = equal && r1[i] == r2[i]
	}
	if equal {
		t.Error("two random sources gave the same ids")
	}
}

// The runtime's sources number roots in sequence from a random start, apart
// from their other ids, and never give root 0, even where the sequence wraps.
func TestRandomNumbersRootsInSequence(t *testing.T) {
	for _, s := range []Source{Random(), Seeded(5)} {
		r, ok := s.(Roots)
		if !ok {
			t.Fatalf("%T numbers no roots", s)
		}
		first := r.NextRoot()
		s.Next() // an edge id between two roots does not move them
		if second := r.NextRoot(); first == 0 || second != first+1 {
			t.Errorf("%T: roots %d, %d; want a non-zero root and its successor", s, first, second)
		}
	}
	if first, other := Random().(Roots).NextRoot(), Random().(Roots).NextRoot(); first == other {
		t.Errorf("two sources started their roots at the same %d", first)
	}
	wrapping := &randomIDs{root: ^uint64(0) - 1}
	if got := []uint64{wrapping.NextRoot(), wrapping.NextRoot()}; got[0] != ^uint64(0) || got[1] != 1 {
		t.Errorf("roots across the wrap %v, want [%d 1]", got, ^uint64(0))
	}
	if _, ok := Source(Sequence(1, 1)).(Roots); ok {
		t.Error("a spec's Sequence numbers roots apart: its tables of known ids would change")
	}
}
