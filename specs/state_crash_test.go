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

	"github.com/goshelter/goshelter/internal/statecrash"
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
		start := func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", statecrash.Env, crashLines), crashDirEnv+"="+dir)
			cmd.Stderr = GinkgoWriter
			return cmd
		}
		ctx, cancel := context.WithTimeout(context.Background(), Scaled(3*time.Minute))
		defer cancel()
		figures, err := statecrash.Drive(ctx, start, 20, 120*time.Millisecond, uint64(GinkgoRandomSeed()))
		Expect(err).NotTo(HaveOccurred())

		store, err := pebble.Open(dir)
		Expect(err).NotTo(HaveOccurred())
		defer store.Close()
		got, err := statecrash.Counts(ctx, store)
		Expect(err).NotTo(HaveOccurred())
		figures.Messages = crashLines
		figures.Compare(statecrash.Want(statecrash.Lines(crashLines)), got)
		AddReportEntry("SIGKILL figures (Pebble)", figures.String())
		fmt.Fprintln(GinkgoWriter, "SIGKILL figures (Pebble):", figures)
		Expect(figures.Kills).To(Equal(20), "the child finished before it was killed 20 times: %v", figures)
		Expect(figures.Lost).To(BeZero(), "%v", figures)
		Expect(figures.Doubled).To(BeZero(), "%v", figures)
	})
})
