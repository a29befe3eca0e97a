package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/acker"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/hops"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/internal/stats"
	"github.com/goshelter/goshelter/internal/trace"
	"github.com/goshelter/goshelter/routing"
	"github.com/goshelter/goshelter/state"
	"go.uber.org/zap"
)

// Config wires an incarnation to its host.
type Config struct {
	// Name prefixes actor names, so incarnations never collide.
	Name   string
	Logger *zap.Logger
	Clock  clock.Clock
	// IDs returns a task's id source; nil means random ids.
	IDs func(task int) ids.Source
	// Trace receives every message of every task when set.
	Trace func(trace.Event)
	// DrainTimeout bounds the drain on Stop; zero means the message timeout.
	DrainTimeout time.Duration
	// Store keeps the checkpoints of a topology with stateful bolts; such a
	// topology does not start without one.
	Store state.Store
	// Hops, when set, times the hops of sampled trees (the bench's probe):
	// tasks check this one field, and nothing else is paid without it.
	Hops *hops.Probe
}

// errBroken ends a wait because a task failed; the failure itself reaches the
// host through System's onFailure.
var errBroken = errors.New("actors: a task failed")

// incarnation is the state every task of one running topology shares.
type incarnation struct {
	plan  *routing.Plan
	cfg   Config
	boxes []*mailbox // by task id; the system task's at 0
	stats []*taskStats
	gauge *gauge
	clock clock.Clock
	log   *zap.Logger
	// life is the parent of every task's Context. It ends only when the
	// incarnation gives up on its tasks' own lifecycle: a start-up interrupted
	// (a constructor may be waiting on its Context), or tasks still busy when
	// the stop's grace ran out. end records why.
	life context.Context
	end  context.CancelCauseFunc
	// flushEpoch advances every flush interval. A task that sees it change
	// during a burst or a batch of inputs flushes what it holds, so a tuple
	// waits about one interval, plus the call that produced it, at most.
	flushEpoch atomic.Uint64
	// beat drives flushEpoch: the wall clock, whatever clock the timeouts
	// read (see systemTask); nil means the wall clock.
	beat clock.Clock
	// hops is Config.Hops: nil but in the bench's hop runs.
	hops *hops.Probe
	// ckpt takes the checkpoints of a topology with state; nil without.
	ckpt *checkpointer
	// workers runs the tasks' mailboxes; closed when the stop has ended.
	workers *workers
}

func (inc *incarnation) beatClock() clock.Clock {
	if inc.beat == nil {
		return clock.Real()
	}
	return inc.beat
}

// taskInfo describes task t to its component; cancel ends its Context, which
// the task calls when it is deactivated or stops.
func (inc *incarnation) taskInfo(t routing.Task) (info dsl.TaskInfo, cancel context.CancelFunc) {
	c := t.Component
	box := inc.boxes[t.ID]
	conf := dsl.Conf{}
	for k, v := range inc.plan.Topology.Conf {
		conf[k] = v
	}
	for k, v := range c.Conf {
		conf[k] = v
	}
	ctx, cancel := context.WithCancel(inc.life)
	info = dsl.TaskInfo{
		Topology: inc.plan.Topology.Name, Component: c.ID, Task: t.ID, Index: t.Index,
		Parallelism: c.Parallelism, Settings: c.Settings, Conf: conf, Logger: inc.taskLogger(t),
		Model: inc.plan.Topology, Metric: inc.stats[t.ID].setMetric, Now: inc.clock.Now,
		Post:         func(fn func(dsl.Collector)) { box.PostUserMessage(invoke{fn}) },
		Fail:         func(err error) { box.PostUserMessage(failTask{err}) },
		Checkpointed: inc.ckpt != nil && !c.OutsideCheckpoint,
	}
	return info.WithContext(ctx), cancel
}

func (inc *incarnation) taskLogger(t routing.Task) *zap.Logger {
	name := "__acker"
	if t.Component != nil {
		name = t.Component.ID
	}
	return inc.log.With(zap.String("component", name), zap.Int("task", t.ID))
}

func (inc *incarnation) ids(task int) ids.Source {
	if inc.cfg.IDs != nil {
		return inc.cfg.IDs(task)
	}
	return ids.Random()
}

