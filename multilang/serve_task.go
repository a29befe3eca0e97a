package multilang

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/task"
	"github.com/goshelter/goshelter/multilang/internal/wire"
	"go.uber.org/zap"
)

// idleSpoutPause is how long a served spout waits before answering a "next" in
// which it had nothing to emit, as Storm asks of shell spouts.
const idleSpoutPause = time.Millisecond

// runSpout serves a spout: every command is answered by sync.
func (s *server) runSpout(ctx context.Context, c *dsl.Component, in <-chan inbound) error {
	em := &servedSpout{s: s}
	var spout dsl.SpoutTask
	if err := callUser(func() { spout = task.NewSpout(c, s.info) }); err != nil {
		return s.taskFailed(err)
	}
	if o, ok := spout.(component.Opener); ok {
		o.Open(em)
	}
	if cl, ok := spout.(component.Closer); ok { // a Source's Close hook, once Serve is done with it
		defer func() {
			if err := callUser(func() {
				if err := cl.Close(); err != nil {
					s.info.Logger.Error("spout did not close cleanly", zap.Error(err))
				}
			}); err != nil {
				s.info.Logger.Error("spout panicked while closing", zap.Error(err))
			}
		}()
	}
	run := func(fn func(dsl.Collector)) { fn(nil) }
	for {
		m, err := s.wait(ctx, in, run)
		if err != nil {
			return endOfInput(err)
		}
		// A panic in the spout's code fails the task, as in the runtime:
		// Serve ends and the host restarts the worker.
		if err := callUser(func() { em.handle(spout, m) }); err != nil {
			return s.taskFailed(err)
		}
		if err := s.out.send(&wire.Message{Kind: wire.KindSync}); err != nil {
			return err
		}
	}
}

// taskFailed is Serve's error for a panic that fails the task.
func (s *server) taskFailed(err error) error {
	return fmt.Errorf("multilang: component %q task %d %w", s.info.Component, s.info.Task, err)
}

// callUser is Serve's one recover boundary: every call into the component's
// code (its constructor, a spout's commands, a bolt's inputs) goes through
// it. A panic becomes an error that carries the stack, and the caller decides
// what it costs, as the runtime does: a bolt's input fails and the bolt goes
// on; anything else ends Serve (the task fails).
func callUser(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok { // a failed emit's *component.EmitError stays reachable
				err = fmt.Errorf("panicked: %w\n%s", e, debug.Stack())
			} else {
				err = fmt.Errorf("panicked: %v\n%s", r, debug.Stack())
			}
		}
	}()
	fn()
	return nil
}

// servedSpout is the SpoutEmitter of a served spout.
type servedSpout struct {
	s       *server
	roots   uint64
	emitted int
	// failed are the roots of tracked emits that could not be routed during
	// the current command: the spout hears their Nack once it returns.
	failed []uint64
}

func (e *servedSpout) handle(task dsl.SpoutTask, m *wire.HostMessage) {
	switch m.Kind {
	case wire.KindNext:
		e.emitted = 0
		task.Next(e)
		if e.emitted == 0 && len(e.failed) == 0 {
			e.s.pause(idleSpoutPause)
		}
	case wire.KindAck, wire.KindFail:
		root, err := strconv.ParseUint(m.ID.String(), 10, 64)
		if err != nil {
			e.s.info.Logger.Warn("host settled a message id this spout never emitted", zap.String("id", string(m.ID)))
			break
		}
		if m.Kind == wire.KindAck {
			task.Ack(root)
		} else {
			task.Nack(root)
		}
	case wire.KindActivate, wire.KindDeactivate:
		if a, ok := task.(component.Activator); ok {
			if m.Kind == wire.KindActivate {
				a.Activate()
			} else {
				a.Deactivate()
			}
		}
	default:
		e.s.info.Logger.Warn("a spout got a message it does not understand", zap.String("kind", string(m.Kind)))
	}
	e.nackFailed(task)
}

// nackFailed gives the spout the outcome of its emits that could not be
// routed, as the runtime's acker would: a Nack each, after the command that
// emitted them, never from inside the emit.
func (e *servedSpout) nackFailed(task dsl.SpoutTask) {
	for len(e.failed) > 0 {
		root := e.failed[0]
		e.failed = e.failed[1:]
		task.Nack(root) // a Nack may emit again, and fail again: the loop takes those too
	}
	e.failed = e.failed[:0]
}

// Emit implements dsl.SpoutEmitter: a tracked tuple gets a fresh root as its
// message id.
func (e *servedSpout) Emit(tuple any, tracked bool) uint64 { return e.emit(0, tuple, tracked) }

