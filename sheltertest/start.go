package sheltertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// stopWithin bounds the Stop that Start registers: a safety bound, far above
// what a stop takes, that turns a hung stop into a failed test.
const stopWithin = 30 * time.Second

// Start runs topo for the length of the test t, as httptest.NewServer runs a
// server, and returns once the topology is active. The runtime's warnings and
// errors go to t.Logf (shown when the test fails, or with -v); opts come after
// that default, so a supervision.WithLogger in opts replaces it. When the test
// ends (t.Cleanup), Start stops the topology, bounded by 30 s, and fails the
// test if the stop errs or if anything started during the test outlives it: a
// goroutine, a file descriptor or a child process of this process (the last
// two where /proc is mounted, as on Linux). Inputs still in flight at the end
// are drained for the drain timeout, which is the message timeout unless
// supervision.WithDrainTimeout says otherwise.
//
// The checks look at the whole process, as goleak's do: tests that use Start
// must not run in parallel with other tests (no t.Parallel). What exists when
// Start is called is not a leak: an embedded broker or store started before
// it, with its goroutines and sockets. Goroutines such a broker (or a client
// the test owns) starts later are exempted by [IgnoreGoroutines]. A failed
// goroutine check names the leaked goroutines' top functions, grouped and
// counted, and says what to do. The checks run when Start's cleanup does, so
// what a cleanup registered later releases (a blocked bolt, a held input) is
// released first; a cleanup registered before Start (the broker's Close)
// runs after the topology stopped and the checks ran: see "Cleanup order" in
// the package doc. With ginkgo, pass GinkgoTB() as t.
func Start(t testing.TB, topo *dsl.Topology, opts ...supervision.Option) *supervision.Running {
	t.Helper()
	s := &started{t: t, name: topo.Name, log: &testLog{t: t}, before: takeProcessState()}
	t.Cleanup(s.cleanup) // first, so that a Run that fails is checked too
	all := append([]supervision.Option{supervision.WithLogger(s.log.logger())}, opts...)
	r, err := supervision.Run(context.Background(), topo, all...)
	if err != nil {
		t.Fatalf("sheltertest: starting topology %q: %v", topo.Name, err)
	}
	s.mu.Lock()
	s.r = r
	s.mu.Unlock()
	return r
}

// started is one topology run by Start.
type started struct {
	t      testing.TB
	name   string
	log    *testLog
	before processState

	mu sync.Mutex // mu guards r
	r  *supervision.Running
}

// cleanup stops the topology, checks for leftovers and fails the test once,
// with every problem: ginkgo's Errorf ends the cleanup at once.
func (s *started) cleanup() {
	var problems []string
	s.mu.Lock()
	r := s.r
	s.mu.Unlock()
	if r != nil {
		if err := stop(r); err != nil {
			problems = append(problems, fmt.Sprintf("stopping topology %q: %v", s.name, err))
		}
	}
	problems = append(problems, s.before.leftovers(takeIgnored(s.t))...)
	s.log.close()
	if len(problems) > 0 {
		s.t.Helper()
		s.t.Errorf("sheltertest: %s", strings.Join(problems, "\n"))
	}
}

// stop stops r within stopWithin; a topology the test stopped already is fine.
func stop(r *supervision.Running) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopWithin)
	defer cancel()
	err := r.Stop(ctx)
	switch {
	case err == nil || errors.Is(err, supervision.ErrStopped):
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("not stopped within %v, %d in flight (inputs held to the end drain for the drain timeout; see supervision.WithDrainTimeout): %w",
			stopWithin, r.Stats().InFlight, err)
	}
	return err
}

// processState is what the process had before a test started its topology.
type processState struct {
	goroutines map[int]bool    // by id
	fds        map[string]bool // "fd -> target", nil without /proc
	children   map[int]string  // pid -> description, nil without /proc
}

func takeProcessState() processState {
	warmUpPoller()
	return processState{goroutines: goroutineIDs(), fds: openFDs(), children: childProcesses()}
}

// leftovers describes what was started after the processState and is still
// there, but the goroutines under ignore. The goroutine check waits a while
// for goroutines on their way out; then what they were closing is closed,
// but fds and children get the same grace.
func (b processState) leftovers(ignore []string) []string {
	var problems []string
	if leaked := leakedGoroutines(b.goroutines, ignore); len(leaked) > 0 {
		problems = append(problems, describeLeaks(leaked))
	}
	var fds, children []string
	for wait := time.Millisecond; ; wait *= 2 {
		fds, children = newFDs(b.fds), newChildren(b.children)
		if len(fds)+len(children) == 0 || wait > 500*time.Millisecond {
			break
		}
		time.Sleep(wait) // nothing signals an fd closed or a child reaped elsewhere
	}
	if len(fds) > 0 {
		problems = append(problems, "file descriptors outlived the test: "+strings.Join(fds, ", "))
	}
	if len(children) > 0 {
		problems = append(problems, "child processes outlived the test: "+strings.Join(children, ", "))
	}
	return problems
}

// testLog sends log lines to t.Logf until the test's cleanup, and drops them
// after: testing panics on a Log after the test has completed.
type testLog struct {
	t    testing.TB
	mu   sync.RWMutex // mu guards done; held for reading while a line is logged
	done bool
}

func (l *testLog) logger() *zap.Logger {
	cfg := zap.NewDevelopmentEncoderConfig()
	cfg.TimeKey = "" // the test's output has its own order; times only make it wider
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), zapcore.AddSync(l), zap.WarnLevel))
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.done {
		l.t.Logf("%s", bytes.TrimRight(p, "\n"))
	}
	return len(p), nil
}

func (l *testLog) close() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}