func (inc *incarnation) tracer(component string, task int) tracer {
	t := tracer{component: component, task: task, fn: inc.cfg.Trace}
	if inc.plan.Topology.Settings.Debug {
		t.log = inc.log.With(zap.String("component", component), zap.Int("task", task))
	}
	return t
}

// Topology is a running incarnation of a compiled topology.
type Topology struct {
	inc         *incarnation
	host        *System
	pids        []*actor.PID // by task id; the system task's at 0
	mu          sync.Mutex   // mu guards byPID, failed and failChanged
	byPID       map[string]int
	failed      map[int]bool  // tasks that failed, by id
	failChanged chan struct{} // closed and replaced whenever a task fails
	broken      chan struct{} // closed at the first failure
	breakOnce   sync.Once
	stopOnce    sync.Once
	stuck       []Failure
	// checkpointing is set once the checkpointer runs: Stop joins it.
	checkpointing bool
}

func newTopology(plan *routing.Plan, cfg Config, host *System) *Topology {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	inc := &incarnation{plan: plan, cfg: cfg, gauge: newGauge(), clock: cfg.Clock,
		log: cfg.Logger.With(zap.String("topology", plan.Topology.Name)), hops: cfg.Hops, workers: newWorkers()}
	inc.life, inc.end = context.WithCancelCause(context.Background())
	t := &Topology{inc: inc, host: host, byPID: map[string]int{}, failed: map[int]bool{},
		failChanged: make(chan struct{}), broken: make(chan struct{})}
	n := len(plan.Tasks) + 1
	inc.boxes, inc.stats, t.pids = make([]*mailbox, n), make([]*taskStats, n), make([]*actor.PID, n)
	return t
}

// spawnAll spawns every task, inactive.
func (t *Topology) spawnAll() error {
	for id := range t.pids {
		if err := t.spawn(id); err != nil {
			return err
		}
	}
	return nil
}

// activate activates the tasks: ackers, bolts, spouts, then the system task, each
// group once the previous one is active. It fails if ctx ends or the incarnation
// breaks first.
func (t *Topology) activate(ctx context.Context) error {
	for _, group := range t.activationOrder() {
		if err := t.signal(ctx, group, func(done chan struct{}) any { return activate{done} }); err != nil {
			return fmt.Errorf("activating topology %q: %w", t.inc.plan.Topology.Name, err)
		}
	}
	return nil
}

func (t *Topology) spawn(id int) error {
	inc := t.inc
	slots := inc.plan.Topology.Settings.ReceiveBufferSize
	name := fmt.Sprintf("%s__system", inc.cfg.Name)
	var task routing.Task
	if id > 0 {
		task = inc.plan.Tasks[id-1]
		if task.Component != nil {
			slots = task.Component.Settings.ReceiveBufferSize
		}
		name = fmt.Sprintf("%s%s#%d", inc.cfg.Name, componentName(task), id)
	}
	box := newMailbox(slots, sendersOf(inc.plan, id))
	box.workers, box.processFn = inc.workers, box.process
	inc.boxes[id], inc.stats[id] = box, newTaskStats(len(inc.boxes))
	producer := func() actor.Actor {
		return &systemTask{inc: inc, trace: inc.tracer(systemComponent, systemTaskID)}
	}
	if id > 0 {
		producer = t.producer(task)
	}
	props := actor.PropsFromProducer(producer, actor.WithMailbox(func() actor.Mailbox { return box }))
	pid, err := t.host.spawn(props, name, func(pid *actor.PID) {
		t.mu.Lock()
		t.byPID[pid.Id] = id
		t.mu.Unlock()
	})
	if err != nil {
		return fmt.Errorf("spawning task %d: %w", id, err)
	}
	t.pids[id] = pid
	return nil
}

// sendersOf returns how many tasks may send data to task id: every task of
// every component with an edge into id's component.
func sendersOf(plan *routing.Plan, id int) int {
	if id == 0 || plan.Tasks[id-1].Component == nil {
		return 0
	}
	n := 0
	for _, from := range senders(plan.Topology, plan.Tasks[id-1].Component) {
		n += len(from.Tasks)
	}
	return n
}