// EmitDirect implements component.DirectSpoutEmitter: Emit with the host's
// task id of the target ("task").
func (e *servedSpout) EmitDirect(task int, tuple any, tracked bool) uint64 {
	return e.emit(task, tuple, tracked)
}

// emit sends tuple to the host. A tuple the topology cannot route is not
// sent: the error is logged and reported to the host, and a tracked one gets
// a root that fails (nackFailed), so the message has its outcome and the
// spout goes on, as in the runtime.
func (e *servedSpout) emit(task int, tuple any, tracked bool) uint64 {
	st, values, err := e.s.checkEmit(tuple, task)
	if err != nil {
		e.s.emitFailed(err)
		if !tracked {
			return 0
		}
		e.roots++
		e.failed = append(e.failed, e.roots)
		return e.roots
	}
	msg := &wire.Message{Kind: wire.KindEmit, Stream: st.Name, Tuple: values, Task: task}
	var root uint64
	if tracked && e.s.outs[st] != nil {
		e.roots++
		root = e.roots
		msg.ID = wire.StringID(strconv.FormatUint(root, 10))
	}
	// A write error sticks to the writer: the sync or flush that follows
	// returns it and ends Serve.
	_ = e.s.out.send(msg)
	e.emitted++
	return root
}

// emitFailed logs and reports an emit that could not be routed; the task goes
// on.
func (s *server) emitFailed(err error) {
	s.info.Logger.Error("could not emit; the message fails", zap.Error(err))
	_ = s.out.send(&wire.Message{Kind: wire.KindError, Msg: err.Error()})
}

// outStream is a stream of the served component that has subscribers: what
// the runtime's router knows of it to check a direct emit.
type outStream struct {
	direct bool  // its subscribers use direct grouping
	tasks  []int // the subscribers' tasks (the host's ids)
}

// add returns o with the subscriber of edge e added (o may be nil).
func (o *outStream) add(e *dsl.Edge) *outStream {
	if o == nil {
		o = &outStream{}
	}
	o.direct = o.direct || e.Grouping.Kind == dsl.DirectGrouping
	o.tasks = append(o.tasks, e.To.Tasks...)
	return o
}

// checkEmit names tuple's stream and encodes its values, or returns the
// *component.EmitError the runtime's router would for an emit to task direct
// (0: through the groupings): a type that is no stream, a misused direct
// emit; or a value that cannot be sent as JSON.
func (s *server) checkEmit(tuple any, direct int) (*dsl.Stream, []json.RawMessage, error) {
	st := streamOf(s.topo, reflect.TypeOf(tuple))
	if st == nil {
		return nil, nil, component.NotAStream(s.info.Component, tuple, len(s.topo.Streams))
	}
	if out := s.outs[st]; direct != 0 || (out != nil && out.direct) {
		subscribes := out != nil && direct != 0 && slices.Contains(out.tasks, direct)
		if err := component.CheckDirect(s.info.Component, st.Name, direct, out != nil, out != nil && out.direct, subscribes); err != nil {
			return nil, nil, err
		}
	}
	vals := encodeValues(st, tuple)
	raw := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, nil, &component.EmitError{Component: s.info.Component, Stream: st.Name, Reason: fmt.Sprintf("field %q cannot be sent as JSON: %v", st.Fields[i], err)}
		}
		raw[i] = b
	}
	return st, raw, nil
}

// runBolt serves a bolt: inputs are executed one at a time, heartbeats answered.
func (s *server) runBolt(ctx context.Context, c *dsl.Component, in <-chan inbound) error {
	b := &servedBolt{s: s, ids: map[uint64]hostInput{}}
	var bolt dsl.BoltTask
	if err := callUser(func() { bolt = task.NewBolt(c, s.info) }); err != nil {
		return s.taskFailed(err)
	}
	run := func(fn func(dsl.Collector)) { b.call(func() { fn(b) }, nil) }
	// A served bolt is active from its handshake until the host closes its
	// input, and hears so as the runtime's bolts do (Storm tells bolts nothing).
	b.system(bolt, c.Activation)
	for {
		m, err := s.wait(ctx, in, run)
		if err != nil {
			if err = endOfInput(err); err == nil {
				b.system(bolt, c.Deactivation)
				err = s.out.flush()
			}
			return err
		}
		if m.Kind != wire.KindTuple {
			s.info.Logger.Warn("a bolt got a message it does not understand", zap.String("kind", string(m.Kind)))
			continue
		}
		if err := b.input(bolt, m.Tuple); err != nil {
			return err
		}
	}
}

