package routing

import "testing"

// residue must pick the task a plain modulo picks: a mask for a power of two
// tasks, a division otherwise.
func TestResidueIsTheKeyModuloTheTasks(t *testing.T) {
	keys := []uint64{0, 1, 2, 3, 7, 8, 1<<63 + 5, ^uint64(0), 0x9e3779b97f4a7c15}
	for n := 1; n <= 9; n++ {
		for _, k := range keys {
			if got, want := residue(k, n), k%uint64(n); got != want {
				t.Errorf("residue(%#x, %d) = %d, want %d", k, n, got, want)
			}
		}
	}
}
