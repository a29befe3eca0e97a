package dsl

import "reflect"

// statefulKind is the Kind of [Stateful] bolts; Build checks what feeds them.
const statefulKind = "stateful"

// Stateful defines a bolt whose tasks each keep a [State], checkpointed with
// the positions of the topology's sources so that after a crash the state
// reflects every message exactly once (see docs/STATE.md). execute is called
// once per input, as an [AutoAck] handler is: its emits are routed at once,
// nil acks the input and an error or a panic fails it. The ack is held until
// the checkpoint that covers the input commits, so the spout hears of it then.
// execute is shared by the bolt's tasks; st is the calling task's own.
//
// A topology with a stateful bolt checkpoints every
// topology.state.checkpoint.interval.ms (default 1000) and needs a store to
// run (supervision.WithStore). A task's state is stored under its component
// and task index, so the bolt's parallelism cannot change between runs on one
// store: the host refuses to start then, naming the component.
func Stateful[In any, K comparable, V any](execute func(in In, st *State[K, V], out Emitter) error) *BoltSpec {
	return StatefulFrom(func(TaskInfo) func(In, *State[K, V], Emitter) error { return execute })
}

// StatefulFrom defines a [Stateful] bolt with one handler per task, made by
// newHandler on the task's goroutine: for what a task keeps besides its
// state (a metric, a buffer), which needs no lock there. Only the State is
// checkpointed.
func StatefulFrom[In any, K comparable, V any](newHandler func(TaskInfo) func(in In, st *State[K, V], out Emitter) error) *BoltSpec {
	k, v := reflect.TypeFor[K](), reflect.TypeFor[V]()
	return &BoltSpec{Input: reflect.TypeFor[In](), Kind: statefulKind, stateKey: k, stateValue: v, StateSchema: stateSchema(k, v), Typed: func(info TaskInfo) TypedBolt {
		execute, state := newHandler(info), newState[K, V]()
		return TypedBolt{
			Handler: execute,
			Execute: func(in *Tuple, c Collector) (bool, error) {
				v, ok := in.Value.(In)
				if !ok {
					return false, nil
				}
				return true, execute(v, state, c)
			},
			Restore:  state.restore,
			Snapshot: state.snapshot,
		}
	}}
}
