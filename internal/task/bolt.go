package task

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

// The kinds of dsl.BoltSpec whose tasks this package builds (dsl.BoltSpec.Kind).
const (
	autoAckKind    = "auto-ack"
	terminatorKind = "terminator"
	manualKind     = "manual"
	statefulKind   = "stateful"
	windowKind     = "window"
)

// NewBolt makes one task of bolt c for the task info describes: around the
// typed half of a bolt dsl defines, or by the spec's own NewTask. It panics
// when the spec makes no task, which fails the task naming c.
func NewBolt(c *dsl.Component, info dsl.TaskInfo) dsl.BoltTask {
	spec := c.Bolt
	if spec.Typed == nil {
		if spec.NewTask != nil {
			if t := spec.NewTask(info); t != nil {
				return t
			}
		}
		panic(fmt.Errorf("bolt %q: its spec made no task", c.ID))
	}
	typed := spec.Typed(info)
	if spec.Kind == windowKind {
		if problems := typed.Window.Problems(); len(problems) > 0 { // Build rejects such a spec
			return badWindow(problems)
		}
		return newWindowTask(info, typed.Window, spec.Input)
	}
	b := bolt{typed: typed, spec: spec}
	b.tick, _ = b.typed.Handler.(ticker)
	switch spec.Kind {
	case autoAckKind:
		return &autoAckTask{b}
	case terminatorKind:
		return &terminatorTask{b}
	case manualKind:
		return &manualTask{b}
	case statefulKind:
		return &statefulTask{b}
	}
	panic(fmt.Errorf("bolt %q: its spec made no task (a typed bolt of kind %q)", c.ID, spec.Kind))
}

// bolt is what every task of a typed bolt holds.
type bolt struct {
	typed dsl.TypedBolt
	tick  ticker // the handler, if it wants ticks
	spec  *dsl.BoltSpec
}

// TwoPhase returns the handler's two-phase hooks (component.TwoPhaser), nil
// when it has none.
func (b *bolt) TwoPhase() component.TwoPhase {
	tp, _ := b.typed.Handler.(component.TwoPhase)
	return tp
}

// execute hands in to the handler, failing it when it is of another type than
// the handler takes: Build only lets assignable streams in, so this guards
// other producers (a shell component).
func (b *bolt) execute(in *dsl.Tuple, c dsl.Collector) (handled bool, err error) {
	ok, err := b.typed.Execute(in, c)
	if !ok {
		return false, b.mismatch(in, c)
	}
	return true, err
}

// mismatch fails in, whose value the handler does not take.
//
//go:noinline
func (b *bolt) mismatch(in *dsl.Tuple, c dsl.Collector) error {
	c.Fail(*in)
	return fmt.Errorf("input of type %T is not %v", in.Value, b.spec.Input)
}

// executeAuto hands in to the handler and leaves its ack to the caller
// (ack true) when the handler returned nil; an error fails in, as a value the
// handler does not take does.
func (b *bolt) executeAuto(in *dsl.Tuple, c dsl.Collector) (ack bool, err error) {
	handled, err := b.typed.Execute(in, c)
	if !handled || err != nil {
		return false, b.failed(in, c, handled, err)
	}
	return true, nil
}

// failed fails in, which the handler did not take or returned err for.
//
//go:noinline
func (b *bolt) failed(in *dsl.Tuple, c dsl.Collector, handled bool, err error) error {
	if !handled {
		return b.mismatch(in, c)
	}
	c.Fail(*in)
	return err
}

// ticked hands a tick to the handler's Tick hook, if it has one.
func (b *bolt) ticked(in *dsl.Tuple, c dsl.Collector) error {
	if b.tick == nil {
		return nil
	}
	return b.tick.Tick(in.Value.(dsl.Tick), c)
}

// autoAckTask acks an input when the handler returns nil and fails it on an
// error.
type autoAckTask struct{ bolt }

func (a *autoAckTask) Execute(in *dsl.Tuple, c dsl.Collector) error {
	return execute(a, in, c)
}

// ExecuteAuto is Execute, except that the ack of a handled input is left to
// the caller (the runtime acks it in place; see component.AutoAcker).
func (a *autoAckTask) ExecuteAuto(in *dsl.Tuple, c dsl.Collector) (ack bool, err error) {
	if in.IsTick() {
		return false, a.ticked(in, c)
	}
	return a.executeAuto(in, c)
}

// terminatorTask fails every input after its handler returns, as
// FsShelter's terminating bolts do (Build keeps it off tracked edges).
type terminatorTask struct{ bolt }

func (t *terminatorTask) Execute(in *dsl.Tuple, c dsl.Collector) error {
	if in.IsTick() {
		return t.ticked(in, c)
	}
	handled, err := t.execute(in, c)
	if handled {
		c.Fail(*in)
	}
	return err
}

// manualTask leaves acks and fails to the handler, but fails an input whose
// handler returned an error.
type manualTask struct{ bolt }

func (m *manualTask) Execute(in *dsl.Tuple, c dsl.Collector) error {
	if in.IsTick() {
		return m.ticked(in, c)
	}
	handled, err := m.execute(in, c)
	if handled && err != nil {
		c.Fail(*in)
	}
	return err
}

// statefulTask runs a stateful bolt's handler over its task's state, acking
// as an auto-ack task does; the runtime holds the ack until the checkpoint
// that covers the input commits. Ticks do not reach the handler. The runtime
// finds its state through RestoreState and SnapshotState (component.StateTask).
type statefulTask struct{ bolt }

func (s *statefulTask) Execute(in *dsl.Tuple, c dsl.Collector) error {
	return execute(s, in, c)
}

// ExecuteAuto leaves the ack to the runtime.
func (s *statefulTask) ExecuteAuto(in *dsl.Tuple, c dsl.Collector) (ack bool, err error) {
	if in.IsTick() {
		return false, nil
	}
	return s.executeAuto(in, c)
}

// RestoreState loads one key of the last committed checkpoint.
func (s *statefulTask) RestoreState(key, value []byte) error { return s.typed.Restore(key, value) }

// SnapshotState hands the changes since the last checkpoint to put.
func (s *statefulTask) SnapshotState(put func(key, value []byte)) (int, error) {
	return s.typed.Snapshot(put)
}

// autoAcker is a task whose ExecuteAuto leaves the final ack to its caller.
type autoAcker interface {
	ExecuteAuto(in *dsl.Tuple, c dsl.Collector) (ack bool, err error)
}

// execute is the Execute of an autoAcker: ExecuteAuto, then the ack it left.
func execute(a autoAcker, in *dsl.Tuple, c dsl.Collector) error {
	ack, err := a.ExecuteAuto(in, c)
	if ack {
		c.Ack(*in)
	}
	return err
}
