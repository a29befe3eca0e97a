package multilang

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/multilang/internal/wire"
	"go.uber.org/zap"
)

// Bolt defines a bolt whose tasks each run cmd as a child process speaking
// Storm's asynchronous shell bolt protocol, so bolts written for Storm (in
// Python, Node, ...) run unchanged. It accepts every stream; declare the ids
// the child emits on in cmd.Outputs. See the package documentation for the
// mapping of tuples and the failure rules.
func Bolt(cmd Command) *dsl.BoltSpec {
	d := newDef(cmd, false)
	return &dsl.BoltSpec{Input: reflect.TypeFor[any](), Kind: "shell", Impl: d,
		NewTask: func(info dsl.TaskInfo) dsl.BoltTask { return newShellBolt(d, info) }}
}

// shellBolt is one task of a shell bolt. Its fields are touched only on the
// task's goroutine (Execute, Close and functions run through TaskInfo.Post),
// except for the child, which is safe for concurrent use.
type shellBolt struct {
	def     *def
	info    dsl.TaskInfo
	log     *zap.Logger
	child   *child
	outputs streams
	names   map[*dsl.Stream]string // input streams as the child knows them
	pending map[string]dsl.Tuple   // inputs given to the child, by the id it knows them by
	// refused are the ids of inputs the host failed because an emit
	// anchored to them could not be routed: the child settles them later,
	// and that settle is expected, not bad input.
	refused map[string]struct{}
	nextID  uint64
	dead    bool
	failed  sync.Once

	// inbox carries the child's emits, acks and fails from the reader to the
	// task, in batches of at most handOffBatch; the reader waits while it is
	// full (see child.stall). drainPosted is set while a drain is posted to
	// the task and has not started: one at a time, so the control lane holds
	// at most one of them however fast the child talks.
	inbox       chan []*wire.Message
	drainPosted atomic.Bool
}

// How much of what a bolt's child says may wait for its task: handOffSlots
// batches of at most handOffBatch messages in the inbox, plus the batch the
// reader fills and the one the task applies. Beyond that the child blocks on
// its stdout.
const (
	handOffBatch = 256
	handOffSlots = 4
)

func newShellBolt(d *def, info dsl.TaskInfo) dsl.BoltTask {
	b := &shellBolt{def: d, info: info, log: info.Logger, pending: map[string]dsl.Tuple{}, names: map[*dsl.Stream]string{},
		inbox: make(chan []*wire.Message, handOffSlots)}
	if b.log == nil {
		b.log = zap.NewNop()
	}
	hs, err := b.prepare()
	if err == nil {
		b.child, err = startChild(b.childConfig(hs))
	}
	if err != nil {
		b.dead = true
		b.fail(err)
	}
	return b
}

// prepare resolves the bolt's streams and builds its handshake.
func (b *shellBolt) prepare() (*wire.Handshake, error) {
	if b.def.err != nil {
		return nil, fmt.Errorf("multilang: component %q task %d: %w", b.info.Component, b.info.Task, b.def.err)
	}
	topo := b.info.Model
	if topo == nil {
		return nil, fmt.Errorf("multilang: component %q: the runtime gave no topology model", b.info.Component)
	}
	c := topo.Component(b.info.Component)
	if c == nil {
		return nil, fmt.Errorf("multilang: component %q is not in topology %q", b.info.Component, topo.Name)
	}
	var err error
	if b.outputs, err = resolveOutputs(b.def, topo, c); err != nil {
		return nil, fmt.Errorf("multilang: component %q: %w", c.ID, err)
	}
	for _, e := range topo.Edges {
		if e.To == c {
			b.names[e.Stream] = streamID(e.From, e.Stream)
		}
	}
	return &wire.Handshake{Conf: stormConf(topo.Name, b.info.Conf, b.info.Settings), Context: newContext(topo, c, b.info.Task)}, nil
}

func (b *shellBolt) childConfig(hs *wire.Handshake) childConfig {
	slots := defaultMaxPending
	if n := confInt(b.info.Conf, maxPendingKey); n > 0 {
		slots = n
	}
	return childConfig{
		cmd: b.def.cmd, component: b.info.Component, task: b.info.Task, log: b.log, handshake: hs,
		timeout: b.info.Settings.SubprocessTimeout, heartbeat: b.def.heartbeat, grace: b.def.grace,
		maxMessage: b.def.maxMessage, dataSlots: slots,
		onFrame: newBoltReader(b).frame,
		onDeath: func(err *childError) {
			b.info.Post(func(c dsl.Collector) { b.failPending(c) })
			b.fail(err)
		},
	}
}

// fail fails the task once.
func (b *shellBolt) fail(err error) {
	b.failed.Do(func() { b.info.Fail(err) })
}

