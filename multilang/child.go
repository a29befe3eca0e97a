package multilang

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goshelter/goshelter/multilang/internal/wire"
	"go.uber.org/zap"
)

// Timing of a child's end.
const (
	// drainDelay is how long the readers may keep reading after the child exited,
	// in case a grandchild still holds its pipes.
	drainDelay = 200 * time.Millisecond
	// killWait bounds the wait for a killed child to be reaped.
	killWait = 5 * time.Second
	// minStartup is the least time a child gets to start and answer the
	// handshake; startup is not held to the subprocess timeout, which is about
	// a running child's silence (Storm does not time the handshake at all).
	minStartup = 10 * time.Second
)

// childConfig is what a shell component tells its child process.
type childConfig struct {
	cmd        Command
	component  string
	task       int
	log        *zap.Logger
	handshake  *wire.Handshake
	timeout    time.Duration // topology.subprocess.timeout.secs
	heartbeat  time.Duration // 0: no heartbeats or silence checks (spouts)
	grace      time.Duration
	maxMessage int
	// dataSlots is how many data messages may be queued before send waits
	// (topology.shellbolt.max.pending). Only what is queued takes memory: 2^31-1
	// costs nothing up front.
	dataSlots int
	// onFrame handles each message after the handshake answer, on the reader
	// goroutine; more reports that further input is already buffered. An error
	// fails the child.
	onFrame func(c *child, frame []byte, more bool) error
	// onDeath is called once, from the waiter goroutine, when the child failed
	// (not when it was closed). It must not block.
	onDeath func(err *childError)
}

// child is a running shell process with its goroutines: one writer for stdin,
// one reader for stdout, one for stderr, a waiter and (for bolts) a watchdog.
// Everything else talks to it through send, sendControl, stall, die and Close.
type child struct {
	cfg    childConfig
	cmd    *exec.Cmd
	pid    int
	pidDir string
	stdin  *os.File
	stdout *os.File
	stderr *os.File

	ctrl       controlQueue  // served first
	data       controlQueue  // bolt inputs; its signal is ctrl's: one wake-up for the writer
	room       chan struct{} // a token per queued data message: send waits while it is full
	stop       chan struct{} // closed when the child fails or is closed: the writer and watchdog end
	stopOnce   sync.Once
	reaped     chan struct{} // closed once the process was reaped and err is set
	stderrDone chan struct{}
	wg         sync.WaitGroup

	closing       atomic.Bool
	answered      atomic.Bool  // the child answered the handshake
	lastHeard     atomic.Int64 // unix nanoseconds of the last message from the child
	reportedPid   atomic.Int64
	pidFileOK     atomic.Bool
	heartbeatSent atomic.Bool // a heartbeat is queued and not yet written
	stalled       atomic.Bool // the reader waits for the task to take what it read (see stall)
	heartbeats    atomic.Uint64

	mu     sync.Mutex // mu guards cause, exited and err
	cause  error
	exited bool
	err    *childError
	tail   stderrTail
}

func startChild(cfg childConfig) (*child, error) {
	// room holds empty structs: a channel of them allocates no buffer, however
	// many slots it has.
	c := &child{cfg: cfg, room: make(chan struct{}, max(cfg.dataSlots, 1)), stop: make(chan struct{}),
		reaped: make(chan struct{}), stderrDone: make(chan struct{})}
	c.ctrl.signal = make(chan struct{}, 1)
	c.data.signal = c.ctrl.signal
	if err := c.start(); err != nil {
		return nil, fmt.Errorf("multilang: component %q task %d: starting %q: %w", cfg.component, cfg.task, cfg.cmd.quoted(), err)
	}
	return c, nil
}

