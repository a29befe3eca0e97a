package specs_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state/pebble"
)

// crashDirEnv names the Pebble directory of a crash child.
const crashDirEnv = "GOSHELTER_STATECRASH_DIR"

// crashLines is the input of the crash spec: enough that a child paced at
// 50 µs a line is still counting at each of the 20 kills.
const crashLines = 30000

// runCrashChild is the child side of the crash spec: the test binary, started
// by the spec with statecrash.Env set, counts on Pebble and exits.
func runCrashChild(lines string) {
	n, err := strconv.Atoi(lines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "statecrash child:", err)
		os.Exit(2)
	}
	store, err := pebble.Open(os.Getenv(crashDirEnv))
	if err == nil {
		err = statecrash.Child(context.Background(), store, n, os.Stdout)
		err = joinClose(err, store.Close())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "statecrash child:", err)
		os.Exit(1)
	}
}

func joinClose(err, closeErr error) error {
	if err != nil {
		return err
	}
	return closeErr
}

var _ = Describe("Stateful bolts killed with SIGKILL", Label("state", "crash"), func() {
	It("count every word exactly once over 20 kills and restarts, on Pebble", func() {
		dir := GinkgoT().TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), Scaled(3*time.Minute))
		defer cancel()
		figures, err := statecrash.Prove(ctx, crashLines, 20, uint64(GinkgoRandomSeed()),
			func() *exec.Cmd { return statecrash.Command(crashLines, crashDirEnv+"="+dir) },
			func(ctx context.Context) (map[string]int, error) {
				store, err := pebble.Open(dir) // the child has exited: the directory is free
				if err != nil {
					return nil, err
				}
				defer store.Close()
				return statecrash.Counts(ctx, store)
			})
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("SIGKILL figures (Pebble)", figures.String())
		Expect(figures.Kills).To(Equal(20), "the child finished before it was killed 20 times: %v", figures)
		Expect(figures.Lost).To(BeZero(), "%v", figures)
		Expect(figures.Doubled).To(BeZero(), "%v", figures)
	})
})
