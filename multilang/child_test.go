package multilang

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// handshakeSh answers the handshake the way a well-behaved child does; then runs rest.
const handshakeSh = `read hs; read end_line
dir=$(printf '%s' "$hs" | sed 's/.*"pidDir":"\([^"]*\)".*/\1/')
printf '{"pid": %d}\nend\n' $$
: > "$dir/$$"
`

type deaths chan *childError

func testChild(t *testing.T, script string, configure ...func(*childConfig)) (*child, deaths) {
	t.Helper()
	died := make(deaths, 1)
	cfg := childConfig{
		cmd: Command{Path: "sh", Args: []string{"-c", script}}, component: "c", task: 7, log: zap.NewNop(), handshake: &wire.Handshake{},
		timeout: 5 * time.Second, grace: time.Second, maxMessage: 1 << 10, dataSlots: 4,
		onFrame: func(*child, []byte, bool) error { return nil },
		onDeath: func(err *childError) { died <- err },
	}
	for _, c := range configure {
		c(&cfg)
	}
	c, err := startChild(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, died
}

func waitDeath(t *testing.T, died deaths) *childError {
	t.Helper()
	select {
	case err := <-died:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the child did not fail")
		return nil
	}
}

func expectGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d is still there (or a zombie): kill 0 gave %v", pid, err)
	}
}

func TestChildThatExitsFailsWithItsStatus(t *testing.T) {
	c, died := testChild(t, handshakeSh+`echo "bye" >&2; exit 4`)
	err := waitDeath(t, died)
	if !errors.Is(err, errExited) || !errors.Is(err, ErrChildFailed) || err.exit != "exit status 4" || err.stderr != "bye" || err.component != "c" || err.task != 7 {
		t.Fatalf("error %+v", err)
	}
	if !strings.Contains(err.Error(), `component "c" task 7`) {
		t.Errorf("message %q does not name the component", err)
	}
	expectGone(t, c.Pid())
}

func TestChildHandshakeIsChecked(t *testing.T) {
	cases := map[string]string{
		"a pid that is not a number": `read hs; read e; printf '{"pid": "me"}\nend\n'; sleep 30`,
		"something else than a pid":  `read hs; read e; printf '{"command":"sync"}\nend\n'; sleep 30`,
		"no pid file":                `read hs; read e; printf '{"pid": %d}\nend\n{"command":"sync"}\nend\n' $$; sleep 30`,
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			c, died := testChild(t, script)
			err := waitDeath(t, died)
			if !errors.Is(err, errHandshake) || err.exit != "signal: killed" {
				t.Fatalf("error %v (exit %q)", err, err.exit)
			}
			expectGone(t, c.Pid())
		})
	}
}

func TestChildSilentPastTheTimeoutIsKilled(t *testing.T) {
	c, died := testChild(t, handshakeSh+`sleep 30`, func(cfg *childConfig) {
		cfg.timeout, cfg.heartbeat = 300*time.Millisecond, time.Second
	})
	err := waitDeath(t, died)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrChildFailed) || !strings.Contains(err.Error(), "topology.subprocess.timeout.secs is 300ms") {
		t.Fatalf("error %v", err)
	}
	expectGone(t, c.Pid())
}

func TestChildOversizedMessageIsBadInput(t *testing.T) {
	_, died := testChild(t, handshakeSh+`head -c 5000 /dev/zero | tr '\0' x; printf '\nend\n'; sleep 30`)
	err := waitDeath(t, died)
	var pe *protocolError
	if !errors.As(err, &pe) || !errors.Is(err, wire.ErrTooLarge) || pe.component != "c" {
		t.Fatalf("error %v", err)
	}
}