func (c *child) start() (err error) {
	if c.pidDir, err = os.MkdirTemp("", "goshelter-pids-"); err != nil {
		return err
	}
	var theirs []*os.File
	defer func() {
		closeAll(theirs...)
		if err != nil {
			closeAll(c.stdin, c.stdout, c.stderr)
			os.RemoveAll(c.pidDir)
		}
	}()
	pipes := [3][2]*os.File{}
	for i := range pipes {
		r, w, perr := os.Pipe()
		if perr != nil {
			return perr
		}
		pipes[i] = [2]*os.File{r, w}
	}
	c.stdin, c.stdout, c.stderr = pipes[0][1], pipes[1][0], pipes[2][0]
	theirs = []*os.File{pipes[0][0], pipes[1][1], pipes[2][1]}
	c.cmd = exec.Command(c.cfg.cmd.Path, c.cfg.cmd.Args...)
	c.cmd.Dir = c.cfg.cmd.Dir
	if len(c.cfg.cmd.Env) > 0 {
		c.cmd.Env = append(os.Environ(), c.cfg.cmd.Env...)
	}
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = theirs[0], theirs[1], theirs[2]
	ownProcessGroup(c.cmd)
	c.cfg.handshake.PidDir = c.pidDir
	c.ctrl.push(c.cfg.handshake)
	if err = c.cmd.Start(); err != nil {
		return err
	}
	c.pid = c.cmd.Process.Pid
	c.heard()
	c.cfg.log.Debug("child started", zap.Int("pid", c.pid), zap.String("command", c.cfg.cmd.quoted()))
	c.run(c.wait, c.readStderr, c.write, c.read)
	if c.cfg.heartbeat > 0 {
		c.run(c.watch)
	}
	return nil
}

func (c *child) run(fns ...func()) {
	for _, fn := range fns {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			fn()
		}()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// Pid returns the child's process id.
func (c *child) Pid() int { return c.pid }

func (c *child) heard() { c.lastHeard.Store(time.Now().UnixNano()) }

// silence is how long the child has said nothing. While the reader waits for
// the task (stall), the child is not silent: it waits for us, and what it says
// waits in its stdout.
func (c *child) silence() time.Duration {
	if c.stalled.Load() {
		return 0
	}
	return time.Since(time.Unix(0, c.lastHeard.Load()))
}

// stall runs wait, in which the reader waits for the task to take what the
// child said: the reader stops reading its stdout meanwhile, so a child that
// says more than the task can take blocks on its pipe instead of filling the
// host's memory (Storm's ShellBolt reader blocks on its emits the same way).
// The child is not timed while it waits for us. wait must end once the child
// is stopped (c.stop).
func (c *child) stall(wait func()) {
	c.stalled.Store(true)
	wait()
	c.heard()
	c.stalled.Store(false)
}

// limit is how long the child may stay silent: the subprocess timeout once it
// answered the handshake, and at least minStartup before.
func (c *child) limit() time.Duration {
	if c.answered.Load() {
		return c.cfg.timeout
	}
	return max(c.cfg.timeout, minStartup)
}

func (c *child) limitName() string {
	if c.answered.Load() {
		return fmt.Sprintf("topology.subprocess.timeout.secs is %v", c.cfg.timeout)
	}
	return fmt.Sprintf("no answer to the handshake within %v", c.limit())
}

// send queues a data message (a bolt input) for the writer, waiting while
// dataSlots of them are queued. It reports false if the child failed or was
// closed. While it waits, it passes each batch the reader hands over on inbox
// to handle: the task waiting here is the one that must take them, or a child
// that reads its stdin only once its stdout is read would never unblock it.
func (c *child) send(m any, inbox <-chan []*wire.Message, handle func([]*wire.Message)) bool {
	for {
		select {
		case c.room <- struct{}{}:
			c.data.push(m)
			return true
		case batch := <-inbox:
			handle(batch)
		case <-c.stop:
			return false
		}
	}
}

// sendControl queues a message that must not wait behind data (task ids,
// heartbeats, spout commands). It never blocks.
func (c *child) sendControl(m any) { c.ctrl.push(m) }

// write is the only goroutine that writes to the child's stdin.
func (c *child) write() {
	defer c.stdin.Close() // the child reads end of input once we stop
	w := bufio.NewWriterSize(c.stdin, 64<<10)
	var buf []byte
	for {
		m, ok := c.next()
		if !ok {
			return
		}
		var err error
		if buf, err = wire.AppendFrame(buf[:0], m); err != nil {
			c.die(fmt.Errorf("encoding a message for the child: %w", err))
			return
		}
		if _, ok := m.(heartbeat); ok {
			c.heartbeatSent.Store(false)
		}
		if _, err = w.Write(buf); err == nil && c.ctrl.len() == 0 && c.data.len() == 0 {
			err = w.Flush()
		}
		if err != nil {
			c.die(fmt.Errorf("%w: writing to its stdin: %v", errExited, err))
			return
		}
	}
}

// next returns the next message to write, control messages first.
func (c *child) next() (any, bool) {
	for {
		if m, ok := c.ctrl.pop(); ok {
			return m, true
		}
		if m, ok := c.data.pop(); ok {
			<-c.room // a slot for the next send
			return m, true
		}
		select {
		case <-c.ctrl.signal:
		case <-c.stop:
			return nil, false
		}
	}
}

// read is the only goroutine that reads the child's stdout. It closes the
// host's end of the pipe when it ends, at once: a dead child's descriptors
// must not wait for the garbage collector.
func (c *child) read() {
	defer c.stdout.Close()
	fr := wire.NewFrameReader(c.stdout, c.cfg.maxMessage)
	if err := c.readPid(fr); err != nil {
		c.die(err)
		return
	}
	for {
		frame, err := fr.Next()
		if err != nil {
			c.die(c.readError(err))
			return
		}
		c.heard()
		if err := c.checkPidFile(); err != nil {
			c.die(err)
			return
		}
		if err := c.cfg.onFrame(c, frame, fr.Buffered() > 0); err != nil {
			c.die(err)
			return
		}
	}
}

func (c *child) readPid(fr *wire.FrameReader) error {
	frame, err := fr.Next()
	if err != nil {
		return c.readError(err)
	}
	c.heard()
	m, err := wire.Decode(frame)
	if err == nil && m.Kind != wire.KindPid {
		err = fmt.Errorf("got a %q message before the pid", m.Kind)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errHandshake, c.protocolError(frame, err))
	}
	c.reportedPid.Store(int64(m.Pid))
	c.answered.Store(true)
	if m.Pid != c.pid {
		c.cfg.log.Warn("child reported another pid than the one started (a wrapper script?)", zap.Int("pid", c.pid), zap.Int("reported", m.Pid))
	}
	return nil
}

