package actors

import (
	"testing"

	"github.com/goshelter/goshelter/acker"
)

// The acker's reference tables, replayed through applyOp as the acker task
// applies every message it receives (acker's own tests replay them through the
// Tracker's methods).

const (
	spoutTaskID = 7
	aid         = 0xA1D
)

// step is one acker message of a reference table and what must follow it.
type step struct {
	op      ackerOp
	value   uint64 // the accumulator afterwards
	outcome outcome
}

func TestApplyOpReferenceTables(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "linear spout->A->B",
			steps: []step{
				{ackerOp{Kind: opTrack, Root: aid, Spout: spoutTaskID}, 0, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 100}, 100, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 200}, 100 ^ 200, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 100}, 200, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 200}, 0, complete},
			},
		},
		{
			name: "fan-out spout->A->(B,C)",
			steps: []step{
				{ackerOp{Kind: opTrack, Root: aid, Spout: spoutTaskID}, 0, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 100}, 100, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 200}, 100 ^ 200, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 300}, 100 ^ 200 ^ 300, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 100}, 200 ^ 300, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 200}, 300, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 300}, 0, complete},
			},
		},
		{
			name: "failure nacks at once",
			steps: []step{
				{ackerOp{Kind: opTrack, Root: aid, Spout: spoutTaskID}, 0, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 100}, 100, pending},
				{ackerOp{Kind: opFail, Root: aid}, 0, failed},
				{ackerOp{Kind: opOk, Root: aid, Edge: 100}, 0, pending}, // late: ignored
				{ackerOp{Kind: opFail, Root: aid}, 0, pending},          // only one nack
			},
		},
		{
			name: "an edge acked before a sibling is anchored keeps the tree open",
			steps: []step{
				{ackerOp{Kind: opTrack, Root: aid, Spout: spoutTaskID}, 0, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 100}, 100, pending},
				{ackerOp{Kind: opAnchor, Root: aid, Edge: 200}, 100 ^ 200, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 200}, 100, pending},
				{ackerOp{Kind: opOk, Root: aid, Edge: 100}, 0, complete},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := acker.New(16)
			for i, s := range tt.steps {
				result, spout := applyOp(tr, s.op)
				if result != s.outcome {
					t.Fatalf("step %d %v: outcome %v, want %v", i+1, s.op.Kind, result, s.outcome)
				}
				if result != pending && spout != spoutTaskID {
					t.Fatalf("step %d %v: spout %d, want %d", i+1, s.op.Kind, spout, spoutTaskID)
				}
				if v, _ := tr.Value(aid); v != s.value {
					t.Fatalf("step %d %v: value %d, want %d", i+1, s.op.Kind, v, s.value)
				}
			}
			if _, open := tr.Value(aid); open {
				t.Fatal("the tree is still open after it ended")
			}
		})
	}
}

func TestApplyOpRefusesTreesOverCapacity(t *testing.T) {
	tr := acker.New(2)
	for root := uint64(1); root <= 2; root++ {
		if result, _ := applyOp(tr, ackerOp{Kind: opTrack, Root: root, Spout: spoutTaskID}); result != pending {
			t.Fatalf("tree %d refused below capacity", root)
		}
	}
	result, spout := applyOp(tr, ackerOp{Kind: opTrack, Root: 3, Spout: spoutTaskID})
	if result != refused || spout != spoutTaskID {
		t.Fatalf("third tree: (%v, %d), want (refused, %d)", result, spout, spoutTaskID)
	}
	if result, _ := applyOp(tr, ackerOp{Kind: opAnchor, Root: 3, Edge: 9}); result != pending {
		t.Fatal("anchoring a refused tree changed something")
	}
	if _, open := tr.Value(3); open {
		t.Fatal("a refused tree was opened")
	}
}

// The trace shows these names (trace.Event's Op and Outcome).
func TestOpKindAndOutcomeNames(t *testing.T) {
	for kind, want := range map[opKind]string{opTrack: "Track", opAnchor: "Anchor", opOk: "Ok", opFail: "Fail", 0: "opKind(?)"} {
		if got := kind.String(); got != want {
			t.Errorf("opKind(%d).String() = %q, want %q", kind, got, want)
		}
	}
	for o, want := range map[outcome]string{pending: "", complete: "complete", failed: "failed", refused: "refused"} {
		if got := o.String(); got != want {
			t.Errorf("outcome(%d).String() = %q, want %q", o, got, want)
		}
	}
}

// benchIDs returns distinct non-zero ids cheaply, so the benchmark measures the
// acker path.
type benchIDs uint64

func (i *benchIDs) next() uint64 {
	*i += 0x9e3779b97f4a7c15
	if *i == 0 {
		*i += 0x9e3779b97f4a7c15
	}
	return uint64(*i)
}

// BenchmarkApplyOp is acker's BenchmarkTree with one edge, through applyOp, as
// the acker task drives the tracker.
func BenchmarkApplyOp(b *testing.B) {
	t := acker.New(1 << 20)
	g := benchIDs(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		root, edge := g.next(), g.next()
		applyOp(t, ackerOp{Kind: opTrack, Root: root, Spout: 1})
		applyOp(t, ackerOp{Kind: opAnchor, Root: root, Edge: edge})
		if result, _ := applyOp(t, ackerOp{Kind: opOk, Root: root, Edge: edge}); result != complete {
			b.Fatal("tree did not complete")
		}
	}
}
