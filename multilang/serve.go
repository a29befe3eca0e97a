package multilang

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/multilang/internal/wire"
	"go.uber.org/zap"
)

// metricsKey is the conf key that lets a served component's TaskInfo.Metric
// send "metrics" messages to the host (see [Serve]).
const metricsKey = "goshelter.multilang.metrics"

// logLevelKey is the conf key naming the lowest level of the log entries a
// served component sends to the host (see [Serve]).
const logLevelKey = "goshelter.multilang.log.level"

// errNoComponent is wrapped by Serve's error when the handshake names a
// component the topology does not have.
var errNoComponent = errors.New("multilang: no such component")

// errServed is the cause of a served component's TaskInfo.Context once Serve
// has returned.
var errServed = errors.New("multilang: Serve returned")

// Serve runs one component of topo as a Storm shell component, so that a Storm
// cluster (through a ShellSpout or ShellBolt, see [Flux]) or another goshelter
// host can run goshelter's Go components as child processes. It reads the
// handshake from in, creates the pid file, answers with the pid on out (always
// the first message, as Storm reads only a pid there) and then runs the
// component named by the handshake's "componentid" until the host closes in
// (Serve then returns nil), ctx ends, or the component fails. A program calls
// it with os.Stdin and os.Stdout; tests and examples pass any reader and
// writer to play the host.
//
// Task ids are the host's: the component's TaskInfo, including its Model
// (each component's Tasks, the AckerTasks), is numbered from the handshake's
// "task->component", which for Storm differs from goshelter's numbering. An
// input's stream is resolved from its sender and the stream id the sender
// declared (what Storm sends; see [Flux] for the ids).
//
// Spouts answer every command with sync; their message ids are the tree roots
// (decimal strings), on every stream with a subscriber. Bolts get every input
// as a tracked tuple whose ack and fail go back to the host, emits anchored to
// the input being executed (or to explicit anchors) when that input came in on
// an anchored edge of the topology (the edge into the bolt decides, as in the
// runtime; the host names the edge by the input's sender and stream), and
// task-id replies turned off. A failed input (an error
// from Execute, a panic, an input that cannot be decoded) is failed and
// reported with an "error" command, which Storm shows in its UI; the task goes
// on. An emit the topology cannot route (a type that is no stream, a misused
// direct emit) is not sent: as under the runtime, it fails what it belongs to
// (a bolt's input, as a panic does; a spout's message, whose Nack the spout
// gets once the command that emitted it returns), it is reported with an
// "error" command, and the task goes on (see dsl.Emitter). A panic in a
// spout, TaskInfo.Fail or a handshake naming no component of topo ends Serve
// with an error, also sent as an "error" command (the host then restarts the
// worker).
//
// The component's logger sends "log" messages to the host at and above the
// level the conf key "goshelter.multilang.log.level" names ("debug", "info",
// "warn", "error"; info by default). TaskInfo.Metric only logs at debug level
// unless the conf (the topology's, the component's or the host's) sets
// "goshelter.multilang.metrics" to true: goshelter's host records any metric,
// but Storm's ShellBolt accepts only metrics a Java subclass registered under
// that name and kills the worker otherwise.
//
// When out is os.Stdout, Serve points os.Stdout at os.Stderr for the rest of
// the process, so that a stray print cannot break the protocol. When in is an
// io.Closer other than os.Stdin, Serve closes it when it returns and returns
// only once its reader goroutine has ended; a read from the process's stdin
// cannot be interrupted, so that reader ends with the process.
func Serve(ctx context.Context, topo *dsl.Topology, in io.Reader, out io.Writer) error {
	return serveWith(ctx, topo, in, out, time.Sleep)
}

// serveWith is Serve with the function that makes a spout's idle pause
// (see idleSpoutPause): tests record the pause instead of timing it.
func serveWith(ctx context.Context, topo *dsl.Topology, in io.Reader, out io.Writer, pause func(time.Duration)) error {
	if out == io.Writer(os.Stdout) {
		os.Stdout = os.Stderr
	}
	s := &server{topo: topo, in: in, out: &frameWriter{w: bufio.NewWriterSize(out, 64<<10)}, frames: wire.NewFrameReader(in, wire.DefaultMaxMessage), pause: pause}
	s.posted.signal = make(chan struct{}, 1)
	s.failure = make(chan error, 1)
	return s.serve(ctx)
}