func TestCloseKillsAChildThatIgnoresTheTerminationSignal(t *testing.T) {
	answered := make(chan struct{}, 1)
	c, died := testChild(t, `trap '' TERM; `+handshakeSh+`printf '{"command":"sync"}\nend\n'; sleep 30 & wait; sleep 30`, func(cfg *childConfig) {
		cfg.grace = 200 * time.Millisecond
		cfg.onFrame = func(*child, []byte, bool) error { answered <- struct{}{}; return nil }
	})
	testsupport.Recv(t, answered, 10*time.Second, "the child's sync") // it runs its trap: SIGTERM will be ignored
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > testsupport.Scaled(3*time.Second) {
		t.Errorf("Close took %v with a 200ms grace period", d)
	}
	expectGone(t, c.Pid())
	select {
	case err := <-died:
		t.Errorf("a closed child was reported as failed: %v", err)
	default:
	}
	if c.Err() == nil || c.Err().exit != "signal: killed" {
		t.Errorf("end %+v", c.Err())
	}
}

func TestStartFailsForAMissingProgram(t *testing.T) {
	_, err := startChild(childConfig{cmd: Command{Path: "/no/such/program"}, component: "c", task: 1, log: zap.NewNop(), handshake: &wire.Handshake{}})
	if err == nil || !strings.Contains(err.Error(), `component "c" task 1: starting "/no/such/program"`) {
		t.Errorf("error %v", err)
	}
}

// A child without heartbeats (a spout's: its task holds it to the subprocess
// timeout only while it awaits a sync) has no watchdog: it may stay silent
// past the timeout, and the first message it reads is the one its host sent,
// not a heartbeat.
func TestChildWithoutHeartbeatsIsNotWatched(t *testing.T) {
	const timeout = 50 * time.Millisecond
	ready := make(chan struct{}, 1)
	c, died := testChild(t, handshakeSh+`printf '{"command":"log","msg":"ready"}\nend\n'; read line; read e; printf '%s' "$line" >&2; exit 5`,
		func(cfg *childConfig) {
			cfg.timeout, cfg.heartbeat = timeout, 0
			cfg.onFrame = func(*child, []byte, bool) error {
				select {
				case ready <- struct{}{}:
				default:
				}
				return nil
			}
		})
	testsupport.Recv(t, ready, 10*time.Second, "the child's first message")
	select { // the silence to survive: four timeouts
	case err := <-died:
		t.Fatalf("a child without heartbeats failed while silent: %v", err)
	case <-time.After(4 * timeout):
	}
	if !c.send(wire.OutTuple{ID: "from-the-host", Values: []any{}}, nil, nil) {
		t.Fatal("the child took no message")
	}
	err := waitDeath(t, died)
	if !errors.Is(err, errExited) || err.exit != "exit status 5" || !strings.Contains(err.stderr, `"from-the-host"`) {
		t.Fatalf("error %v (exit %q, stderr %q), want exit 5 after reading the host's message", err, err.exit, err.stderr)
	}
}

// A command's Env adds to the host's environment: the child sees both.
func TestChildEnvAddsToTheHostsEnvironment(t *testing.T) {
	t.Setenv("GOSHELTER_HOST_VAR", "from-the-host")
	_, died := testChild(t, handshakeSh+`printf '%s %s' "$GOSHELTER_HOST_VAR" "$GOSHELTER_CMD_VAR" >&2; exit 3`, func(cfg *childConfig) {
		cfg.cmd.Env = []string{"GOSHELTER_CMD_VAR=from-the-command"}
	})
	if err := waitDeath(t, died); err.stderr != "from-the-host from-the-command" {
		t.Errorf("the child saw %q, want both variables (exit %q)", err.stderr, err.exit)
	}
}

// openFDs lists the process's open file descriptors.
func openFDs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var fds []string
	for _, e := range entries {
		fds = append(fds, e.Name())
	}
	return fds
}

