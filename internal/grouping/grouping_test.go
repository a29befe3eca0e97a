package grouping

import "testing"

// Index must pick what a plain modulo picks: a mask for a power of two, a
// division otherwise.
func TestIndexIsTheKeyModuloN(t *testing.T) {
	keys := []uint64{0, 1, 2, 3, 7, 8, 1<<63 + 5, ^uint64(0), 0x9e3779b97f4a7c15}
	for n := 1; n <= 9; n++ {
		for _, k := range keys {
			if got, want := Index(k, n), int(k%uint64(n)); got != want {
				t.Errorf("Index(%#x, %d) = %d, want %d", k, n, got, want)
			}
		}
	}
}