// server is one Serve call.
type server struct {
	topo    *dsl.Topology
	in      io.Reader
	out     *frameWriter
	frames  *wire.FrameReader
	info    dsl.TaskInfo
	metrics bool // send "metrics" messages (metricsKey)
	// outs are the component's streams that have a subscriber: only then
	// does a spout's tracked emit get a message id, since a reliable spout's
	// emits are tracked on every edge (dsl.Edge.Anchored). They also check
	// direct emits as the runtime's router does (see checkEmit).
	outs map[*dsl.Stream]*outStream
	// anchoring tells, by an input's sender and stream, whether a bolt's
	// emits anchored to it carry its id (dsl.Edge.Anchored).
	anchoring component.Anchoring
	// senders are the components that send to a bolt: id -> Index.
	senders map[string]int
	// inputs resolves the stream of an input from its sender and stream id.
	inputs  map[inputKey]*dsl.Stream
	posted  controlQueue // functions given to TaskInfo.Post
	failure chan error   // TaskInfo.Fail

	// pause makes a spout's idle pause (idleSpoutPause): time.Sleep, but a
	// recorder in tests, which cannot time a millisecond on a loaded machine.
	pause func(time.Duration)
}

type inbound struct {
	msg *wire.HostMessage
	err error
}

func (s *server) serve(ctx context.Context) error {
	frame, err := s.frames.Next()
	if err != nil {
		return fmt.Errorf("multilang: reading the handshake: %w", err)
	}
	m, err := wire.DecodeHost(frame)
	if err == nil && m.Kind != wire.KindHandshake {
		err = fmt.Errorf("got a %q message", m.Kind)
	}
	if err != nil {
		return fmt.Errorf("multilang: bad handshake %s: %w", wire.Preview(frame), err)
	}
	// The component's TaskInfo.Context ends when Serve returns, as a task's
	// ends when the runtime stops it.
	taskCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(errServed)
	c, err := s.setup(taskCtx, m.Handshake)
	if err != nil {
		s.reportError(err)
		return err
	}
	in := make(chan inbound)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.readLoop(in, done)
	}()
	defer s.stopReading(&wg)
	defer close(done)
	if c.Spout != nil {
		err = s.runSpout(ctx, c, in)
	} else {
		err = s.runBolt(ctx, c, in)
	}
	if err != nil {
		s.reportError(err)
	}
	return err
}

// reportError sends err to the host as an "error" command (Storm shows the
// latest in its UI as the component's last error) and flushes it.
func (s *server) reportError(err error) {
	_ = s.out.send(&wire.Message{Kind: wire.KindError, Msg: err.Error()})
	_ = s.out.flush()
}

// stopReading ends the reader goroutine: an input that is an io.Closer is
// closed, which ends a blocked read, and the reader is joined. The process's
// own stdin cannot be interrupted that way; its reader ends with the process,
// which is expected to exit when Serve returns.
func (s *server) stopReading(wg *sync.WaitGroup) {
	c, ok := s.in.(io.Closer)
	if !ok || s.in == io.Reader(os.Stdin) {
		return
	}
	_ = c.Close()
	wg.Wait()
}

// readLoop decodes the host's messages on its own goroutine.
func (s *server) readLoop(in chan<- inbound, done <-chan struct{}) {
	for {
		frame, err := s.frames.Next()
		var item inbound
		if err != nil {
			item.err = err
		} else if item.msg, err = wire.DecodeHost(frame); err != nil {
			item.err = fmt.Errorf("multilang: bad message from the host %s: %w", wire.Preview(frame), err)
		}
		select {
		case in <- item:
		case <-done:
			return
		}
		if item.err != nil {
			return
		}
	}
}

// setup answers the handshake and builds the task's TaskInfo. The pid comes
// first, whatever happens next: Storm reads only a pid from the first message,
// so an error sent before it would be lost.
func (s *server) setup(ctx context.Context, h *wire.Handshake) (*dsl.Component, error) {
	pid := os.Getpid()
	var pidErr error
	if h.PidDir != "" {
		f, err := os.Create(filepath.Join(h.PidDir, strconv.Itoa(pid)))
		if err != nil {
			pidErr = fmt.Errorf("multilang: creating the pid file: %w", err)
		} else {
			f.Close()
		}
	}
	if err := s.out.send(&wire.Message{Kind: wire.KindPid, Pid: pid}); err != nil {
		return nil, err
	}
	if err := s.out.flush(); err != nil {
		return nil, err
	}
	if pidErr != nil {
		return nil, pidErr
	}
	s.topo = renumbered(s.topo, h.Context.TaskToComponent)
	c := s.topo.Component(h.Context.ComponentID)
	if c == nil {
		return nil, fmt.Errorf("%w: topology %q has no component %q", errNoComponent, s.topo.Name, h.Context.ComponentID)
	}
	if c.Stateful() {
		// Storm's own stateful bolts checkpoint with Storm's protocol; a
		// served one would keep its state in the child's memory only.
		return nil, fmt.Errorf("multilang: bolt %q is stateful: serving it to Storm would lose its state at every restart; run the topology with supervision.Run and a store", c.ID)
	}
	s.info = s.taskInfo(c, h).WithContext(ctx)
	s.outs = map[*dsl.Stream]*outStream{}
	s.anchoring = component.NewAnchoring(s.topo, c)
	s.inputs, s.senders = map[inputKey]*dsl.Stream{}, map[string]int{}
	for _, e := range s.topo.Edges {
		if e.From == c {
			s.outs[e.Stream] = s.outs[e.Stream].add(e)
		}
		if e.To == c { // as the host names them: the sender's declared id, or the stream's name
			s.senders[e.From.ID] = e.From.Index
			s.inputs[inputKey{e.From.ID, streamID(e.From, e.Stream)}] = e.Stream
			if k := (inputKey{e.From.ID, e.Stream.Name}); s.inputs[k] == nil {
				s.inputs[k] = e.Stream
			}
		}
	}
	return c, nil
}

