// Package trace is the vocabulary of the runtime's message trace: one Event per
// message a task receives or sends, as the reference message flows describe
// them. supervision.TraceEvent is an alias of [Event], so the runtime's
// records reach users as they are: no second struct, no conversion.
package trace

import "github.com/goshelter/goshelter/dsl"

// Event is one message a task received (Out false) or sent (Out true).
//
// Kind is one of: "Activate", "Deactivate", "Stop" (lifecycle, received); "Next" (a
// spout asked for a message); "Emit" (sent: Value, Anchors, Direct); "Tuple" (a
// bolt received Input); "Ok", "Fail" (a bolt acked or failed the input with
// ID); "Ack", "Nack" (a spout heard tree Root's outcome); "Tick" (a timer
// beat); "AckerStep" (an acker applied Op to tree Root: Edge, Spout, and XOR
// and Outcome afterwards).
type Event struct {
	Component string // "__acker" and "__system" for those tasks
	Task      int
	Out       bool
	Kind      string
	Value     any           // Emit: the emitted value
	Input     dsl.Tuple     // Tuple: the input
	ID        dsl.TupleID   // Ok, Fail: the input's id
	Anchors   []dsl.TupleID // Emit: the trees the emit joins
	Direct    int           // Emit: the direct target, 0 for grouped
	Root      uint64        // Ack, Nack, AckerStep: the tree
	Op        string        // AckerStep: "Track", "Anchor", "Ok" or "Fail"
	Edge      uint64        // AckerStep: the edge XORed in or out
	Spout     int           // AckerStep: the tree's spout task
	XOR       uint64        // AckerStep: the tree's accumulator afterwards
	Outcome   string        // AckerStep: "", "complete", "failed" or "refused"
}
