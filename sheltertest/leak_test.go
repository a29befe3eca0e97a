package sheltertest_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/sheltertest"
)

// Start's leak checks prove themselves: a bolt leaks a goroutine, a file
// descriptor or a child process, and the stand-in test fails once, with a
// message that names what leaked. Each case releases its leak afterwards.

// leakedWaiter is the leaked goroutine's function, named in the report.
func leakedWaiter(release <-chan struct{}) { <-release }

func TestStartCatchesALeakedGoroutine(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	errs := runLeaking(t, func() (string, error) {
		go leakedWaiter(release)
		return "", nil
	})
	wantOneFailure(t, errs, "a goroutine outlived the test:",
		"\n  1 × github.com/goshelter/goshelter/sheltertest_test.leakedWaiter [chan receive], "+
			"created by github.com/goshelter/goshelter/sheltertest_test.TestStartCatchesALeakedGoroutine.func1\n")
}

func TestStartCatchesALeakedFileDescriptor(t *testing.T) {
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	dir := t.TempDir()
	errs := runLeaking(t, func() (string, error) {
		var err error
		f, err = os.CreateTemp(dir, "leaked-")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d -> %s", f.Fd(), f.Name()), nil
	})
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: Start does not check fds")
	}
	wantOneFailure(t, errs, "file descriptors outlived the test: ", leakedName)
}

func TestStartCatchesALeakedChildProcess(t *testing.T) {
	var cmd *exec.Cmd
	defer func() {
		if cmd != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	errs := runLeaking(t, func() (string, error) {
		cmd = exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			return "", err
		}
		return fmt.Sprintf("pid %d (sleep, state ", cmd.Process.Pid), nil
	})
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: Start does not check child processes")
	}
	wantOneFailure(t, errs, "child processes outlived the test: ", leakedName)
}

func TestStartPassesWhatReleasesItsResources(t *testing.T) {
	errs := runLeaking(t, func() (string, error) {
		f, err := os.CreateTemp(t.TempDir(), "closed-")
		if err != nil {
			return "", err
		}
		return "", f.Close()
	})
	if len(errs) != 0 {
		t.Errorf("Start's checks failed a test that leaked nothing: %q", errs)
	}
}

// leakedName stands for what the leak function said it leaked.
const leakedName = "\x00leaked"

// runLeaking runs, under a stand-in test, a topology whose bolt calls leak
// once, ends the stand-in test (Start's checks run) and returns its failures,
// with leakedName in want replaced by leak's description.
func runLeaking(t *testing.T, leak func() (string, error)) []string {
	t.Helper()
	leaked := make(chan struct{})
	var once sync.Once
	var what string
	var leakErr error
	src := sheltertest.NewSource(item{1})
	b := dsl.New("leaking", nil)
	spout := b.Spout("items", src.Spout())
	b.Anchored(spout, b.Bolt("leaker", dsl.AutoAck(func(item, dsl.Emitter) error {
		once.Do(func() {
			what, leakErr = leak()
			close(leaked)
		})
		return nil
	})), dsl.Shuffle[item]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := &failures{}
	sheltertest.Start(st, topo)
	testsupport.Recv(t, leaked, waitFor, "the bolt's leak")
	waitOutcomes(t, src, 1)
	st.end()
	if leakErr != nil {
		t.Fatal(leakErr)
	}
	for i, e := range st.errs {
		if what != "" {
			st.errs[i] = strings.ReplaceAll(e, what, leakedName)
		}
	}
	return st.errs
}

// wantOneFailure checks that errs is one failure that has each of parts.
func wantOneFailure(t *testing.T, errs []string, parts ...string) {
	t.Helper()
	if len(errs) != 1 {
		t.Fatalf("the stand-in test failed %d times, want once: %q", len(errs), errs)
	}
	for _, p := range parts {
		if !strings.Contains(errs[0], p) {
			t.Errorf("the failure %q does not say %q", errs[0], strings.ReplaceAll(p, leakedName, "what leaked"))
		}
	}
}
