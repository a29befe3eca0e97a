package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// Failure reports a task that failed: a spout whose Next, Ack or Nack panicked,
// a component that called TaskInfo.Fail, a shell child that died. Stack is set
// when the task panicked.
type Failure struct {
	Topology  *Topology // the incarnation the task belonged to
	Component string
	Task      int
	Err       error
	Stack     []byte
}

// System hosts incarnations: one protoactor-go actor system whose supervisor
// actor parents every task, so task failures reach it. It keeps no failed task
// alive: the incarnation is broken and onFailure decides what follows.
type System struct {
	actors    *actor.ActorSystem
	sup       *actor.PID
	onFailure func(Failure)

	mu   sync.Mutex // mu guards live
	live []*Topology

	abandoned atomic.Bool // some task did not stop in time

	// committed is the highest checkpoint each store got from this System's
	// incarnations: a restart that finds its store below it stops instead.
	committed commitMarks
}

// NewSystem starts an actor system whose own logs (dead letters included) go to
// log at warn and above. onFailure is called on the supervisor's goroutine for
// every task failure and must not block.
func NewSystem(log *zap.Logger, onFailure func(Failure)) *System {
	core, err := zapcore.NewIncreaseLevelCore(log.Core(), zap.WarnLevel)
	if err != nil { // the user's core is already quieter than warn
		core = log.Core()
	}
	s := &System{onFailure: onFailure}
	s.actors = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(zapslog.NewHandler(core))
	}), // protoactor-go's dead-letter throttle starts a goroutine per period: a
		// short period keeps it from outliving a stopped topology (deadLetters
		// below does the throttling of what is logged).
		actor.WithDeadLetterThrottleInterval(time.Millisecond))
	s.sup = s.actors.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &supervisor{s: s} }))
	letters := &deadLetters{log: log}
	s.actors.EventStream.Subscribe(letters.observe)
	return s
}

// deadLetters logs messages that reached an actor no longer there at warn,
// where the runtime's other failures are (protoactor-go logs them at info).
// At most one line a second, with the count of the others, so a flood of them
// (a restart under load) cannot flood the log.
type deadLetters struct {
	log        *zap.Logger
	mu         sync.Mutex // mu guards last and suppressed
	last       time.Time
	suppressed int
}

func (d *deadLetters) observe(msg any) {
	letter, ok := msg.(*actor.DeadLetterEvent)
	if !ok {
		return
	}
	d.mu.Lock()
	now := time.Now()
	if now.Sub(d.last) < time.Second {
		d.suppressed++
		d.mu.Unlock()
		return
	}
	suppressed := d.suppressed
	d.last, d.suppressed = now, 0
	d.mu.Unlock()
	d.log.Warn("message to a stopped actor dropped (dead letter)", zap.Stringer("actor", letter.PID),
		zap.String("message", fmt.Sprintf("%T", letter.Message)), zap.Int("also_dropped", suppressed))
}

// Start spawns every task of plan and activates them in Storm's order: ackers,
// bolts, spouts, then the system task's timers. When a task fails meanwhile it
// returns nil: the failure reaches onFailure like any other. When ctx ends
// first it returns ctx's cause, and every task's Context ends with that cause.
// Either way the incarnation is returned, so the caller can Stop it.
func (s *System) Start(ctx context.Context, plan *routing.Plan, cfg Config) (*Topology, error) {
	t := newTopology(plan, cfg, s)
	s.mu.Lock()
	s.live = append(s.live, t)
	s.mu.Unlock()
	if plan.Topology.HasState() {
		c, err := newCheckpointer(ctx, t, cfg.Store)
		if err != nil {
			t.stopOnce.Do(func() { s.forget(t) }) // nothing was spawned: nothing to stop
			return t, err
		}
		t.inc.ckpt = c
	}
	if err := t.spawnAll(); err != nil {
		return t, err
	}
	if err := t.activate(ctx); err != nil && !errors.Is(err, errBroken) {
		// The incarnation will never run: a constructor waiting on its task's
		// Context (dialing a service with it) is told why, so it returns and
		// the caller's Stop does not wait a grace period for it.
		t.inc.end(context.Cause(ctx))
		return t, err
	}
	if c := t.inc.ckpt; c != nil {
		t.checkpointing = true
		go c.run() // joined by Stop
	}
	return t, nil
}

