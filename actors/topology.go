package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/acker"
	"github.com/goshelter/goshelter/clock"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// Config wires an incarnation to its host. Spawn and Root are required.
type Config struct {
	// Spawn creates a task actor; the host spawns it as a child of its supervisor
	// so task failures reach the supervisor.
	Spawn func(props *actor.Props, name string) (*actor.PID, error)
	// Root stops actors.
	Root *actor.RootContext
	// Name prefixes actor names, so incarnations never collide.
	Name   string
	Logger *zap.Logger
	Clock  clock.Clock
	// IDs returns a task's id source; nil means random ids.
	IDs func(task int) routing.IDs
	// Trace receives every message of every task when set.
	Trace func(Event)
	// DrainTimeout bounds the drain on Stop; zero means the message timeout.
	DrainTimeout time.Duration
}

// TaskError reports a task that failed: a spout whose Next, Ack or Nack panicked,
// a runtime fault, a shell child that died.
type TaskError struct {
	Topology  string
	Component string
	Task      int
	Err       error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("topology %q: task %d of %q failed: %v", e.Topology, e.Task, e.Component, e.Err)
}

func (e *TaskError) Unwrap() error { return e.Err }

// ErrBroken is returned by Activate when a task failed while the topology was
// being activated; the failure itself reaches the supervisor.
var ErrBroken = errors.New("actors: a task failed")

// ErrStopTimeout is returned by Stop when a task did not stop in time.
var ErrStopTimeout = errors.New("actors: task did not stop in time")

// incarnation is the state every task of one running topology shares.
type incarnation struct {
	plan  *routing.Plan
	cfg   Config
	boxes []*mailbox // by task id; the system task's at 0
	stats []*TaskStats
	gauge *gauge
	clock clock.Clock
	log   *zap.Logger
}

func (inc *incarnation) taskInfo(t routing.Task) dsl.TaskInfo {
	c := t.Component
	box := inc.boxes[t.ID]
	conf := dsl.Conf{}
	for k, v := range inc.plan.Topology.Conf {
		conf[k] = v
	}
	for k, v := range c.Conf {
		conf[k] = v
	}
	return dsl.TaskInfo{
		Topology: inc.plan.Topology.Name, Component: c.ID, Task: t.ID, Index: t.Index,
		Parallelism: c.Parallelism, Settings: c.Settings, Conf: conf, Logger: inc.taskLogger(t),
		Model: inc.plan.Topology, Metric: inc.stats[t.ID].setMetric,
		Post: func(fn func(dsl.Collector)) { box.PostUserMessage(invoke{fn}) },
		Fail: func(err error) { box.PostUserMessage(failTask{err}) },
	}
}

func (inc *incarnation) taskLogger(t routing.Task) *zap.Logger {
	name := "__acker"
	if t.Component != nil {
		name = t.Component.ID
	}
	return inc.log.With(zap.String("component", name), zap.Int("task", t.ID))
}

func (inc *incarnation) ids(task int) routing.IDs {
	if inc.cfg.IDs != nil {
		return inc.cfg.IDs(task)
	}
	return routing.RandomIDs()
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
	inc       *incarnation
	pids      []*actor.PID // by task id; the system task's at 0
	mu        sync.Mutex   // mu guards byPID, read by the supervisor while tasks spawn
	byPID     map[string]int
	broken    chan struct{}
	breakOnce sync.Once
	stopOnce  sync.Once
	stopErr   error
}

// New spawns every task of plan, inactive. Call Activate to start the flow, and
// Stop in any case to release the actors.
func New(plan *routing.Plan, cfg Config) (*Topology, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	inc := &incarnation{plan: plan, cfg: cfg, gauge: newGauge(), clock: cfg.Clock,
		log: cfg.Logger.With(zap.String("topology", plan.Topology.Name))}
	t := &Topology{inc: inc, byPID: map[string]int{}, broken: make(chan struct{})}
	n := len(plan.Tasks) + 1
	inc.boxes, inc.stats, t.pids = make([]*mailbox, n), make([]*TaskStats, n), make([]*actor.PID, n)
	for id := 0; id < n; id++ {
		if err := t.spawn(id); err != nil {
			return t, err
		}
	}
	return t, nil
}