// A child that ended and was closed leaves no descriptor open in the host:
// neither its ends of the pipes, nor the host's.
func TestChildLeavesNoFileDescriptorOpen(t *testing.T) {
	run := func() {
		c, died := testChild(t, handshakeSh+`exit 0`)
		waitDeath(t, died)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run() // the runtime's own descriptors (the poller's) open once
	before := openFDs(t)
	run()
	if after := openFDs(t); !slices.Equal(after, before) {
		t.Errorf("open descriptors %v after a child, %v before", after, before)
	}
}

// A child that answers the handshake with another pid than the one started (a
// wrapper script's child, say) is run all the same, with a warning naming
// both; one that answers with its own pid gets no warning.
func TestChildReportingAnotherPidIsWarnedOf(t *testing.T) {
	for _, tt := range []struct {
		name, answer string
		warned       bool
	}{
		{"its own pid", handshakeSh, false},
		{"another pid", `read hs; read end_line
dir=$(printf '%s' "$hs" | sed 's/.*"pidDir":"\([^"]*\)".*/\1/')
other=$(($$ + 100000))
printf '{"pid": %d}\nend\n' $other
: > "$dir/$other"
`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			ready := make(chan struct{}, 1)
			c, _ := testChild(t, tt.answer+`printf '{"command":"log","msg":"ready"}\nend\n'; cat >/dev/null`, func(cfg *childConfig) {
				cfg.log = zap.New(core)
				cfg.onFrame = func(*child, []byte, bool) error { ready <- struct{}{}; return nil }
			})
			testsupport.Recv(t, ready, 10*time.Second, "the child's first message after the handshake")
			warnings := logs.FilterMessageSnippet("another pid").All()
			if tt.warned != (len(warnings) == 1) {
				t.Fatalf("warnings %v, want one: %v", warnings, tt.warned)
			}
			if tt.warned && warnings[0].ContextMap()["pid"] != int64(c.Pid()) {
				t.Errorf("the warning names pid %v, want %d", warnings[0].ContextMap()["pid"], c.Pid())
			}
		})
	}
}

// A bolt's child that answers each heartbeat (Storm's: task -1 on the
// __heartbeat stream of __system) with a sync is never timed out, however many
// heartbeat periods it runs: this one ends on its own after three. Heartbeats
// come at least every third of the timeout, whatever the heartbeat period.
func TestChildAnsweringHeartbeatsLives(t *testing.T) {
	script := handshakeSh + `n=0
while read line; do
  read e
  case "$line" in
  *'"comp":"__system","stream":"__heartbeat","task":-1,"tuple":[]'*) printf '{"command":"sync"}\nend\n'; n=$((n+1)) ;;
  *) printf '%s' "$line" >&2; exit 9 ;;
  esac
  [ $n -ge 3 ] && exit 4
done`
	_, died := testChild(t, script, func(cfg *childConfig) {
		cfg.timeout, cfg.heartbeat = 300*time.Millisecond, time.Second
	})
	if err := waitDeath(t, died); !errors.Is(err, errExited) || errors.Is(err, ErrTimeout) || err.exit != "exit status 4" {
		t.Fatalf("error %v (exit %q, stderr %q), want the child's own exit after three heartbeats", err, err.exit, err.stderr)
	}
}

// A child's error says how the process ended and what it last wrote to
// stderr, each only when there is something to say.
func TestChildErrorSaysOnlyWhatItKnows(t *testing.T) {
	base := childError{component: "c", task: 7, command: "run.sh", pid: 42, err: errExited}
	head := `multilang: component "c" task 7: child "run.sh" (pid 42) failed: ` + errExited.Error()
	for _, tt := range []struct {
		exit, stderr, want string
	}{
		{"", "", head},
		{"exit status 3", "", head + "; process: exit status 3"},
		{"", "oops", head + `; stderr ends: "oops"`},
		{"signal: killed", "oops", head + `; process: signal: killed; stderr ends: "oops"`},
	} {
		e := base
		e.exit, e.stderr = tt.exit, tt.stderr
		if got := e.Error(); got != tt.want {
			t.Errorf("Error() = %q\nwant %q", got, tt.want)
		}
	}
}

