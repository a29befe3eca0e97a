package actors

import (
	"strings"
	"testing"
)

// inTask finds the mailbox's run by name: a renamed run must not turn it off.
func TestInTaskKnowsTheMailboxRun(t *testing.T) {
	if !strings.HasSuffix(runName, "actors.(*mailbox).run") {
		t.Fatalf("runName = %q, want the mailbox's run", runName)
	}
	if inTask() {
		t.Fatal("inTask() on a test's goroutine")
	}
}
