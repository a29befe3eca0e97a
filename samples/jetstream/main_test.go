package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/samples/internal/clitest"
)

// TestAFailedTopologyStillPrintsTheSummary: with no restarts, work's task
// failure at its 500th input fails the topology; the sample prints its
// summary, then returns the failure (main exits 1 with it).
func TestAFailedTopologyStillPrintsTheSummary(t *testing.T) {
	var err error
	out := clitest.Stdout(t, func() {
		err = run("", "IN", "OUT", options{records: 2000, duration: time.Minute, crashEvery: 500, maxRestarts: 0})
	})
	if err == nil || !strings.Contains(err.Error(), "crashing at input 500") {
		t.Errorf("run = %v, want work's failure", err)
	}
	if last := clitest.LastLine(out); !regexp.MustCompile(`^summary: produced=2000 processed=\d+ committed=\d+ stored=\d+ duplicates=\d+ pending=\d+ lost=0 restarts=0 `).MatchString(last) {
		t.Errorf("the last line is %q, want the summary", last)
	}
}

// TestRestartsLoseNothing: work fails its task at every 700th input;
// supervision restarts the topology and the durable consumer redelivers what
// was not acked, so every record is stored once.
func TestRestartsLoseNothing(t *testing.T) {
	var err error
	out := clitest.Stdout(t, func() {
		err = run("", "IN", "OUT", options{records: 2000, duration: time.Minute, crashEvery: 700, maxRestarts: 10})
	})
	if err != nil {
		t.Fatalf("run = %v; it printed:\n%s", err, out)
	}
	if last := clitest.LastLine(out); !regexp.MustCompile(`^summary: produced=2000 processed=\d+ committed=2000 stored=2000 duplicates=\d+ pending=0 lost=0 restarts=[1-9]\d* `).MatchString(last) {
		t.Errorf("the last line is %q, want every record stored after some restarts", last)
	}
}