func componentName(t routing.Task) string {
	if t.Component == nil {
		return "__acker"
	}
	return t.Component.ID
}

func kindName(t routing.Task) string {
	switch {
	case t.Component == nil:
		return "acker"
	case t.Component.Spout != nil:
		return "spout"
	}
	return "bolt"
}

func (t *Topology) producer(task routing.Task) actor.Producer {
	inc := t.inc
	stats, box := inc.stats[task.ID], inc.boxes[task.ID]
	trace, log := inc.tracer(componentName(task), task.ID), inc.taskLogger(task)
	if task.Component == nil {
		capacity := inc.plan.Topology.Settings.AckerCapacity
		return func() actor.Actor {
			return &ackerTask{inc: inc, task: task, tracker: acker.New(capacity), trace: trace, log: log, stats: stats, batch: inc.plan.Topology.Settings.BatchSize}
		}
	}
	batch := task.Component.Settings.BatchSize
	if task.Component.Spout != nil {
		return func() actor.Actor {
			return &spoutTask{inc: inc, task: task, box: box, out: newOutbox(inc, task.ID, batch, stats), trace: trace, log: log, stats: stats}
		}
	}
	return func() actor.Actor {
		return &boltTask{inc: inc, task: task, out: newOutbox(inc, task.ID, batch, stats), trace: trace, log: log, stats: stats}
	}
}

// activationOrder groups task ids: ackers, bolts, spouts, system.
func (t *Topology) activationOrder() [][]int {
	var ackers, bolts, spouts []int
	for _, task := range t.inc.plan.Tasks {
		switch {
		case task.Component == nil:
			ackers = append(ackers, task.ID)
		case task.Component.Bolt != nil:
			bolts = append(bolts, task.ID)
		default:
			spouts = append(spouts, task.ID)
		}
	}
	return [][]int{ackers, bolts, spouts, {0}}
}

// signal posts a lifecycle message to each task of group and waits until all have
// handled it.
func (t *Topology) signal(ctx context.Context, group []int, msg func(chan struct{}) any) error {
	dones := make([]chan struct{}, len(group))
	for i, id := range group {
		dones[i] = make(chan struct{})
		t.inc.boxes[id].PostUserMessage(msg(dones[i]))
	}
	for i, done := range dones {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("task %d: %w", group[i], context.Cause(ctx))
		case <-t.broken:
			return fmt.Errorf("task %d: %w", group[i], errBroken)
		}
	}
	return nil
}

// taskOf maps an actor of this incarnation to its task; ok is false for the
// system task and unknown actors.
func (t *Topology) taskOf(pid *actor.PID) (routing.Task, bool) {
	t.mu.Lock()
	id, found := t.byPID[pid.Id]
	t.mu.Unlock()
	if !found || id == 0 {
		return routing.Task{}, false
	}
	return t.inc.plan.Tasks[id-1], true
}

// owns reports whether pid is one of this incarnation's actors.
func (t *Topology) owns(pid *actor.PID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byPID[pid.Id]
	return ok
}

// markFailed records that task id failed (0: unknown): activation gives up,
// and Stop waits for that task no more.
func (t *Topology) markFailed(id int) {
	t.mu.Lock()
	t.failed[id] = true
	close(t.failChanged)
	t.failChanged = make(chan struct{})
	t.mu.Unlock()
	t.breakOnce.Do(func() { close(t.broken) })
}

func (t *Topology) hasFailed(id int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed[id]
}

// failureSignal returns a channel closed at the next failure.
func (t *Topology) failureSignal() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failChanged
}

// Stats returns a snapshot of every task's counters, in task id order, and
// what is in flight: tuples sent and not executed plus open tuple trees.
func (t *Topology) Stats() (tasks []stats.Task, inFlight int64) {
	out := make([]stats.Task, 0, len(t.inc.plan.Tasks))
	for _, task := range t.inc.plan.Tasks {
		s := t.inc.stats[task.ID].snapshot()
		s.Component, s.Kind, s.Task, s.MailboxDepth = componentName(task), kindName(task), task.ID, t.inc.boxes[task.ID].depth()
		if s.LastError != "" {
			s.LastErrorTask = task.ID
		}
		out = append(out, s)
	}
	return out, t.inc.gauge.n.Load()
}