// Activate activates the tasks: ackers, bolts, spouts, then the system task, each
// group once the previous one is active. It fails if ctx ends or the incarnation
// breaks first.
func (t *Topology) Activate(ctx context.Context) error {
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
	box := newMailbox(slots)
	inc.boxes[id], inc.stats[id] = box, newTaskStats(len(inc.boxes))
	producer := func() actor.Actor {
		return &systemTask{inc: inc, trace: inc.tracer(dsl.SystemComponent, dsl.SystemTask)}
	}
	if id > 0 {
		producer = t.producer(task)
	}
	props := actor.PropsFromProducer(producer, actor.WithMailbox(func() actor.Mailbox { return box }))
	pid, err := inc.cfg.Spawn(props, name)
	if err != nil {
		return fmt.Errorf("spawning task %d: %w", id, err)
	}
	t.pids[id] = pid
	t.mu.Lock()
	t.byPID[pid.Id] = id
	t.mu.Unlock()
	return nil
}

func componentName(t routing.Task) string {
	if t.Component == nil {
		return "__acker"
	}
	return t.Component.ID
}

func kindName(t routing.Task) string {
	if t.Component == nil {
		return "acker"
	}
	return t.Component.Kind.String()
}

func (t *Topology) producer(task routing.Task) actor.Producer {
	inc := t.inc
	stats, box := inc.stats[task.ID], inc.boxes[task.ID]
	trace, log := inc.tracer(componentName(task), task.ID), inc.taskLogger(task)
	if task.IsAcker() {
		capacity := inc.plan.Topology.Settings.AckerCapacity
		return func() actor.Actor {
			return &ackerTask{inc: inc, task: task, tracker: acker.New(capacity), trace: trace, log: log, stats: stats, out: map[int]*feedback{}, batch: inc.plan.Topology.Settings.BatchSize}
		}
	}
	batch := task.Component.Settings.BatchSize
	if task.Component.Kind == dsl.SpoutKind {
		return func() actor.Actor {
			return &spoutTask{inc: inc, task: task, box: box, out: newOutbox(inc, batch, stats), trace: trace, log: log, stats: stats}
		}
	}
	return func() actor.Actor {
		return &boltTask{inc: inc, task: task, out: newOutbox(inc, batch, stats), trace: trace, log: log, stats: stats}
	}
}

// activationOrder groups task ids: ackers, bolts, spouts, system.
func (t *Topology) activationOrder() [][]int {
	var ackers, bolts, spouts []int
	for _, task := range t.inc.plan.Tasks {
		switch {
		case task.IsAcker():
			ackers = append(ackers, task.ID)
		case task.Component.Kind == dsl.BoltKind:
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
			return fmt.Errorf("task %d: %w", group[i], ErrBroken)
		}
	}
	return nil
}

// TaskOf maps an actor of this incarnation to its task; ok is false for the
// system task and unknown actors.
func (t *Topology) TaskOf(pid *actor.PID) (routing.Task, bool) {
	t.mu.Lock()
	id, found := t.byPID[pid.Id]
	t.mu.Unlock()
	if !found || id == 0 {
		return routing.Task{}, false
	}
	return t.inc.plan.Tasks[id-1], true
}

// Owns reports whether pid is one of this incarnation's actors.
func (t *Topology) Owns(pid *actor.PID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byPID[pid.Id]
	return ok
}

// FailureError describes the failure of actor pid with reason as a *TaskError.
func (t *Topology) FailureError(pid *actor.PID, reason any) *TaskError {
	err, ok := reason.(error)
	if !ok {
		err = fmt.Errorf("%v", reason)
	}
	te := &TaskError{Topology: t.inc.plan.Topology.Name, Component: dsl.SystemComponent, Task: dsl.SystemTask, Err: err}
	if task, ok := t.TaskOf(pid); ok {
		te.Component, te.Task = componentName(task), task.ID
	}
	return te
}

// Break marks the incarnation as failed: waits for activation give up and Stop
// skips the drain.
func (t *Topology) Break() { t.breakOnce.Do(func() { close(t.broken) }) }

// InFlight returns tuples sent and not executed plus open tuple trees.
func (t *Topology) InFlight() int64 { return t.inc.gauge.n.Load() }

// Stats returns a snapshot of every task's counters, in task id order.
func (t *Topology) Stats() []TaskSnapshot {
	out := make([]TaskSnapshot, 0, len(t.inc.plan.Tasks))
	for _, task := range t.inc.plan.Tasks {
		s := t.inc.stats[task.ID].snapshot()
		s.Component, s.Kind, s.Task, s.MailboxDepth = componentName(task), kindName(task), task.ID, t.inc.boxes[task.ID].depth()
		out = append(out, s)
	}
	return out
}

// Plan returns the compiled plan this incarnation runs.
func (t *Topology) Plan() *routing.Plan { return t.inc.plan }
