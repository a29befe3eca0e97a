package idtable

import (
	"math/rand/v2"
	"testing"
)

// check compares t with the map it should equal, through every read path.
func check(t *testing.T, step string, tab *Table[int], want map[uint64]int) {
	t.Helper()
	if tab.Len() != len(want) {
		t.Fatalf("%s: Len = %d, want %d", step, tab.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := tab.Get(k); !ok || got != v {
			t.Fatalf("%s: Get(%#x) = %d, %v; want %d, true", step, k, got, ok, v)
		}
	}
	seen := 0
	for i := range tab.slots {
		if k := tab.slots[i].key; k != 0 {
			seen++
			if _, ok := want[k]; !ok {
				t.Fatalf("%s: slot %d holds %#x, which was removed", step, i, k)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%s: %d slots in use, want %d", step, seen, len(want))
	}
	if len(tab.slots) > 0 && len(want)*4 > len(tab.slots)*3 {
		t.Fatalf("%s: %d keys in %d slots: over three quarters full", step, len(want), len(tab.slots))
	}
	// Robin Hood order: a key after a free slot is at its home, and a key is
	// at most one slot further from its home than the key before it.
	mask := len(tab.slots) - 1
	for i := range tab.slots {
		if tab.slots[i].key == 0 {
			continue
		}
		d, prev := tab.dist(uint64(i)), (i-1)&mask
		if tab.slots[prev].key == 0 && d != 0 {
			t.Fatalf("%s: slot %d holds %#x %d slots past its home, after a free slot", step, i, tab.slots[i].key, d)
		}
		if tab.slots[prev].key != 0 && d > tab.dist(uint64(prev))+1 {
			t.Fatalf("%s: slot %d holds %#x %d slots past its home, after a key %d past its own", step, i, tab.slots[i].key, d, tab.dist(uint64(prev)))
		}
	}
}

// Random operations on keys from a small space, so that probe sequences
// collide, run into each other and wrap around the end of the slots; after
// each, the table holds exactly what a map holds.
func TestTableAgreesWithAMap(t *testing.T) {
	for _, c := range []struct{ space, stride uint64 }{{8, 1}, {40, 1}, {1000, 1}, {40, 16}, {300, 1 << 20}} {
		space := c.space
		r := rand.New(rand.NewPCG(space, c.stride))
		var tab Table[int]
		want := map[uint64]int{}
		// A stride puts keys on the same low bits: they share homes.
		key := func() uint64 { return (1 + r.Uint64N(space)) * c.stride }
		for step := 0; step < 20000; step++ {
			switch op := r.IntN(10); {
			case op < 5:
				k, v := key(), r.Int()
				tab.Put(k, v)
				want[k] = v
			case op < 7:
				k := key()
				v, ok := tab.Take(k)
				w, had := want[k]
				if ok != had || v != w {
					t.Fatalf("space %d step %d: Take(%#x) = %d, %v; want %d, %v", space, step, k, v, ok, w, had)
				}
				delete(want, k)
			case op < 8:
				k := key()
				tab.Delete(k)
				delete(want, k)
			case op < 9:
				k := key()
				if p := tab.Ref(k); p != nil {
					*p++
					want[k]++
				} else if _, had := want[k]; had {
					t.Fatalf("space %d step %d: Ref(%#x) = nil for a held key", space, step, k)
				}
			default:
				odd := r.IntN(2) == 0
				tab.Sweep(func(k uint64, v *int) bool { return (*v%2 != 0) == odd })
				for k, v := range want {
					if (v%2 != 0) == odd {
						delete(want, k)
					}
				}
			}
			if step%97 == 0 || space == 8 {
				check(t, "after an operation", &tab, want)
			}
		}
		check(t, "at the end", &tab, want)
	}
}

// A sweep visits every key at least once and a key it removes exactly once,
// and removes exactly what it is told to, even when removals move keys
// across the end of the slots.
func TestSweepVisitsEveryKey(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var tab Table[int]
		want := map[uint64]int{}
		for range 12 { // 12 of 16 slots: long, wrapping clusters
			k := r.Uint64() | 1
			tab.Put(k, int(k%3))
			want[k] = int(k % 3)
		}
		visited := map[uint64]int{}
		tab.Sweep(func(k uint64, v *int) bool {
			visited[k]++
			return *v == 0
		})
		for k, v := range want {
			if visited[k] == 0 {
				t.Fatalf("round %d: key %#x never visited", round, k)
			}
			if v == 0 {
				if visited[k] != 1 {
					t.Fatalf("round %d: removed key %#x shown %d times", round, k, visited[k])
				}
				delete(want, k)
			}
		}
		check(t, "after the sweep", &tab, want)
	}
}

// Sequential keys (the runtime's roots) sit at their homes, in consecutive
// slots, while a window of them slides through the table as trees open and
// close; and a removal moves none of the others.
func TestSequentialKeysSitAtHome(t *testing.T) {
	var tab Table[uint64]
	const open = 3000
	start := uint64(1)<<63 - 1000 // crosses 2^63 and wraps the slots many times
	for k := start; k < start+20*open; k++ {
		tab.Put(k, k)
		if k >= start+open {
			old := k - open
			before := tab.find(old + 1)
			if v, ok := tab.Take(old); !ok || v != old {
				t.Fatalf("Take(%d) = %d, %v", old, v, ok)
			}
			if after := tab.find(old + 1); after != before {
				t.Fatalf("removing %d moved %d from slot %d to %d", old, old+1, before, after)
			}
		}
	}
	for i, s := range tab.slots {
		if s.key != 0 && tab.dist(uint64(i)) != 0 {
			t.Fatalf("slot %d holds %d, %d slots past its home", i, s.key, tab.dist(uint64(i)))
		}
	}
	if tab.Len() != open {
		t.Fatalf("%d keys, want %d", tab.Len(), open)
	}
}

// After a burst the table shrinks at the next sweep that leaves it mostly
// empty, and still works.
func TestSweepShrinksAfterABurst(t *testing.T) {
	var tab Table[int]
	for k := uint64(1); k <= 100000; k++ {
		tab.Put(k, int(k))
	}
	big := len(tab.slots)
	tab.Sweep(func(k uint64, _ *int) bool { return k > 10 })
	if len(tab.slots) >= big/64 || len(tab.slots) < minSlots {
		t.Fatalf("%d slots after the sweep left 10 keys, from %d", len(tab.slots), big)
	}
	want := map[uint64]int{}
	for k := uint64(1); k <= 10; k++ {
		want[k] = int(k)
	}
	check(t, "after shrinking", &tab, want)
	tab.Sweep(func(uint64, *int) bool { return true })
	if len(tab.slots) != minSlots || tab.Len() != 0 {
		t.Fatalf("emptied: %d slots, %d keys; want %d slots, none", len(tab.slots), tab.Len(), minSlots)
	}
}

// Key 0 marks a free slot: it is never found, and Put refuses it.
func TestKeyZeroIsReserved(t *testing.T) {
	var tab Table[int]
	if _, ok := tab.Get(0); ok {
		t.Fatal("an empty table holds key 0")
	}
	tab.Put(5, 1)
	if _, ok := tab.Get(0); ok || tab.Ref(0) != nil {
		t.Fatal("key 0 found among free slots")
	}
	if _, ok := tab.Take(0); ok {
		t.Fatal("Take(0) took something")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Put(0, ...) did not panic")
		}
	}()
	tab.Put(0, 1)
}

// Clear empties the table and keeps it usable.
func TestClear(t *testing.T) {
	var tab Table[int]
	for k := uint64(1); k <= 50; k++ {
		tab.Put(k, 1)
	}
	tab.Clear()
	check(t, "after Clear", &tab, map[uint64]int{})
	tab.Put(7, 3)
	check(t, "a Put after Clear", &tab, map[uint64]int{7: 3})
}

// BenchmarkChurn is the acker's pattern: a window of open keys, each put,
// updated once and taken, against the same with a Go map.
func BenchmarkChurn(b *testing.B) {
	const open = 4096
	keys := make([]uint64, 1<<16)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range keys {
		keys[i] = r.Uint64() | 1
	}
	b.Run("idtable", func(b *testing.B) {
		var tab Table[[3]uint64]
		for i := 0; i < b.N; i++ {
			k := keys[i&(len(keys)-1)]
			tab.Put(k, [3]uint64{k})
			if p := tab.Ref(k); p != nil {
				p[1] ^= k
			}
			if i >= open {
				tab.Take(keys[(i-open)&(len(keys)-1)])
			}
		}
	})
	b.Run("idtable-sequential", func(b *testing.B) {
		var tab Table[[3]uint64]
		base := keys[0]
		for i := 0; i < b.N; i++ {
			k := base + uint64(i)
			tab.Put(k, [3]uint64{k})
			if p := tab.Ref(k); p != nil {
				p[1] ^= k
			}
			if i >= open {
				tab.Take(k - open)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		m := map[uint64][3]uint64{}
		for i := 0; i < b.N; i++ {
			k := keys[i&(len(keys)-1)]
			m[k] = [3]uint64{k}
			if v, ok := m[k]; ok {
				v[1] ^= k
				m[k] = v
			}
			if i >= open {
				old := keys[(i-open)&(len(keys)-1)]
				if _, ok := m[old]; ok {
					delete(m, old)
				}
			}
		}
	})
}

// The table grows when a Put would fill it over three quarters, and a sweep
// shrinks it when it leaves it under an eighth full, to twice its keys
// rounded up to a power of two: its memory follows what it holds.
func TestSizes(t *testing.T) {
	var tab Table[int]
	for k := uint64(1); k <= 12; k++ {
		tab.Put(k, 0)
	}
	if len(tab.slots) != 16 {
		t.Fatalf("12 keys in %d slots, want 16 (three quarters full)", len(tab.slots))
	}
	tab.Put(13, 0)
	if len(tab.slots) != 32 {
		t.Fatalf("13 keys in %d slots, want 32", len(tab.slots))
	}
	for k := uint64(14); k <= 48; k++ {
		tab.Put(k, 0)
	}
	if len(tab.slots) != 64 {
		t.Fatalf("48 keys in %d slots, want 64", len(tab.slots))
	}
	tab.Sweep(func(k uint64, _ *int) bool { return k > 8 }) // 8 of 64: an eighth, not under
	if len(tab.slots) != 64 || tab.Len() != 8 {
		t.Fatalf("a sweep to an eighth full: %d slots, %d keys; want 64, 8", len(tab.slots), tab.Len())
	}
	tab.Sweep(func(k uint64, _ *int) bool { return k > 7 }) // 7 of 64: shrink to 16
	if len(tab.slots) != 16 || tab.Len() != 7 {
		t.Fatalf("a sweep under an eighth full: %d slots, %d keys; want 16, 7", len(tab.slots), tab.Len())
	}
	for k := uint64(100); k < 183; k++ { // 90 keys: 128 slots
		tab.Put(k, 0)
	}
	if len(tab.slots) != 128 {
		t.Fatalf("90 keys in %d slots, want 128", len(tab.slots))
	}
	tab.Sweep(func(k uint64, _ *int) bool { return k > 10 && k < 178 }) // 12 of 128 slots left
	if len(tab.slots) != 32 || tab.Len() != 12 {
		t.Fatalf("a sweep leaving 12 keys: %d slots, %d keys; want 32 (twice the keys, rounded up), 12", len(tab.slots), tab.Len())
	}
}
