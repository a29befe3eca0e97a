package pebble_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/state/statetest"
)

// TestMain checks that no goroutine of Pebble's outlives the stores' Close,
// and turns the test binary into the crash test's child when it is started
// as one (statecrash_test.go).
func TestMain(m *testing.M) {
	if lines := os.Getenv(statecrash.Env); lines != "" {
		os.Exit(statecrashChild(lines))
	}
	goleak.VerifyTestMain(m)
}

func open(t *testing.T, dir string) state.Store {
	t.Helper()
	s, err := pebble.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.Store { return open(t, t.TempDir()) })
}

func TestDurable(t *testing.T) {
	statetest.RunDurable(t, open)
}

func TestOpenError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := pebble.Open(file)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s), a file, succeeded", file)
	}
	if !strings.Contains(err.Error(), file) {
		t.Errorf("Open's error %q does not name %s", err, file)
	}
}

// TestOpenTwice checks that a second store on an open directory fails
// instead of writing beside the first.
func TestOpenTwice(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	s2, err := pebble.Open(dir)
	if err == nil {
		s2.Close()
		t.Fatalf("a second Open(%s) succeeded", dir)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("Open's error %q does not name %s", err, dir)
	}
}

func TestErrorsNameDir(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	if err := s.Commit(ctx, state.Checkpoint{ID: 3}); err != nil {
		t.Fatal(err)
	}
	err := s.Commit(ctx, state.Checkpoint{ID: 2, Previous: 3})
	if !errors.Is(err, state.ErrStale) || !strings.Contains(err.Error(), dir) {
		t.Errorf("stale Commit = %v, want ErrStale naming %s", err, dir)
	}
	err = s.Commit(ctx, state.Checkpoint{ID: 5, Previous: 4})
	if !errors.Is(err, state.ErrDiverged) || !strings.Contains(err.Error(), dir) {
		t.Errorf("diverged Commit = %v, want ErrDiverged naming %s", err, dir)
	}
	s.Close()
	_, err = s.Committed(ctx)
	if !errors.Is(err, state.ErrClosed) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Committed after Close = %v, want ErrClosed naming %s", err, dir)
	}
}

// TestLogger checks that WithLogger receives Pebble's messages, which are
// otherwise dropped.
func TestLogger(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	dir := t.TempDir()
	s, err := pebble.Open(dir, pebble.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A second open replays the WAL the first left, and says so.
	s, err = pebble.Open(dir, pebble.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if logs.Len() == 0 {
		t.Error("nothing of Pebble's reached the logger WithLogger gave")
	}
}

const (
	crashDirEnv = "GOSHELTER_PEBBLE_CRASH_DIR"
	crashKeys   = 50
)

// TestCrash kills a process that commits checkpoints in a loop at random
// moments, and checks after each kill that the store holds exactly the last
// committed checkpoint: every key of checkpoint N is N.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	reported := uint64(0)
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrashWriter$")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill the writer after a random number of commits, while it is
		// somewhere in the next one.
		kill := 1 + rand.IntN(20)
		lines := bufio.NewScanner(out)
		for n := 0; lines.Scan(); n++ {
			id, err := strconv.ParseUint(strings.TrimPrefix(lines.Text(), "committed "), 10, 64)
			if err != nil {
				t.Fatalf("round %d: writer said %q", round, lines.Text())
			}
			reported = id
			if n+1 == kill {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			// Then read on: the pipe holds what the writer said before it died.
		}
		cmd.Wait()
		if reported == 0 {
			t.Fatalf("round %d: the writer committed nothing", round)
		}

		s := open(t, dir)
		id, err := s.Committed(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The writer reports a commit after Commit returns, so the store may
		// be one ahead of what it said.
		if id != reported && id != reported+1 {
			t.Fatalf("round %d: committed %d after the writer reported %d", round, id, reported)
		}
		want := strconv.FormatUint(id, 10)
		n := 0
		err = s.Scan(context.Background(), "crash", func(key, value []byte) error {
			n++
			if string(value) != want {
				return fmt.Errorf("key %q = %q, want %s, the committed ID", key, value, want)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if n != crashKeys+1 {
			t.Fatalf("round %d: %d keys, want %d", round, n, crashKeys+1)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		reported = id
	}
}

// TestHelperCrashWriter is TestCrash's writer process: it commits
// checkpoints until it is killed, reporting each on stdout.
func TestHelperCrashWriter(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("TestCrash's writer process")
	}
	s, err := pebble.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := s.Committed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		id++
		v := []byte(strconv.FormatUint(id, 10))
		c := state.Checkpoint{ID: id, Previous: id - 1, Changes: []state.Change{{Space: "crash", Key: []byte("n"), Value: v}}}
		for i := range crashKeys {
			c.Changes = append(c.Changes, state.Change{Space: "crash", Key: fmt.Appendf(nil, "k/%02d", i), Value: v})
		}
		if err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		// A write to a closed pipe ends the process if the parent is gone.
		if _, err := fmt.Printf("committed %d\n", id); err != nil {
			t.Fatal(err)
		}
	}
}
