package dsl

import (
	"slices"
	"testing"
	"time"
)

// A window task's cap is its bolt's setting; a task given none (zero) gets
// the default (issue 35: mutants of the fallback lived).
func TestWindowTaskCap(t *testing.T) {
	spec := Windowed(func(TaskInfo) func(Window[int], Emitter) error { return nil }, WindowSpec[int]{Length: time.Second})
	for set, want := range map[int]int{5: 5, 1: 1, 0: defaults().WindowMaxTuples, -1: defaults().WindowMaxTuples} {
		w := spec.Typed(TaskInfo{Settings: Settings{WindowMaxTuples: set}}).Window
		if got := w.MaxTuples(); got != want {
			t.Errorf("WindowMaxTuples %d: the task's cap is %d, want %d", set, got, want)
		}
	}
}

// The values follow the task's entries: inserted at an index (out of order),
// cleared, compacted.
func TestWindowValuesFollowTheEntries(t *testing.T) {
	w := &windowValues[int]{}
	insert := func(v, at int) { w.staged = v; w.Insert(at) }
	insert(1, 0)
	insert(3, 1)
	insert(2, 1) // out of order: before 3
	insert(4, 3) // at the end
	if !slices.Equal(w.vals, []int{1, 2, 3, 4}) || w.staged != 0 {
		t.Fatalf("values %v (staged %d), want [1 2 3 4]", w.vals, w.staged)
	}
	w.Clear(0, 1) // the oldest left: its slot is zeroed, the slice kept
	if !slices.Equal(w.vals, []int{0, 2, 3, 4}) {
		t.Fatalf("after Clear(0, 1): %v", w.vals)
	}
	w.Compact(1) // the space at the head reused
	if !slices.Equal(w.vals, []int{2, 3, 4}) {
		t.Fatalf("after Compact(1): %v", w.vals)
	}
	w.Clear(0, 3) // all left: the slice is emptied
	if len(w.vals) != 0 {
		t.Fatalf("after clearing all: %v", w.vals)
	}
}