// inputKey names an input stream as a host does: the sending component and
// the stream id it declared.
type inputKey struct{ component, stream string }

func (s *server) taskInfo(c *dsl.Component, h *wire.Handshake) dsl.TaskInfo {
	var tasks []int
	for id, comp := range h.Context.TaskToComponent {
		if n, err := strconv.Atoi(id); err == nil && comp == c.ID {
			tasks = append(tasks, n)
		}
	}
	sort.Ints(tasks)
	index := sort.SearchInts(tasks, h.Context.TaskID)
	conf := dsl.Conf{}
	for _, layer := range []map[string]any{s.topo.Conf, c.Conf, h.Conf} {
		for k, v := range layer {
			conf[k] = v
		}
	}
	s.metrics = conf[metricsKey] == true
	level, levelErr := logLevel(conf[logLevelKey])
	log := zap.New(&hostCore{LevelEnabler: level, enc: newLogEncoder(), out: s.out}).With(zap.String("component", c.ID), zap.Int("task", h.Context.TaskID))
	if levelErr != nil {
		log.Warn("bad log level; using info", zap.String("key", logLevelKey), zap.Error(levelErr))
	}
	return dsl.TaskInfo{
		Topology: s.topo.Name, Component: c.ID, Task: h.Context.TaskID, Index: index,
		Parallelism: max(len(tasks), 1), Settings: c.Settings, Conf: conf, Logger: log, Model: s.topo,
		Metric: func(name string, v any) { s.metric(name, v) },
		Post:   func(fn func(dsl.Collector)) { s.posted.push(fn) },
		Fail: func(err error) {
			select {
			case s.failure <- err:
			default:
			}
		},
	}
}

func (s *server) metric(name string, v any) {
	if !s.metrics {
		s.info.Logger.Debug("metric", zap.String("metric", name), zap.Any("value", v))
		return
	}
	params, err := json.Marshal(v)
	if err != nil {
		s.info.Logger.Warn("metric value cannot be sent as JSON", zap.String("metric", name), zap.Error(err))
		return
	}
	_ = s.out.send(&wire.Message{Kind: wire.KindMetrics, Name: name, Params: params})
}

// wait returns the next host message, running posted functions meanwhile. It
// flushes what was written before it blocks.
func (s *server) wait(ctx context.Context, in <-chan inbound, run func(fn func(dsl.Collector))) (*wire.HostMessage, error) {
	for {
		if fn, ok := s.posted.pop(); ok {
			run(fn.(func(dsl.Collector)))
			continue
		}
		if err := s.out.flush(); err != nil {
			return nil, fmt.Errorf("multilang: writing to the host: %w", err)
		}
		select { // a failure wins over input that is already waiting
		case err := <-s.failure:
			return nil, fmt.Errorf("multilang: component %q task %d failed: %w", s.info.Component, s.info.Task, err)
		default:
		}
		select {
		case item := <-in:
			if item.err != nil {
				return nil, item.err
			}
			return item.msg, nil
		case <-s.posted.signal:
		case err := <-s.failure:
			return nil, fmt.Errorf("multilang: component %q task %d failed: %w", s.info.Component, s.info.Task, err)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// frameWriter writes messages to the host; the component's logger may use it
// from any goroutine.
type frameWriter struct {
	mu  sync.Mutex // mu guards w and buf
	w   *bufio.Writer
	buf []byte
}

func (f *frameWriter) send(v any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.buf, err = wire.AppendFrame(f.buf[:0], v); err != nil {
		return err
	}
	_, err = f.w.Write(f.buf)
	return err
}

func (f *frameWriter) flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Flush()
}

// endOfInput turns the host closing stdin into a clean end.
func endOfInput(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
