package main

import (
	"bytes"
	"github.com/goshelter/goshelter/samples/internal/corpus"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
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
	out := stdout(t, func() { err = run(100, 1, quick(dir, 0)) })
	if err == nil {
		t.Fatalf("a run whose source cannot rewind succeeded; it printed:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^summary: lines=100 words=\d+ done=2000 counted=\d+ exact=false checkpoint=\d+ restarts=0$`).MatchString(last) {
		t.Errorf("the last line is %q, want the summary; the error was %v", last, err)
	}
	if !strings.Contains(err.Error(), "Rewind") && !strings.Contains(err.Error(), "is not a line of a corpus of 100 lines") {
		t.Errorf("the error does not name the failed rewind: %v", err)
	}
}

// stdout returns what f wrote to os.Stdout.
func stdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		_ = r.Close()
		read <- b.String()
	}()
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	f()
	_ = w.Close()
	return <-read
}
