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
	task, err := callSpout(func() component.SpoutTask { return task.NewSpout(c, s.info) })
	if err != nil {
		return err
	}
	if o, ok := task.(component.Opener); ok {
		o.Open(em)
	}
	run := func(fn func(dsl.Collector)) { fn(nil) }
	for {
		m, err := s.wait(ctx, in, run)
		if err != nil {
			return endOfInput(err)
		}
		if _, err := callSpout(func() struct{} { return em.handle(task, m) }); err != nil {
			return err
		}
		if err := s.out.send(&wire.Message{Kind: wire.KindSync}); err != nil {
			return err
		}
	}
}

// callSpout runs spout code, turning a panic into an error: a spout that
// panicked cannot be trusted to go on.
func callSpout[T any](fn func() T) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("multilang: spout panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(), nil
}

// servedSpout is the SpoutEmitter of a served spout.
type servedSpout struct {
	s       *server
	roots   uint64
	emitted int
}

func (e *servedSpout) handle(task component.SpoutTask, m *wire.HostMessage) struct{} {
	switch m.Kind {
	case wire.KindNext:
		e.emitted = 0
		task.Next(e)
		if e.emitted == 0 {
			time.Sleep(idleSpoutPause)
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
	return struct{}{}
}

// Emit implements component.SpoutEmitter: a tracked tuple gets a fresh root as its
// message id.
func (e *servedSpout) Emit(tuple any, tracked bool) uint64 { return e.emit(0, tuple, tracked) }

// EmitDirect implements component.DirectSpoutEmitter: Emit with the host's
// task id of the target ("task").
func (e *servedSpout) EmitDirect(task int, tuple any, tracked bool) uint64 {
	return e.emit(task, tuple, tracked)
}

func (e *servedSpout) emit(task int, tuple any, tracked bool) uint64 {
	st, values := e.s.encode(tuple)
	msg := &wire.Message{Kind: wire.KindEmit, Stream: st.Name, Tuple: values, Task: task}
	var root uint64
	if tracked && e.s.subscribed[st] {
		e.roots++
		root = e.roots
		msg.ID = wire.StringID(strconv.FormatUint(root, 10))
	}
	if err := e.s.out.send(msg); err != nil {
		panic(err)
	}
	e.emitted++
	return root
}

// encode names tuple's stream and encodes its values; it panics with a
// *component.EmitError if the type is not a stream of the topology.
func (s *server) encode(tuple any) (*dsl.Stream, []json.RawMessage) {
	st := streamOf(s.topo, reflect.TypeOf(tuple))
	if st == nil {
		panic(&component.EmitError{Component: s.info.Component, Stream: fmt.Sprintf("%T", tuple), Reason: "its type is not a stream of the topology (declare it with Streams)"})
	}
	vals := encodeValues(st, tuple)
	raw := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		b, err := marshalValue(v)
		if err != nil {
			panic(&component.EmitError{Component: s.info.Component, Stream: st.Name, Reason: fmt.Sprintf("field %q cannot be sent as JSON: %v", st.Fields[i], err)})
		}
		raw[i] = b
	}
	return st, raw
}

func marshalValue(v any) (json.RawMessage, error) {
	return json.Marshal(v)
}

// runBolt serves a bolt: inputs are executed one at a time, heartbeats answered.
func (s *server) runBolt(ctx context.Context, c *dsl.Component, in <-chan inbound) error {
	b := &servedBolt{s: s, ids: map[uint64]hostInput{}}
	task, err := callSpout(func() component.BoltTask { return task.NewBolt(c, s.info) })
	if err != nil {
		return err
	}
	run := func(fn func(dsl.Collector)) { b.call(func() { fn(b) }, nil) }
	// A served bolt is active from its handshake until the host closes its
	// input, and hears so as the runtime's bolts do (Storm tells bolts nothing).
	b.system(task, c.Activation)
	for {
		m, err := s.wait(ctx, in, run)
		if err != nil {
			if err = endOfInput(err); err == nil {
				b.system(task, c.Deactivation)
				err = s.out.flush()
			}
			return err
		}
		if m.Kind != wire.KindTuple {
			s.info.Logger.Warn("a bolt got a message it does not understand", zap.String("kind", string(m.Kind)))
			continue
		}
		if err := b.input(task, m.Tuple); err != nil {
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

func (b *servedBolt) input(task component.BoltTask, t *wire.Tuple) error {
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
func (b *servedBolt) system(task component.BoltTask, v any) {
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

// call runs bolt code; a panic fails in (if given and still open) and is logged.
func (b *servedBolt) call(fn func(), in *dsl.Tuple) {
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			b.s.info.Logger.Error("bolt panicked", zap.Any("panic", r), zap.ByteString("stack", stack))
			if in != nil {
				b.Fail(*in)
			}
			b.report(fmt.Errorf("multilang: component %q task %d panicked: %v\n%s", b.s.info.Component, b.s.info.Task, r, stack))
		}
	}()
	fn()
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

func (b *servedBolt) emit(tuple any, anchors []string, direct int) {
	st, values := b.s.encode(tuple)
	err := b.s.out.send(&wire.Message{Kind: wire.KindEmit, Stream: st.Name, Tuple: values, Anchors: anchors, Task: direct})
	if err != nil {
		panic(err)
	}
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
	if err := b.s.out.send(&wire.Message{Kind: k, ID: wire.StringID(open.id)}); err != nil {
		panic(err)
	}
}
