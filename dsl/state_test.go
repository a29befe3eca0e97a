package dsl

import (
	"maps"
	"math"
	"reflect"
	"testing"
)

// snap returns what a snapshot of st hands out: key -> value, "<deleted>"
// for a delete.
func snap[K comparable, V any](t *testing.T, st *State[K, V]) map[string]string {
	t.Helper()
	out := map[string]string{}
	size, err := st.snapshot(func(k, v []byte) {
		if v == nil {
			out[string(k)] = "<deleted>"
		} else {
			out[string(k)] = string(v)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for k, v := range out {
		want += len(k)
		if v != "<deleted>" {
			want += len(v)
		}
	}
	if size != want {
		t.Errorf("snapshot size %d, want %d", size, want)
	}
	return out
}

func TestStateTracksChangesBetweenSnapshots(t *testing.T) {
	st := newState[string, string]()
	st.Put("a", "1")
	st.Put("b", "2")
	st.Put("a", "3") // changed twice: stored once, last value
	if got := snap(t, st); !maps.Equal(got, map[string]string{"a": "3", "b": "2"}) {
		t.Fatalf("first snapshot %v", got)
	}
	if got := snap(t, st); len(got) != 0 {
		t.Fatalf("nothing changed, snapshot %v", got)
	}
	st.Delete("a")
	st.Delete("a")       // twice: one delete
	st.Delete("missing") // nothing to delete: nothing stored
	st.Put("c", "4")
	st.Delete("c") // put and deleted since the last snapshot: a delete
	if got := snap(t, st); !maps.Equal(got, map[string]string{"a": "<deleted>", "c": "<deleted>"}) {
		t.Fatalf("deletes %v", got)
	}
	if v, ok := st.Get("a"); ok || v != "" {
		t.Fatalf("Get of a deleted key: %q, %v", v, ok)
	}
	if len(st.entries) != 1 { // b: a stored delete leaves nothing behind
		t.Fatalf("%d entries after the deletes were stored, want 1: churn would grow the state", len(st.entries))
	}
	st.Put("b", "5")
	st.Delete("b")
	st.Put("b", "6") // deleted and put again: the value
	if got := snap(t, st); !maps.Equal(got, map[string]string{"b": "6"}) {
		t.Fatalf("put after delete %v", got)
	}
	if st.Len() != 1 {
		t.Fatalf("Len %d, want 1", st.Len())
	}
	all := maps.Collect(st.All())
	if !maps.Equal(all, map[string]string{"b": "6"}) {
		t.Fatalf("All %v", all)
	}
}

func TestStateLenAndAll(t *testing.T) {
	st := newState[int, int]()
	for i := range 10 {
		st.Put(i, i*i)
	}
	st.Delete(3)
	st.Put(4, 0)
	if st.Len() != 9 {
		t.Fatalf("Len %d, want 9", st.Len())
	}
	n := 0
	for k, v := range st.All() {
		if k == 3 || (k != 4 && v != k*k) || (k == 4 && v != 0) {
			t.Fatalf("All gave %d=%d", k, v)
		}
		n++
		if n == 5 {
			break // the iterator stops when told
		}
	}
	if n != 5 {
		t.Fatalf("All yielded %d before the break", n)
	}
}

// roundTrip snapshots a state with one key and restores it into a new one.
func roundTrip[K comparable, V any](t *testing.T, k K, v V) {
	t.Helper()
	st := newState[K, V]()
	st.Put(k, v)
	back := newState[K, V]()
	if _, err := st.snapshot(func(kb, vb []byte) {
		if err := back.restore(kb, vb); err != nil {
			t.Fatal(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	got, ok := back.Get(k)
	if !ok || !reflect.DeepEqual(got, v) {
		t.Fatalf("%v=%v came back as %v (%v)", k, v, got, ok)
	}
	if back.Len() != 1 {
		t.Fatalf("restored Len %d", back.Len())
	}
}

type named string

func TestStateCodecsRoundTrip(t *testing.T) {
	roundTrip(t, "key", "value")
	roundTrip(t, named("k"), named("v"))
	roundTrip(t, -42, math.MinInt64)
	roundTrip(t, int8(-8), int16(300))
	roundTrip(t, uint64(math.MaxUint64), uint8(255))
	roundTrip(t, 1.5, float32(-0.25))
	roundTrip(t, true, false)
	roundTrip(t, "empty", "")
	roundTrip(t, [2]int{1, 2}, struct{ A []int }{A: []int{7}})
}

func TestStateRestoreRejectsBadBytes(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"int value", newState[string, int]().restore([]byte("k"), []byte{0x80})},
		{"empty int value", newState[string, int]().restore([]byte("k"), []byte{})},
		{"int key", newState[int, string]().restore([]byte{0x81, 0x80}, []byte("v"))},
		{"uint value", newState[string, uint]().restore([]byte("k"), []byte{})},
		{"float value", newState[string, float64]().restore([]byte("k"), []byte{1, 2, 3})},
		{"json value", newState[string, struct{ A int }]().restore([]byte("k"), []byte("{"))},
		{"int with trailing bytes", newState[string, int]().restore([]byte("k"), []byte{2, 0})},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: restored bad bytes", c.name)
		}
	}
}

func TestStateSnapshotKeepsChangesItCouldNotEncode(t *testing.T) {
	st := newState[string, any]()
	st.Put("ok", 1)
	st.Put("bad", math.Inf(1)) // JSON has no infinity
	if _, err := st.snapshot(func([]byte, []byte) {}); err == nil {
		t.Fatal("an unencodable value was snapshotted")
	}
}
