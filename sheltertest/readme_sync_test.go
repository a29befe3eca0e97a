package sheltertest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestREADMEProgramIsReadmeTest checks that README.md's "Testing a topology"
// section shows readme_test.go, which CI compiles and runs, from its import
// block on (the README names its own package).
func TestREADMEProgramIsReadmeTest(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Testing a topology\n")
	if !ok {
		t.Fatal(`README.md has no "## Testing a topology" section`)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	block, _, closed := strings.Cut(block, "```\n")
	if !ok || !closed {
		t.Fatal(`README.md's "Testing a topology" section has no Go block`)
	}
	want := fromImports(string(program))
	if got := fromImports(block); got != want {
		t.Errorf("README.md's program and readme_test.go differ from the imports on:\nREADME:\n%s\nreadme_test.go:\n%s", got, want)
	}
}

// fromImports returns src from its import block on.
func fromImports(src string) string {
	if i := strings.Index(src, "\nimport ("); i >= 0 {
		return src[i:]
	}
	return ""
}

// TestREADMEProgramHolds runs the README's program again and again, each run
// a subtest with its own topology: 1,000 runs with GOSHELTER_SOAK=1 (the
// issue's bar, under -race), 3 with -short, 20 otherwise.
func TestREADMEProgramHolds(t *testing.T) {
	runs := 20
	switch {
	case os.Getenv("GOSHELTER_SOAK") == "1":
		runs = 1000
	case testing.Short():
		runs = 3
	}
	for i := range runs {
		if !t.Run(fmt.Sprintf("run %d", i+1), TestShipping) {
			t.Fatalf("run %d of %d failed", i+1, runs)
		}
	}
}
