package protocol

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
)

// In is a command a spout or bolt receives.
type In interface{ in() }

// Out is a command a spout or bolt sends.
type Out interface{ out() }

// TaskMsg is a lifecycle message every task receives.
type TaskMsg interface{ taskMsg() }

// Activate tells a component to start working.
type Activate struct{}

// Deactivate tells a component to stop producing.
type Deactivate struct{}

// Next asks a spout for its next tuple.
type Next struct{}

// Ack tells a spout that the tuple tree with this root completed.
type Ack struct{ Root uint64 }

// Nack tells a spout that the tuple tree with this root failed or timed out.
type Nack struct{ Root uint64 }

// Tuple delivers an input to a bolt.
type Tuple struct{ Tuple dsl.Tuple }

// Heartbeat checks that a component (a shell child) is alive.
type Heartbeat struct{}

func (Activate) in()   {}
func (Deactivate) in() {}
func (Next) in()       {}
func (Ack) in()        {}
func (Nack) in()       {}
func (Tuple) in()      {}
func (Heartbeat) in()  {}

// Emit sends a tuple on a stream, anchored to inputs, optionally to one task.
type Emit struct {
	Tuple   any
	Stream  string
	Anchors []dsl.TupleID
	Task    int // 0 for grouped delivery, otherwise a direct emit
	// NeedTaskIDs asks for the destination task ids (multilang).
	NeedTaskIDs bool
}

// Ok acks an input.
type Ok struct{ ID dsl.TupleID }

// Fail fails an input.
type Fail struct{ ID dsl.TupleID }

// Level is a log level, numbered as in Storm's multilang protocol.
type Level int

// Log levels.
const (
	LevelTrace Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)

func (l Level) String() string {
	switch l {
	case LevelTrace:
		return "trace"
	case LevelDebug:
		return "debug"
	case LevelInfo:
		return "info"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Log writes a message to the host's log.
type Log struct {
	Msg   string
	Level Level
}

// Error reports a component error; the component keeps running.
type Error struct {
	Msg string
	Err error
}

// Sync ends a spout's answer to Next, Ack or Nack (and a bolt's heartbeat answer).
type Sync struct{}

func (Emit) out()  {}
func (Ok) out()    {}
func (Fail) out()  {}
func (Log) out()   {}
func (Error) out() {}
func (Sync) out()  {}

// Start activates a task of a running topology.
type Start struct{}

// Stop ends a task.
type Stop struct{}

// Tick is a timer beat: ackers rotate buckets, bolts get tick tuples.
type Tick struct{}

// Other carries a component command inside the task lifecycle.
type Other struct{ Msg any }

func (Start) taskMsg() {}
func (Stop) taskMsg()  {}
func (Tick) taskMsg()  {}
func (Other) taskMsg() {}
