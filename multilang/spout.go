package multilang

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/multilang/internal/wire"
	"go.uber.org/zap"
)

// Spout defines a spout whose tasks each run cmd as a child process speaking
// Storm's synchronous shell spout protocol, so spouts written for Storm (in
// Python, Node, ...) run unchanged. The child's tuples become values of T, the
// spout's output stream; the child emits them on Storm's "default" stream (or
// under the id cmd.Outputs gives T, or T's stream name), and the context,
// subscribers and [Flux] name the stream that way. An emit with "task" goes
// to that task only (Storm's emitDirect; the stream's subscribers use
// dsl.Direct). Message ids may be strings or numbers; each is acked or failed
// back to the child exactly once.
func Spout[T any](cmd Command) *dsl.SpoutSpec {
	d := newDef(cmd, true)
	return &dsl.SpoutSpec{Output: reflect.TypeFor[T](), Reliable: true, Kind: "shell", Impl: d,
		NewTask: func(info dsl.TaskInfo) dsl.SpoutTask { return newShellSpout(d, info) }}
}

// shellSpout is one task of a shell spout. Every method runs on the task's
// goroutine and, as in Storm, waits for the child's sync: the child is timed
// (topology.subprocess.timeout.secs) only during that wait.
type shellSpout struct {
	def      *def
	info     dsl.TaskInfo
	log      *zap.Logger
	child    *child
	outputs  streams
	inbox    chan *wire.Message // emits and syncs, from the reader goroutine
	e        dsl.SpoutEmitter
	ids      map[uint64]wire.ID // the child's message id of each open tree
	deferred []wire.ID          // ids to ack once the child synced: nothing tracks their tuples
	dead     bool
	failed   sync.Once
}

