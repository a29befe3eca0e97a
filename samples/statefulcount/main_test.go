package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/samples/internal/clitest"
	"github.com/goshelter/goshelter/samples/internal/corpus"
)

func TestTheCorpusOfMoreLinesStartsWithTheLinesOfFewer(t *testing.T) {
	short, long := corpus.Lines(100, 7), corpus.Lines(1000, 7)
	if !slices.Equal(short, long[:100]) {
		t.Error("the first 100 lines differ between -lines 100 and -lines 1000")
	}
}

// quick are the options of a short run: 10 ms checkpoints, a minute at most.
func quick(dir string, maxRestarts int) options {
	return options{dir: dir, duration: time.Minute, interval: 10 * time.Millisecond, maxRestarts: maxRestarts}
}

// TestRunCountsEveryLineOnce runs the sample on a memory store and on a
// Pebble store it then resumes (with nothing left to count).
func TestRunCountsEveryLineOnce(t *testing.T) {
	if err := run(2000, 1, quick("", 100)); err != nil {
		t.Fatal(err) // run fails unless the stored counts are exact
	}
	dir := t.TempDir()
	for range 2 {
		if err := run(2000, 1, quick(dir, 100)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAFailedTopologyStillPrintsTheSummary: a store that covers more lines
// than the corpus has makes the source's Rewind fail, so with no restarts
// the topology fails at once. The sample used to return that error before
// its summary; the summary now comes first, with exact=false, and the error
// after it.
func TestAFailedTopologyStillPrintsTheSummary(t *testing.T) {
	dir := t.TempDir()
	if err := run(2000, 1, quick(dir, 100)); err != nil {
		t.Fatal(err)
	}
	var err error
	out := clitest.Stdout(t, func() { err = run(100, 1, quick(dir, 0)) })
	if err == nil {
		t.Fatalf("a run whose source cannot rewind succeeded; it printed:\n%s", out)
	}
	last := clitest.LastLine(out)
	if !regexp.MustCompile(`^summary: lines=100 words=\d+ done=2000 counted=\d+ exact=false checkpoint=\d+ restarts=0$`).MatchString(last) {
		t.Errorf("the last line is %q, want the summary; the error was %v", last, err)
	}
	if !strings.Contains(err.Error(), "Rewind") && !strings.Contains(err.Error(), "is not a line of a corpus of 100 lines") {
		t.Errorf("the error does not name the failed rewind: %v", err)
	}
}
