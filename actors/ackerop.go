package actors

import "github.com/goshelter/goshelter/acker"

// opKind is the kind of an acker message.
type opKind uint8

// The acker messages.
const (
	opTrack  opKind = iota + 1 // open a tree for a spout task
	opAnchor                   // XOR an edge in
	opOk                       // XOR an edge out (acked)
	opFail                     // fail the tree
)

func (k opKind) String() string {
	switch k {
	case opTrack:
		return "Track"
	case opAnchor:
		return "Anchor"
	case opOk:
		return "Ok"
	case opFail:
		return "Fail"
	}
	return "opKind(?)"
}

// ackerOp is one acker message. Spout is set for Track, Edge for Anchor and Ok,
// and for a Track the XOR of edges anchored with it (0 when sent alone). It is
// 24 bytes: every tracked tuple hands about two of them from one core to another.
type ackerOp struct {
	Root  uint64
	Edge  uint64
	Spout int32 // a task id
	Kind  opKind
}

// outcome is what applying an ackerOp decided.
type outcome uint8

// Outcomes of applyOp.
const (
	pending  outcome = iota // nothing to report yet
	complete                // the tree is done: ack the spout
	failed                  // the tree failed: nack the spout
	refused                 // over capacity: nack the spout at once
)

// applyOp applies op to t and says whether the spout must hear of it, and which spout.
func applyOp(t *acker.Tracker, op ackerOp) (outcome, int) {
	switch op.Kind {
	case opTrack:
		if !t.Track(op.Root, int(op.Spout), op.Edge) {
			return refused, int(op.Spout)
		}
	case opAnchor:
		t.Anchor(op.Root, op.Edge)
	case opOk:
		if spout, done := t.Ok(op.Root, op.Edge); done {
			return complete, spout
		}
	case opFail:
		if spout, found := t.Fail(op.Root); found {
			return failed, spout
		}
	}
	return pending, 0
}

func (o outcome) String() string {
	switch o {
	case complete:
		return "complete"
	case failed:
		return "failed"
	case refused:
		return "refused"
	}
	return ""
}