// servedBolt is the Collector of a served bolt. Inputs get local tuple ids
// (TupleID.Edge) that map to the host's ids.
type servedBolt struct {
	s       *server
	ids     map[uint64]hostInput // open inputs, by local id
	next    uint64
	current *dsl.Tuple          // the input being executed
	seen    map[uint64]struct{} // anchorIDs' scratch
}

func (b *servedBolt) input(task dsl.BoltTask, t *wire.Tuple) error {
	if t.Stream == wire.HeartbeatStream && t.Task == -1 {
		return b.s.out.send(&wire.Message{Kind: wire.KindSync})
	}
	in, err := b.tuple(t)
	if err != nil {
		err = fmt.Errorf("multilang: component %q task %d: input %q cannot be decoded; failing it: %w", b.s.info.Component, b.s.info.Task, t.ID, err)
		b.s.info.Logger.Error("input cannot be decoded; failing it", zap.String("id", t.ID), zap.Error(err))
		if err := b.s.out.send(&wire.Message{Kind: wire.KindFail, ID: wire.StringID(t.ID)}); err != nil {
			return err
		}
		return b.s.out.send(&wire.Message{Kind: wire.KindError, Msg: err.Error()})
	}
	b.current = &in
	b.call(func() {
		if err := task.Execute(&in, b); err != nil {
			b.s.info.Logger.Error("bolt failed its input", zap.String("stream", t.Stream), zap.Error(err))
			b.report(fmt.Errorf("multilang: component %q task %d failed an input on stream %q: %w", b.s.info.Component, b.s.info.Task, t.Stream, err))
		}
	}, &in)
	b.current = nil
	if in.IsTick() {
		b.Ack(in) // goshelter's bolts do not settle ticks; the host holds them until acked
	}
	return nil
}

// system executes a lifecycle tuple (none for a nil v): untracked, from
// Storm's system component and task, as the runtime delivers it.
func (b *servedBolt) system(task dsl.BoltTask, v any) {
	if v == nil {
		return
	}
	in := dsl.Tuple{Source: wire.SystemComponent, Task: -1, Value: v}
	b.call(func() {
		if err := task.Execute(&in, b); err != nil {
			b.s.info.Logger.Error("bolt failed a lifecycle tuple", zap.Error(err))
		}
	}, nil)
}

// call runs bolt code through callUser: a panic (a failed emit's
// *component.EmitError among them) fails in, if given and still open, and is
// logged and reported; the bolt goes on.
func (b *servedBolt) call(fn func(), in *dsl.Tuple) {
	err := callUser(fn)
	if err == nil {
		return
	}
	b.s.info.Logger.Error("bolt panicked", zap.Error(err))
	if in != nil {
		b.Fail(*in)
	}
	b.report(fmt.Errorf("multilang: component %q task %d %w", b.s.info.Component, b.s.info.Task, err))
}

// report sends err to the host as an "error" command, so that it shows in
// Storm UI as the component's last error; the task goes on.
func (b *servedBolt) report(err error) {
	_ = b.s.out.send(&wire.Message{Kind: wire.KindError, Msg: err.Error()})
}

// hostInput is an open input of a served bolt.
type hostInput struct {
	id string // the host's id
	// joins tells whether emits anchored to the input carry its id: whether
	// the edge it came in on is anchored (dsl.Edge.Anchored).
	joins bool
}

// tuple turns the host's input into a goshelter tuple.
func (b *servedBolt) tuple(t *wire.Tuple) (dsl.Tuple, error) {
	b.next++
	in := dsl.Tuple{Source: t.Comp, Task: t.Task, ID: dsl.TupleID{Root: b.next, Edge: b.next}}
	if t.Stream == wire.TickStream && t.Comp == wire.SystemComponent {
		var rate int
		if len(t.Values) > 0 {
			_ = json.Unmarshal(t.Values[0], &rate)
		}
		in.Value = dsl.Tick{RateSecs: rate, Period: time.Duration(rate) * time.Second} // Stream stays nil, as the runtime's ticks
	} else {
		st := b.streamOf(t.Comp, t.Stream)
		if st == nil {
			return in, fmt.Errorf("component %q sends no stream %q to %q (and it is no stream of topology %q)", t.Comp, t.Stream, b.s.info.Component, b.s.topo.Name)
		}
		v, err := decodeValues(st, t.Values)
		if err != nil {
			return in, err
		}
		in.Value, in.Stream = v, st
	}
	sender, known := b.s.senders[t.Comp]
	b.ids[b.next] = hostInput{id: t.ID, joins: known && b.s.anchoring.Joins(sender, in.Stream)}
	return in, nil
}

