package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/samples/internal/clitest"
)

// TestAFailedTopologyStillPrintsTheSummary: with no restarts, the work
// bolt's failure at its 500th input fails the topology; the sample prints its
// summary, then returns the failure (main exits 1 with it).
func TestAFailedTopologyStillPrintsTheSummary(t *testing.T) {
	var err error
	out := clitest.Stdout(t, func() {
		err = run("", options{records: 2000, duration: time.Minute, crashEvery: 500, maxRestarts: 0})
	})
	if err == nil || !strings.Contains(err.Error(), "crashing at input 500") {
		t.Errorf("run = %v, want the work bolt's failure", err)
	}
	if last := clitest.LastLine(out); !regexp.MustCompile(`^summary: produced=2000 processed=\d+ committed=\d+ lost=\d+ duplicates=\d+ retried=\d+ restarts=0 `).MatchString(last) {
		t.Errorf("the last line is %q, want the summary", last)
	}
}

// TestRestartsLoseNothing: the work bolt fails its task at every 700th
// input; supervision restarts the topology and the spout replays from the
// committed offsets, so every record reaches "out" (some twice).
func TestRestartsLoseNothing(t *testing.T) {
	var err error
	out := clitest.Stdout(t, func() {
		err = run("", options{records: 2000, duration: time.Minute, crashEvery: 700, maxRestarts: 10})
	})
	if err != nil {
		t.Fatalf("run = %v; it printed:\n%s", err, out)
	}
	if last := clitest.LastLine(out); !regexp.MustCompile(`^summary: produced=2000 processed=2000 committed=2000 lost=0 duplicates=\d+ retried=\d+ restarts=[1-9]\d* `).MatchString(last) {
		t.Errorf("the last line is %q, want every record processed after some restarts", last)
	}
}