// Shutdown stops the supervisor and the actor system. Stop every incarnation
// first. It waits until the supervisor has heard every task it parents
// terminate (a second at most), so stopping it sends no Stop to a task already
// gone, which would be a dead letter. A task abandoned while stuck in user code
// keeps the supervisor from terminating; Shutdown then does not wait for it.
func (s *System) Shutdown() {
	if s.abandoned.Load() {
		s.actors.Root.Stop(s.sup)
		s.actors.Shutdown()
		return
	}
	orphaned := make(chan struct{})
	s.actors.Root.Send(s.sup, &childlessRequest{done: orphaned})
	select {
	case <-orphaned:
	case <-time.After(time.Second):
	}
	_ = s.actors.Root.StopFuture(s.sup).Wait()
	s.actors.Shutdown()
}

// childlessRequest asks the supervisor to close done once it parents no task.
type childlessRequest struct{ done chan struct{} }

// forget drops a stopped incarnation.
func (s *System) forget(t *Topology) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.live {
		if l == t {
			s.live = append(s.live[:i], s.live[i+1:]...)
			return
		}
	}
}

// spawn creates a task actor as a child of the supervisor actor. registered
// runs on the supervisor right after the spawn, before it handles a failure of
// the new task, so a task that fails at once (its NewTask panics) is already
// known to its incarnation.
func (s *System) spawn(props *actor.Props, name string, registered func(*actor.PID)) (*actor.PID, error) {
	req := &spawnRequest{props: props, name: name, registered: registered, reply: make(chan spawnReply, 1)}
	s.actors.Root.Send(s.sup, req)
	rep := <-req.reply
	return rep.pid, rep.err
}

// failed breaks the incarnation that owns pid, so nothing waits on the failed
// task, and reports the failure.
func (s *System) failed(pid *actor.PID, reason any) {
	s.mu.Lock()
	var owner *Topology
	for _, t := range s.live {
		if t.owns(pid) {
			owner = t
			break
		}
	}
	s.mu.Unlock()
	f := Failure{Topology: owner, Component: "__system", Task: -1}
	switch r := reason.(type) {
	case *panicError:
		f.Err, f.Stack = r, r.stack
	case error:
		f.Err = r
	default:
		f.Err = fmt.Errorf("%v", r)
	}
	if owner != nil {
		id := 0
		if task, ok := owner.taskOf(pid); ok {
			f.Component, f.Task, id = componentName(task), task.ID, task.ID
			owner.inc.stats[task.ID].recordError(f.Err.Error()) // Storm UI's last error
		}
		owner.markFailed(id)
	}
	s.onFailure(f)
}

// supervisor parents every task actor. It implements protoactor-go's
// SupervisorStrategy itself: a failed task stays suspended and is reported; the
// host replaces the whole incarnation.
type supervisor struct {
	s       *System
	waiting *childlessRequest // Shutdown waits for the last task to be gone
}

type spawnRequest struct {
	props      *actor.Props
	name       string
	registered func(*actor.PID)
	reply      chan spawnReply
}

type spawnReply struct {
	pid *actor.PID
	err error
}

func (s *supervisor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *spawnRequest:
		pid, err := ctx.SpawnNamed(m.props, m.name)
		if err == nil && m.registered != nil {
			m.registered(pid)
		}
		m.reply <- spawnReply{pid: pid, err: err}
	case *childlessRequest:
		s.waiting = m
	}
	// A terminated task has left Children by the time Receive sees Terminated.
	if s.waiting != nil && len(ctx.Children()) == 0 {
		close(s.waiting.done)
		s.waiting = nil
	}
}

// HandleFailure implements actor.SupervisorStrategy.
func (s *supervisor) HandleFailure(_ *actor.ActorSystem, _ actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	s.s.failed(child, reason)
}