// streamOf resolves an input's stream: by its sender and the stream id the
// sender declared (what Storm sends, and goshelter's host too); Storm's
// "default" from a sender with one stream to this component (a host that runs
// that sender as a shell component with no declared id); else by a stream name
// of the topology (a lifecycle tuple, an older host).
func (b *servedBolt) streamOf(comp, name string) *dsl.Stream {
	if st := b.s.inputs[inputKey{comp, name}]; st != nil {
		return st
	}
	if name == wire.DefaultStream {
		var from []*dsl.Stream
		for k, st := range b.s.inputs {
			if k.component == comp && !slices.Contains(from, st) {
				from = append(from, st)
			}
		}
		if len(from) == 1 {
			return from[0]
		}
	}
	for _, st := range b.s.topo.Streams {
		if st.Name == name {
			return st
		}
	}
	return nil
}

// Emit implements dsl.Emitter.
func (b *servedBolt) Emit(tuple any) { b.emit(tuple, b.currentAnchors(), 0) }

// EmitDirect implements dsl.Emitter.
func (b *servedBolt) EmitDirect(task int, tuple any) { b.emit(tuple, b.currentAnchors(), task) }

// EmitAnchored implements dsl.Collector.
func (b *servedBolt) EmitAnchored(anchors []dsl.Tuple, tuple any) {
	b.emit(tuple, b.anchorIDs(anchors), 0)
}

// EmitDirectAnchored implements dsl.Collector.
func (b *servedBolt) EmitDirectAnchored(task int, anchors []dsl.Tuple, tuple any) {
	b.emit(tuple, b.anchorIDs(anchors), task)
}

// anchorIDs returns the host's ids of the inputs in anchors. An input's local
// id is its own tree (Root = Edge), so an anchor that stands for several
// inputs (a window's, whose Roots list the rest) names each of them: Storm's
// emit takes them all as its anchors.
func (b *servedBolt) anchorIDs(anchors []dsl.Tuple) []string {
	ids := make([]string, 0, len(anchors))
	if b.seen == nil {
		b.seen = map[uint64]struct{}{}
	}
	clear(b.seen)
	add := func(local uint64) {
		// Once each: Storm XORs an edge into a tree once per anchor, so a
		// repeated anchor would cancel itself out.
		if _, dup := b.seen[local]; dup {
			return
		}
		b.seen[local] = struct{}{}
		if in, ok := b.ids[local]; ok && in.joins {
			ids = append(ids, in.id)
		}
	}
	for _, a := range anchors {
		add(a.ID.Root)
		for _, r := range a.ID.Roots {
			add(r)
		}
	}
	return ids
}

func (b *servedBolt) currentAnchors() []string {
	if b.current == nil {
		return nil
	}
	if in, ok := b.ids[b.current.ID.Edge]; ok && in.joins {
		return []string{in.id}
	}
	return nil
}

// Joins implements component.Joiner: an emit anchored to in carries its id
// when in came in on an anchored edge.
func (b *servedBolt) Joins(in *dsl.Tuple) bool { return b.ids[in.ID.Edge].joins }

// emit sends tuple to the host. A tuple the topology cannot route panics with
// the *component.EmitError, as the runtime's bolt emit does: call recovers it
// and fails the input, and the bolt goes on.
func (b *servedBolt) emit(tuple any, anchors []string, direct int) {
	st, values, err := b.s.checkEmit(tuple, direct)
	if err != nil {
		panic(err)
	}
	// A write error sticks to the writer: the next flush returns it and ends
	// Serve.
	_ = b.s.out.send(&wire.Message{Kind: wire.KindEmit, Stream: st.Name, Tuple: values, Anchors: anchors, Task: direct})
}

// Ack implements dsl.Collector.
func (b *servedBolt) Ack(in dsl.Tuple) { b.settle(in, wire.KindAck) }

// Fail implements dsl.Collector.
func (b *servedBolt) Fail(in dsl.Tuple) { b.settle(in, wire.KindFail) }

func (b *servedBolt) settle(in dsl.Tuple, k wire.Kind) {
	open, ok := b.ids[in.ID.Edge]
	if !ok {
		return // settled already
	}
	delete(b.ids, in.ID.Edge)
	_ = b.s.out.send(&wire.Message{Kind: k, ID: wire.StringID(open.id)}) // a write error sticks, as in emit
}