// Every line a child writes to stderr is logged once and kept for its error,
// the last one also without a newline; the end of stderr adds no empty line.
func TestChildStderrLinesAreLoggedAndKept(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	_, died := testChild(t, handshakeSh+`printf 'one\nlast words' >&2; exit 4`, func(cfg *childConfig) { cfg.log = zap.New(core) })
	err := waitDeath(t, died)
	if err.stderr != "one\nlast words" {
		t.Errorf("stderr kept %q, want both lines", err.stderr)
	}
	// the error is made once the stderr reader has finished: every line is logged
	var lines []string
	for _, e := range logs.FilterMessage("child stderr").All() {
		lines = append(lines, e.ContextMap()["line"].(string))
	}
	if !slices.Equal(lines, []string{"one", "last words"}) {
		t.Errorf("logged stderr lines %q, want [one, last words]", lines)
	}
}

// A stderr line longer than stderrMaxLine (and than the reader's buffer) is
// logged and kept cut at that length, whole up to it; the next line is a line
// of its own.
func TestChildStderrLongLinesAreCut(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	_, died := testChild(t, handshakeSh+`head -c 100000 /dev/zero | tr '\0' x >&2; printf '\nnext\n' >&2; exit 4`,
		func(cfg *childConfig) { cfg.log = zap.New(core) })
	waitDeath(t, died) // made once every stderr line is logged
	var lines []string
	for _, e := range logs.FilterMessage("child stderr").All() {
		lines = append(lines, e.ContextMap()["line"].(string))
	}
	if len(lines) != 2 || lines[0] != strings.Repeat("x", stderrMaxLine) || lines[1] != "next" {
		t.Errorf("logged %d lines of lengths %v, want a cut line of %d and %q", len(lines), lengths(lines), stderrMaxLine, "next")
	}
}

func lengths(lines []string) []int {
	var out []int
	for _, l := range lines {
		out = append(out, len(l))
	}
	return out
}

// A child's stderr is logged at most stderrLinesPerSecond lines a second;
// the lines over that are counted in one warning.
func TestChildStderrIsLoggedAtALimitedRate(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	_, died := testChild(t, handshakeSh+`i=0; while [ $i -lt 150 ]; do echo "line $i"; i=$((i+1)); done >&2; exit 4`,
		func(cfg *childConfig) { cfg.log = zap.New(core) })
	start := time.Now()
	waitDeath(t, died)
	if time.Since(start) >= time.Second {
		t.Skip("the child took a second or more: the lines fell in two windows") // under a very slow machine
	}
	logged := logs.FilterMessage("child stderr").Len()
	suppressed := logs.FilterMessage("child stderr lines not logged (rate limit)").All()
	if logged != stderrLinesPerSecond || len(suppressed) != 1 || suppressed[0].ContextMap()["lines"] != int64(150-stderrLinesPerSecond) {
		t.Errorf("logged %d lines and %v, want %d and one warning of %d more", logged, suppressed, stderrLinesPerSecond, 150-stderrLinesPerSecond)
	}
}

// The rate limit is per second: once a second has passed since the window
// began, lines are logged again.
func TestChildStderrIsLoggedAgainAfterASecond(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	_, died := testChild(t, handshakeSh+`i=0; while [ $i -le 100 ]; do echo "line $i"; i=$((i+1)); done >&2; sleep 1.1; echo "after the pause" >&2; exit 4`,
		func(cfg *childConfig) { cfg.log = zap.New(core) })
	waitDeath(t, died)
	if logs.FilterField(zap.String("line", "after the pause")).Len() != 1 {
		t.Errorf("the line after a pause of more than a second was not logged")
	}
}

// awaitGone waits, with a deadline, until process pid is gone and reaped.
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(testsupport.Scaled(10 * time.Second))
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still there", pid)
		}
		time.Sleep(5 * time.Millisecond) // polled: its reaper is not ours
	}
}

// What a child started is killed once the child is gone: a helper left
// running in its process group does not outlive it.
func TestChildsHelpersDoNotOutliveIt(t *testing.T) {
	_, died := testChild(t, handshakeSh+`sleep 30 & printf '%d' $! >&2; exit 3`)
	err := waitDeath(t, died)
	helper, convErr := strconv.Atoi(err.stderr)
	if convErr != nil || err.exit != "exit status 3" {
		t.Fatalf("error %v (stderr %q)", err, err.stderr)
	}
	awaitGone(t, helper)
}

