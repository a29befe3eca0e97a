package main

import (
	"slices"
	"testing"
	"time"
)

func TestTheCorpusOfMoreLinesStartsWithTheLinesOfFewer(t *testing.T) {
	short, long := generate(100, 7), generate(1000, 7)
	if !slices.Equal(short, long[:100]) {
		t.Error("the first 100 lines differ between -lines 100 and -lines 1000")
	}
}

// TestRunCountsEveryLineOnce runs the sample on a memory store and on a
// Pebble store it then resumes (with nothing left to count).
func TestRunCountsEveryLineOnce(t *testing.T) {
	if err := run(2000, 1, "", time.Minute, 10*time.Millisecond, false); err != nil {
		t.Fatal(err) // run fails unless the stored counts are exact
	}
	dir := t.TempDir()
	for range 2 {
		if err := run(2000, 1, dir, time.Minute, 10*time.Millisecond, false); err != nil {
			t.Fatal(err)
		}
	}
}