// Execute hands the input to the child. It waits while maxPendingKey inputs
// are already queued for the child (backpressure, as Storm's shell bolt),
// applying what the child says meanwhile.
func (b *shellBolt) Execute(t *dsl.Tuple, c dsl.Collector) error {
	in := *t // held until the child settles it: a copy, as the input's batch is reused
	if b.dead {
		c.Fail(in)
		return nil
	}
	b.nextID++
	id := strconv.FormatUint(b.nextID, 10)
	handle := func(batch []*wire.Message) { b.apply(batch, c) }
	if in.IsTick() { // untracked and often never acked by children: not held
		b.child.send(b.encode(tickPrefix+id, in), b.inbox, handle)
		return nil
	}
	b.pending[id] = in
	if !b.child.send(b.encode(id, in), b.inbox, handle) {
		delete(b.pending, id)
		c.Fail(in)
	}
	return nil
}

// tickPrefix starts the ids of tick tuples; their acks and fails are ignored.
const tickPrefix = "tick-"

// encode describes an input as the child sees it.
func (b *shellBolt) encode(id string, in dsl.Tuple) wire.OutTuple {
	t := wire.OutTuple{ID: id, Comp: in.Source, Task: in.Task}
	if in.IsTick() { // Storm's tick has one field, rate_secs
		t.Stream, t.Values = wire.TickStream, []any{in.Value.(dsl.Tick).RateSecs}
		return t
	}
	s := in.Stream
	if s == nil { // an activation or deactivation tuple
		s = streamOf(b.info.Model, reflect.TypeOf(in.Value))
	}
	t.Stream, t.Values = b.names[s], encodeValues(s, in.Value)
	if t.Stream == "" && s != nil {
		t.Stream = s.Name
	}
	return t
}

// failPending fails every input the child had not settled; it runs on the
// task's goroutine once the child failed.
func (b *shellBolt) failPending(c dsl.Collector) {
	b.dead = true
	for id, in := range b.pending {
		delete(b.pending, id)
		c.Fail(in)
	}
}

// Close stops the child (see [child.Close]).
func (b *shellBolt) Close() error {
	if b.child == nil {
		return nil
	}
	return b.child.Close()
}

// apply runs the child's emits, acks and fails on the task's goroutine.
func (b *shellBolt) apply(msgs []*wire.Message, c dsl.Collector) {
	for _, m := range msgs {
		if b.dead {
			return
		}
		if err := b.applyOne(m, c); err != nil {
			b.dead = true
			b.child.die(b.badInput(m, err))
			return
		}
	}
}

// applyOne applies one message of the child. Its recover is the shell bolt's
// boundary for the emit contract (dsl.Emitter): the runtime's emit panics with
// a *component.EmitError for a tuple the topology cannot route, and that
// fails the inputs the child anchored the emit to, as a Go bolt's failed emit
// fails its input; the child goes on. Any other panic is the child's bad
// input, as an error is.
func (b *shellBolt) applyOne(m *wire.Message, c dsl.Collector) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if ee, ok := r.(*component.EmitError); ok {
				b.emitFailed(m, ee, c)
				return
			}
			err = fmt.Errorf("%v", r)
		}
	}()
	switch m.Kind {
	case wire.KindEmit:
		return b.emit(m, c)
	case wire.KindAck, wire.KindFail:
		b.settle(m, c)
	}
	return nil
}

// emitFailed fails the open inputs the child anchored m to and logs why; the
// child's own settle of them comes later and is ignored (refused).
func (b *shellBolt) emitFailed(m *wire.Message, err *component.EmitError, c dsl.Collector) {
	b.log.Error("child emitted a tuple the topology cannot route; the inputs it anchored to fail", zap.Error(err))
	for _, a := range m.Anchors {
		in, ok := b.pending[a]
		if !ok {
			continue
		}
		delete(b.pending, a)
		if b.refused == nil {
			b.refused = map[string]struct{}{}
		}
		b.refused[a] = struct{}{}
		c.Fail(in)
	}
}

func (b *shellBolt) badInput(m *wire.Message, err error) error {
	var data []byte
	if m != nil {
		data, _ = m.MarshalJSON()
	}
	return &protocolError{component: b.info.Component, task: b.info.Task, data: data, err: err}
}

