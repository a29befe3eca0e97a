// Package statecrash proves stateful bolts exactly-once by crashing them: a
// child process runs a stateful word count over a positioned source and a
// store, and the driver kills it with SIGKILL at random moments, starts it
// again, and at the end compares every stored count with the input's. The
// core's specs drive it on Pebble, package state/redis's tests on Redis.
package statecrash

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
	"go.uber.org/zap"
)

// Env names the environment variable that makes a test binary the child:
// its value is the number of input lines.
const Env = "GOSHELTER_STATECRASH_LINES"

// The child's markers on stdout.
const (
	runningLine = "statecrash: running"
	doneLine    = "statecrash: done"
)

// Tasks is the parallelism of the child's count bolt, whose state the
// driver reads back task by task.
const Tasks = 2

// Line is one input message; Word what the split bolt emits.
type Line struct{ Text string }

// Word is one word of a Line.
type Word struct{ Text string }

// Lines returns the child's input: n lines of three words from a small
// vocabulary, the same on every start.
func Lines(n int) []Line {
	rnd := rand.New(rand.NewPCG(23, 1))
	lines := make([]Line, n)
	for i := range lines {
		lines[i] = Line{Text: fmt.Sprintf("w%d w%d w%d", rnd.IntN(60), rnd.IntN(60), rnd.IntN(60))}
	}
	return lines
}

// Want returns how often each word occurs in lines.
func Want(lines []Line) map[string]int {
	want := map[string]int{}
	for _, l := range lines {
		for _, w := range strings.Fields(l.Text) {
			want[w]++
		}
	}
	return want
}

// Topology is the child's stateful word count: a positioned log, split
// (paced by lineDelay, so a kill finds work in flight), and count.
func Topology(log *sheltertest.Log[Line], lineDelay time.Duration) (*dsl.Topology, error) {
	b := dsl.New("statecrash", dsl.Conf{dsl.MaxSpoutPending: 64, dsl.CheckpointInterval: 10 * time.Millisecond})
	b.Streams(Line{}, Word{})
	lines := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error {
		time.Sleep(lineDelay)
		for _, w := range strings.Fields(in.Text) {
			out.Emit(Word{Text: w})
		}
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(in Word, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		return nil
	}), dsl.Parallelism(Tasks))
	b.Anchored(lines, split, dsl.Shuffle[Line]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	return b.Build()
}

// Child runs the word count over n lines on store until every line is
// counted and committed, printing the markers the driver waits for.
func Child(ctx context.Context, store state.Store, n int, out io.Writer) error {
	log := sheltertest.NewLog(Lines(n)...)
	topo, err := Topology(log, 50*time.Microsecond)
	if err != nil {
		return err
	}
	r, err := supervision.Run(ctx, topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		return err
	}
	fmt.Fprintln(out, runningLine)
	if err := log.WaitDrained(ctx); err != nil {
		_ = r.Stop(context.Background())
		return err
	}
	if err := r.Stop(context.Background()); err != nil { // its last checkpoint covers the last lines
		return err
	}
	fmt.Fprintln(out, doneLine)
	return nil
}

// Counts reads the committed counts of every count task from store.
func Counts(ctx context.Context, store state.Store) (map[string]int, error) {
	got := map[string]int{}
	for i := 0; i < Tasks; i++ {
		err := store.Scan(ctx, fmt.Sprintf("bolt/count/%d", i), func(k, v []byte) error {
			n, size := binary.Varint(v)
			if size <= 0 || size != len(v) {
				return fmt.Errorf("count of %q is not a varint: %x", k, v)
			}
			got[string(k)] += int(n)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// Figures is what a crash run found.
type Figures struct {
	Kills, Starts, Messages int
	Lost, Doubled           int // words counted too few and too many times, over all words
}

func (f Figures) String() string {
	return fmt.Sprintf("kills=%d starts=%d messages=%d lost=%d double-counted=%d", f.Kills, f.Starts, f.Messages, f.Lost, f.Doubled)
}

// Compare fills the lost and doubled counts of got against want.
func (f *Figures) Compare(want, got map[string]int) {
	for w, n := range want {
		if d := n - got[w]; d > 0 {
			f.Lost += d
		} else {
			f.Doubled -= d
		}
	}
	for w, n := range got {
		if _, ok := want[w]; !ok {
			f.Doubled += n
		}
	}
}

// Command returns the test binary started as a crash child over lines
// input lines, with env (the child's store) added to its environment; its
// stderr is the test's.
func Command(lines int, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), fmt.Sprintf("%s=%d", Env, lines)), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Prove drives the child kills times (Drive, each kill within 120 ms of the
// child running), then reads the counts with counts and compares them with
// those of the input: the figures say what was lost and double counted.
func Prove(ctx context.Context, lines, kills int, seed uint64, start func() *exec.Cmd, counts func(context.Context) (map[string]int, error)) (Figures, error) {
	f, err := Drive(ctx, start, kills, 120*time.Millisecond, seed)
	if err != nil {
		return f, err
	}
	got, err := counts(ctx)
	if err != nil {
		return f, fmt.Errorf("reading the counts: %w", err)
	}
	f.Messages = lines
	f.Compare(Want(Lines(lines)), got)
	return f, nil
}

// Drive starts the child with start, kills it with SIGKILL kills times, each
// at a random moment after it reported running (within maxDelay), then lets
// one run finish. A child that finishes before it was killed ends the kills
// early: Figures.Kills says how many happened.
func Drive(ctx context.Context, start func() *exec.Cmd, kills int, maxDelay time.Duration, seed uint64) (Figures, error) {
	rnd := rand.New(rand.NewPCG(seed, 7))
	var f Figures
	for f.Kills < kills {
		finished, err := runOnce(ctx, start, time.Duration(rnd.Int64N(int64(maxDelay))), &f)
		if err != nil {
			return f, err
		}
		if finished {
			return f, nil
		}
	}
	_, err := runOnce(ctx, start, -1, &f)
	return f, err
}

// runOnce starts the child and kills it after delay once it runs (never for
// a negative delay); finished reports that it ran to its end.
func runOnce(ctx context.Context, start func() *exec.Cmd, delay time.Duration, f *Figures) (finished bool, err error) {
	cmd := start()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("starting the child: %w", err)
	}
	f.Starts++
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	stopKill := make(chan struct{})
	defer close(stopKill)
	killed, done := false, false
	for line := range lines {
		switch {
		case line == runningLine && delay >= 0:
			go func() { // the kill must not wait for the next line
				timer := time.NewTimer(delay)
				defer timer.Stop()
				select {
				case <-timer.C:
				case <-ctx.Done():
				case <-stopKill:
					return
				}
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}()
		case line == doneLine:
			done = true
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil && done:
		return true, nil
	case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled():
		killed = true
	case err != nil:
		return false, fmt.Errorf("the child failed: %w", err)
	}
	if killed {
		f.Kills++
	}
	return false, ctx.Err()
}

// Running and Done are the markers a child of [Drive] prints on stdout: once
// it runs (the kill's delay counts from there), and when it finished its
// work (Drive stops killing). A child other than [Child] (a connector's
// end-to-end run) prints them itself.
const (
	Running = runningLine
	Done    = doneLine
)