func newShellSpout(d *def, info dsl.TaskInfo) dsl.SpoutTask {
	s := &shellSpout{def: d, info: info, log: info.Logger, inbox: make(chan *wire.Message, 1024), ids: map[uint64]wire.ID{}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	hs, err := s.prepare()
	if err == nil {
		s.child, err = startChild(childConfig{
			cmd: d.cmd, component: info.Component, task: info.Task, log: s.log, handshake: hs,
			timeout: info.Settings.SubprocessTimeout, grace: d.grace, maxMessage: d.maxMessage,
			onFrame: s.frame, onDeath: func(err *childError) { s.fail(err) },
		})
	}
	if err != nil {
		s.dead = true
		s.fail(err)
	}
	return s
}

func (s *shellSpout) prepare() (*wire.Handshake, error) {
	if s.def.err != nil {
		return nil, fmt.Errorf("multilang: component %q task %d: %w", s.info.Component, s.info.Task, s.def.err)
	}
	topo := s.info.Model
	if topo == nil {
		return nil, fmt.Errorf("multilang: component %q: the runtime gave no topology model", s.info.Component)
	}
	c := topo.Component(s.info.Component)
	if c == nil || c.Spout == nil {
		return nil, fmt.Errorf("multilang: spout %q is not in topology %q", s.info.Component, topo.Name)
	}
	var err error
	if s.outputs, err = resolveOutputs(s.def, topo, c); err != nil {
		return nil, fmt.Errorf("multilang: component %q: %w", c.ID, err)
	}
	return &wire.Handshake{Conf: stormConf(topo.Name, s.info.Conf, s.info.Settings), Context: newContext(topo, c, s.info.Task)}, nil
}

func (s *shellSpout) fail(err error) {
	s.failed.Do(func() { s.info.Fail(err) })
}

// frame handles one message from the child on the reader goroutine.
func (s *shellSpout) frame(c *child, frame []byte, _ bool) error {
	m, err := wire.Decode(frame)
	if err != nil {
		return c.protocolError(frame, err)
	}
	switch m.Kind {
	case wire.KindLog, wire.KindError, wire.KindMetrics:
		report(s.log, s.info, m)
		return nil
	case wire.KindEmit, wire.KindSync:
	default:
		return c.protocolError(frame, fmt.Errorf("a spout may not send %q", m.Kind))
	}
	select {
	case s.inbox <- m:
		return nil
	default:
	}
	c.stall(func() { // the task is busy (its emits park on a full ring): wait for it
		select {
		case s.inbox <- m:
		case <-c.stop:
			err = errReaderStopped
		}
	})
	return err
}

// outputNames lists the stream ids the child may emit on.
func (s *shellSpout) outputNames() []string {
	return slices.Sorted(maps.Keys(s.outputs))
}

// Open implements component.Opener.
func (s *shellSpout) Open(e dsl.SpoutEmitter) { s.e = e }

// Next sends "next" and emits what the child emits until it syncs.
func (s *shellSpout) Next(e dsl.SpoutEmitter) bool {
	s.e = e
	n := s.call(wire.KindNext, "")
	s.ackDeferred()
	return n > 0
}

// Ack sends "ack" with the child's id for the tree.
func (s *shellSpout) Ack(root uint64) { s.settle(root, wire.KindAck) }

// Nack sends "fail" with the child's id for the tree.
func (s *shellSpout) Nack(root uint64) { s.settle(root, wire.KindFail) }

func (s *shellSpout) settle(root uint64, k wire.Kind) {
	id, ok := s.ids[root]
	if !ok {
		return
	}
	delete(s.ids, root)
	s.call(k, id)
	s.ackDeferred()
}

// Abandon forgets the open trees: the child, which owns their ids, is stopped
// with the task.
func (s *shellSpout) Abandon() {
	clear(s.ids)
	s.deferred = nil
}

// Activate sends "activate".
func (s *shellSpout) Activate() {
	s.call(wire.KindActivate, "")
	s.ackDeferred()
}

// Deactivate sends "deactivate".
func (s *shellSpout) Deactivate() {
	s.call(wire.KindDeactivate, "")
	s.ackDeferred()
}

// Close stops the child (see [child.Close]).
func (s *shellSpout) Close() error {
	if s.child == nil {
		return nil
	}
	return s.child.Close()
}

// ackDeferred acks messages whose tuples nobody tracks, now that the child
// waits for commands again.
func (s *shellSpout) ackDeferred() {
	for len(s.deferred) > 0 && !s.dead {
		id := s.deferred[0]
		s.deferred = s.deferred[1:]
		s.call(wire.KindAck, id)
	}
}

// call sends a command and handles the child's emits until it syncs. It
// returns how many tuples the child emitted.
func (s *shellSpout) call(k wire.Kind, id wire.ID) (emitted int) {
	if s.dead {
		return 0
	}
	s.child.sendControl(wire.SpoutCommand{Command: k, ID: id})
	start := time.Now()
	timer := time.NewTimer(s.child.limit())
	defer timer.Stop()
	for {
		select {
		case m := <-s.inbox:
			if m.Kind == wire.KindSync {
				return emitted
			}
			if err := s.emit(m); err != nil {
				s.dead = true
				data, _ := m.MarshalJSON()
				s.child.die(&protocolError{component: s.info.Component, task: s.info.Task, data: data, err: err})
				return emitted
			}
			emitted++
		case <-timer.C:
			waited := min(time.Since(start), s.child.silence())
			if limit := s.child.limit(); waited < limit {
				timer.Reset(limit - waited)
				continue
			}
			s.dead = true
			s.child.die(fmt.Errorf("%w: no sync %v after %q (%s)", ErrTimeout, waited.Round(time.Millisecond), k, s.child.limitName()))
			return emitted
		case <-s.child.Done():
			s.dead = true
			return emitted
		}
	}
}

func (s *shellSpout) emit(m *wire.Message) error {
	st, ok := s.outputs[m.Stream]
	if !ok {
		return fmt.Errorf("emit on stream %q; the spout emits only %q", m.Stream, s.outputNames())
	}
	v, err := decodeValues(st, m.Tuple)
	if err != nil {
		return err
	}
	if s.e == nil {
		return errors.New("the runtime gave the spout no emitter")
	}
	tracked := !m.ID.IsZero()
	// A spout's emit never panics under either host: a tuple the topology
	// cannot route fails its message (its root gets a Nack) and is logged.
	var root uint64
	switch {
	case m.Task != 0: // direct: Storm sends no task ids back
		d, ok := s.e.(component.DirectSpoutEmitter)
		if !ok {
			return errors.New("the runtime's emitter cannot emit direct (no component.DirectSpoutEmitter)")
		}
		root = d.EmitDirect(m.Task, v, tracked)
	case m.NeedTaskIDs:
		te, ok := s.e.(component.SpoutTaskEmitter)
		if !ok {
			return errors.New("the runtime's emitter cannot report task ids (no component.SpoutTaskEmitter)")
		}
		var tasks []int
		root, tasks = te.EmitTasks(v, tracked, nil)
		if tasks == nil {
			tasks = []int{}
		}
		s.child.sendControl(tasks)
	default:
		root = s.e.Emit(v, tracked)
	}
	if tracked {
		if root != 0 {
			s.ids[root] = m.ID
		} else {
			s.deferred = append(s.deferred, m.ID)
		}
	}
	return nil
}