func (b *shellBolt) emit(m *wire.Message, c dsl.Collector) error {
	s, ok := b.outputs[m.Stream]
	if !ok {
		return fmt.Errorf("emit on stream %q, which the component does not declare (see Command.Outputs)", m.Stream)
	}
	v, err := decodeValues(s, m.Tuple)
	if err != nil {
		return err
	}
	anchors := make([]dsl.Tuple, 0, len(m.Anchors))
	for _, a := range m.Anchors {
		if in, ok := b.pending[a]; ok {
			anchors = append(anchors, in)
		} else {
			b.log.Warn("child anchored to an unknown or settled input; the emit is not anchored to it", zap.String("id", a))
		}
	}
	te, ok := c.(component.TaskEmitter)
	if !ok {
		return errors.New("the runtime's collector cannot report task ids (no component.TaskEmitter)")
	}
	tasks := te.EmitTasks(anchors, m.Task, v, nil)
	if m.NeedTaskIDs && m.Task == 0 {
		if tasks == nil {
			tasks = []int{}
		}
		b.child.sendControl(tasks)
	}
	return nil
}

// settle acks or fails an input; an unknown id is reported and otherwise ignored.
func (b *shellBolt) settle(m *wire.Message, c dsl.Collector) {
	id := m.ID.String()
	in, ok := b.pending[id]
	if !ok && strings.HasPrefix(id, tickPrefix) {
		return
	}
	if _, refused := b.refused[id]; !ok && refused {
		delete(b.refused, id) // failed already, when its emit could not be routed
		return
	}
	if !ok {
		b.log.Warn("child settled an unknown input id (bad input, ignored)", zap.String("command", string(m.Kind)), zap.String("id", string(m.ID)))
		return
	}
	delete(b.pending, id)
	if m.Kind == wire.KindAck {
		c.Ack(in)
	} else {
		c.Fail(in)
	}
}

// drain applies the batches the inbox holds when it starts, on the task's
// goroutine; later ones wait for the next drain, so other messages of the task
// (acks, inputs, stop) are served in between however fast the child talks.
func (b *shellBolt) drain(c dsl.Collector) {
	b.drainPosted.Store(false) // from here on a new batch posts another drain
	for range len(b.inbox) {
		b.apply(<-b.inbox, c)
	}
}

// handOff gives a batch to the task, waiting while the inbox is full; it
// reports false if the child was stopped first.
func (b *shellBolt) handOff(c *child, batch []*wire.Message) bool {
	select {
	case b.inbox <- batch:
	default:
		stopped := false
		c.stall(func() {
			select {
			case b.inbox <- batch:
			case <-c.stop:
				stopped = true
			}
		})
		if stopped {
			return false
		}
	}
	if b.drainPosted.CompareAndSwap(false, true) {
		b.info.Post(b.drain)
	}
	return true
}

// boltReader handles the child's messages on the reader goroutine: logs, errors
// and metrics at once; emits, acks and fails in batches on the task's goroutine.
type boltReader struct {
	b     *shellBolt
	batch []*wire.Message
}

func newBoltReader(b *shellBolt) *boltReader { return &boltReader{b: b} }

func (r *boltReader) frame(c *child, frame []byte, more bool) error {
	m, err := wire.Decode(frame)
	if err != nil {
		return c.protocolError(frame, err)
	}
	switch m.Kind {
	case wire.KindEmit, wire.KindAck, wire.KindFail:
		r.batch = append(r.batch, m)
	case wire.KindSync:
	case wire.KindLog, wire.KindError, wire.KindMetrics:
		report(r.b.log, r.b.info, m)
	default:
		return c.protocolError(frame, fmt.Errorf("a bolt may not send %q", m.Kind))
	}
	if len(r.batch) > 0 && (!more || len(r.batch) >= handOffBatch) {
		batch := r.batch
		r.batch = nil
		if !r.b.handOff(c, batch) {
			return errReaderStopped
		}
	}
	return nil
}

// report handles log, error and metrics messages, which need no task state.
func report(log *zap.Logger, info dsl.TaskInfo, m *wire.Message) {
	switch m.Kind {
	case wire.KindLog:
		logAt(log, m.Level, m.Msg)
	case wire.KindError:
		log.Error("shell component reported an error", zap.String("error", m.Msg))
	case wire.KindMetrics:
		if info.Metric != nil {
			info.Metric(m.Name, metricValue(m.Params))
		}
	}
}

func logAt(log *zap.Logger, l wire.Level, msg string) {
	switch l {
	case wire.LevelTrace, wire.LevelDebug:
		log.Debug(msg, zap.Stringer("level", l))
	case wire.LevelWarn:
		log.Warn(msg)
	case wire.LevelError:
		log.Error(msg)
	default:
		log.Info(msg)
	}
}

// confInt reads a whole number from conf, or 0. Build checked its range.
func confInt(conf dsl.Conf, key string) int {
	switch v := conf[key].(type) {
	case int:
		return v
	case int32:
		return int(v)
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// metricValue decodes a metrics update's params for the stats.
func metricValue(params []byte) any {
	if len(params) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(params, &v); err != nil {
		return string(params)
	}
	return v
}