// checkPidFile checks that the child created the file named after its pid. A
// child may create it just after answering (Storm's Python client does), so it
// is checked when the child says something else.
func (c *child) checkPidFile() error {
	if c.pidFileOK.Load() {
		return nil
	}
	pid := c.reportedPid.Load()
	if pid == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(c.pidDir, strconv.FormatInt(pid, 10))); err != nil {
		return fmt.Errorf("%w: no pid file %q after the pid answer", errHandshake, filepath.Join(c.pidDir, strconv.FormatInt(pid, 10)))
	}
	c.pidFileOK.Store(true)
	return nil
}

func (c *child) readError(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, os.ErrClosed):
		return fmt.Errorf("%w: its stdout ended: %v", errExited, err)
	case errors.Is(err, wire.ErrTooLarge):
		return &protocolError{component: c.cfg.component, task: c.cfg.task, err: err}
	}
	return fmt.Errorf("reading its stdout: %w", err)
}

func (c *child) protocolError(frame []byte, err error) *protocolError {
	return &protocolError{component: c.cfg.component, task: c.cfg.task, data: append([]byte(nil), frame...), err: err}
}

// heartbeat is the tuple a bolt's child must answer with sync.
type heartbeat struct{ wire.OutTuple }

// watch sends heartbeats to a bolt's child and fails it when it stays silent.
func (c *child) watch() {
	period := min(c.cfg.heartbeat, c.cfg.timeout/3)
	t := time.NewTicker(max(period, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		if silent, limit := c.silence(), c.limit(); silent > limit {
			c.die(fmt.Errorf("%w: silent for %v (%s)", ErrTimeout, silent.Round(time.Millisecond), c.limitName()))
			return
		}
		if c.heartbeatSent.CompareAndSwap(false, true) {
			n := c.heartbeats.Add(1)
			c.sendControl(heartbeat{wire.OutTuple{ID: "hb-" + strconv.FormatUint(n, 10), Comp: wire.SystemComponent, Stream: wire.HeartbeatStream, Task: -1, Values: []any{}}})
		}
	}
}

// wait reaps the child, lets the readers finish and reports how it ended.
// Once the child is gone, whether it died on its own, was killed for failing
// or was stopped, what is left of its process group (helpers it started) is
// killed at once: nothing it spawned outlives it.
func (c *child) wait() {
	waitErr := c.cmd.Wait()
	killGroup(c.pid)
	c.mu.Lock()
	c.exited = true
	c.mu.Unlock()
	deadline := time.Now().Add(drainDelay)
	_ = c.stdout.SetReadDeadline(deadline)
	_ = c.stderr.SetReadDeadline(deadline)
	c.die(errExited)
	<-c.stderrDone
	e := &childError{component: c.cfg.component, task: c.cfg.task, command: c.cfg.cmd.quoted(), pid: c.pid, stderr: c.tail.String()}
	if waitErr != nil {
		e.exit = waitErr.Error()
	} else {
		e.exit = "exit status 0"
	}
	c.mu.Lock()
	e.err = c.cause
	c.err = e
	c.mu.Unlock()
	close(c.reaped)
	if !c.closing.Load() {
		c.cfg.log.Error("shell child failed", zap.Error(e))
		c.cfg.onDeath(e)
	}
}

// die records why the child failed (the first reason wins), stops the writer
// and watchdog, and kills the process unless it is being closed gracefully.
func (c *child) die(cause error) {
	c.mu.Lock()
	if c.cause == nil {
		c.cause = cause
	}
	exited := c.exited
	c.mu.Unlock()
	c.stopOnce.Do(func() { close(c.stop) })
	if !exited && !c.closing.Load() {
		c.signal(syscall.SIGKILL)
	}
}

func (c *child) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exited {
		signalGroup(c.cmd.Process, sig)
	}
}

