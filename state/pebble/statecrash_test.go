package pebble_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state/pebble"
)

// statecrashDirEnv names the Pebble directory of a crash child.
const statecrashDirEnv = "GOSHELTER_STATECRASH_DIR"

// statecrashLines is the input of the crash test: enough that a child paced at
// 50 µs a line is still counting at each of the 20 kills.
const statecrashLines = 30000

// statecrashChild is the test binary as the crash test's child, started with
// statecrash.Env set: it counts on the Pebble directory at statecrashDirEnv and
// returns its exit code.
func statecrashChild(lines string) int {
	n, err := strconv.Atoi(lines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "statecrash child:", err)
		return 2
	}
	store, err := pebble.Open(os.Getenv(statecrashDirEnv))
	if err == nil {
		err = statecrash.Child(context.Background(), store, n, os.Stdout)
		if closeErr := store.Close(); err == nil {
			err = closeErr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "statecrash child:", err)
		return 1
	}
	return 0
}

// TestStatefulBoltsSurviveSIGKILL is issue 23's proof on Pebble (it was the
// core's "state, crash" spec until Pebble left the core module): a stateful
// word count killed with SIGKILL at 20 random moments, started again each
// time, counts every word exactly once.
func TestStatefulBoltsSurviveSIGKILL(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(3*time.Minute))
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	figures, err := statecrash.Prove(ctx, statecrashLines, 20, seed,
		func() *exec.Cmd { return statecrash.Command(statecrashLines, statecrashDirEnv+"="+dir) },
		func(ctx context.Context) (map[string]int, error) {
			store, err := pebble.Open(dir) // the child has exited: the directory is free
			if err != nil {
				return nil, err
			}
			defer store.Close()
			return statecrash.Counts(ctx, store)
		})
	if err != nil {
		t.Fatalf("%v (%v, seed %d)", err, figures, seed)
	}
	t.Logf("SIGKILL figures (Pebble): %v", figures)
	if figures.Kills != 20 {
		t.Errorf("the child finished before it was killed 20 times: %v (seed %d)", figures, seed)
	}
	if figures.Lost != 0 || figures.Doubled != 0 {
		t.Errorf("want 0 lost, 0 double counted: %v (seed %d)", figures, seed)
	}
}