// Close sends the termination signal to the child's whole process group, so
// its helpers can end cleanly too, before the kill after the grace period.
func TestCloseSignalsTheChildsProcessGroup(t *testing.T) {
	answered := make(chan struct{}, 1)
	// The child ignores the signal, so only its grace period ends it; its
	// helper says it is ready once it has its trap.
	c, _ := testChild(t, handshakeSh+`trap '' TERM
(trap 'echo helper-terminated >&2; exit 0' TERM; printf '{"command":"sync"}\nend\n'; while :; do sleep 0.01; done) &
while :; do sleep 0.01; done`, func(cfg *childConfig) {
		cfg.grace = 500 * time.Millisecond
		cfg.onFrame = func(*child, []byte, bool) error { answered <- struct{}{}; return nil }
	})
	testsupport.Recv(t, answered, 10*time.Second, "the helper's sync")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.Err() == nil || !strings.Contains(c.Err().stderr, "helper-terminated") {
		t.Errorf("the helper heard no termination signal: %+v", c.Err())
	}
}

// Close returns only once every goroutine of the child has ended: here the
// reader, still handing the task a frame when the child is reaped.
func TestCloseWaitsForTheReader(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var handed atomic.Bool
	c, _ := testChild(t, handshakeSh+`printf '{"command":"sync"}\nend\n'; sleep 30`, func(cfg *childConfig) {
		cfg.onFrame = func(*child, []byte, bool) error {
			entered <- struct{}{}
			select {
			case <-release:
			case <-time.After(testsupport.Scaled(10 * time.Second)): // a deadline, in case the test failed before releasing it
			}
			handed.Store(true)
			return nil
		}
	})
	testsupport.Recv(t, entered, 10*time.Second, "the child's sync")
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	testsupport.Recv(t, c.Done(), 10*time.Second, "the child reaped")
	select { // the reader is still in onFrame: Close must wait for it
	case err := <-closed:
		close(release)
		t.Fatalf("Close returned (%v) while the reader was still handing over a frame", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := testsupport.Recv(t, closed, 10*time.Second, "Close"); err != nil {
		t.Fatal(err)
	}
	if !handed.Load() {
		t.Error("Close returned before the reader had handed over its frame")
	}
}

// A child that left its process group (it joined the host's) still gets the
// termination signal on Close: signalGroup falls back to the child alone.
func TestCloseSignalsAChildThatLeftItsProcessGroup(t *testing.T) {
	const leave = `setpgrp(0, getpgrp(getppid())) or die "setpgrp: $!"; exec("sh", "-c", $ARGV[0]) or die "exec: $!"`
	answered := make(chan struct{}, 1)
	c, _ := testChild(t, "", func(cfg *childConfig) {
		cfg.cmd = Command{Path: "perl", Args: []string{"-e", leave, handshakeSh + `trap 'echo terminated >&2; exit 0' TERM
printf '{"command":"sync"}\nend\n'
while :; do sleep 0.01; done`}}
		cfg.grace = 500 * time.Millisecond
		cfg.onFrame = func(*child, []byte, bool) error { answered <- struct{}{}; return nil }
	})
	t.Cleanup(func() { _ = syscall.Kill(c.Pid(), syscall.SIGKILL) }) // if it was not signalled: it is in our group, not its own
	testsupport.Recv(t, answered, 10*time.Second, "the child's sync")
	if pgid, err := syscall.Getpgid(c.Pid()); err != nil || pgid != syscall.Getpgrp() {
		t.Fatalf("the child's process group is %d (%v), want the host's %d", pgid, err, syscall.Getpgrp())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if e := c.Err(); e == nil || e.exit != "exit status 0" || !strings.Contains(e.stderr, "terminated") {
		t.Errorf("the child did not end on the termination signal: %+v", e)
	}
}