// Done is closed once the child has been reaped; Err then says why it ended.
func (c *child) Done() <-chan struct{} { return c.reaped }

// Err returns how the child ended, once Done is closed.
func (c *child) Err() *childError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close stops the child: its stdin is closed and it gets the termination
// signal, then it is killed if it has not exited within the grace period. Close
// returns once the process is reaped and every goroutine of the child has ended.
func (c *child) Close() error {
	if !c.closing.CompareAndSwap(false, true) {
		return nil
	}
	c.stopOnce.Do(func() { close(c.stop) })
	c.signal(syscall.SIGTERM)
	grace := time.NewTimer(c.cfg.grace)
	defer grace.Stop()
	var err error
	select {
	case <-c.reaped:
	case <-grace.C:
		c.cfg.log.Warn("child ignored the termination signal; killing it", zap.Int("pid", c.pid), zap.Duration("grace", c.cfg.grace))
		c.signal(syscall.SIGKILL)
		select {
		case <-c.reaped:
		case <-time.After(killWait):
			err = fmt.Errorf("multilang: component %q task %d: child pid %d was not reaped %v after SIGKILL", c.cfg.component, c.cfg.task, c.pid, killWait)
		}
	}
	if err == nil {
		c.wg.Wait()
	}
	return errors.Join(err, os.RemoveAll(c.pidDir))
}

// controlQueue is an unbounded FIFO: the writer's control messages, served
// before data, and its data messages, bounded by the child's room.
type controlQueue struct {
	mu     sync.Mutex // mu guards items
	items  []any
	signal chan struct{} // gets a token when an item is pushed
}

func (q *controlQueue) push(m any) {
	q.mu.Lock()
	q.items = append(q.items, m)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *controlQueue) pop() (any, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil, false
	}
	m := q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	return m, true
}

func (q *controlQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
