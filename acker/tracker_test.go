package acker

import (
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// op is one acker message of a reference table, as the acker task sends it to
// the tracker (the runtime's message type is unexported in package actors,
// whose own tests replay these tables through it).
type op struct {
	kind       string // "track", "anchor", "ok" or "fail"
	root, edge uint64
}

// apply sends o to tr through the method it names and reports whether the
// spout must hear of the tree ("complete", "failed", "refused" or "") and which
// spout task.
func apply(tr *Tracker, o op) (outcome string, spout int) {
	switch o.kind {
	case "track":
		if !tr.Track(o.root, spoutTask, 0) {
			return "refused", spoutTask
		}
	case "anchor":
		tr.Anchor(o.root, o.edge)
	case "ok":
		if spout, done := tr.Ok(o.root, o.edge); done {
			return "complete", spout
		}
	case "fail":
		if spout, found := tr.Fail(o.root); found {
			return "failed", spout
		}
	}
	return "", 0
}

// step is one acker message of a reference table and what must follow it.
type step struct {
	op      op
	value   uint64 // the accumulator afterwards
	outcome string
}

const (
	spoutTask = 7
	aid       = 0xA1D
)

func TestTrackerReferenceTables(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "linear spout->A->B",
			steps: []step{
				{op{"track", aid, 0}, 0, ""},
				{op{"anchor", aid, 100}, 100, ""},
				{op{"anchor", aid, 200}, 100 ^ 200, ""},
				{op{"ok", aid, 100}, 200, ""},
				{op{"ok", aid, 200}, 0, "complete"},
			},
		},
		{
			name: "fan-out spout->A->(B,C)",
			steps: []step{
				{op{"track", aid, 0}, 0, ""},
				{op{"anchor", aid, 100}, 100, ""},
				{op{"anchor", aid, 200}, 100 ^ 200, ""},
				{op{"anchor", aid, 300}, 100 ^ 200 ^ 300, ""},
				{op{"ok", aid, 100}, 200 ^ 300, ""},
				{op{"ok", aid, 200}, 300, ""},
				{op{"ok", aid, 300}, 0, "complete"},
			},
		},
		{
			name: "failure nacks at once",
			steps: []step{
				{op{"track", aid, 0}, 0, ""},
				{op{"anchor", aid, 100}, 100, ""},
				{op{"fail", aid, 0}, 0, "failed"},
				{op{"ok", aid, 100}, 0, ""}, // late: ignored
				{op{"fail", aid, 0}, 0, ""}, // only one nack
			},
		},
		{
			name: "an edge acked before a sibling is anchored keeps the tree open",
			steps: []step{
				{op{"track", aid, 0}, 0, ""},
				{op{"anchor", aid, 100}, 100, ""},
				{op{"anchor", aid, 200}, 100 ^ 200, ""},
				{op{"ok", aid, 200}, 100, ""},
				{op{"ok", aid, 100}, 0, "complete"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(16)
			for i, s := range tt.steps {
				outcome, spout := apply(tr, s.op)
				if outcome != s.outcome {
					t.Fatalf("step %d %v: outcome %q, want %q", i+1, s.op.kind, outcome, s.outcome)
				}
				if outcome != "" && spout != spoutTask {
					t.Fatalf("step %d %v: spout %d, want %d", i+1, s.op.kind, spout, spoutTask)
				}
				if v, _ := tr.Value(aid); v != s.value {
					t.Fatalf("step %d %v: value %d, want %d", i+1, s.op.kind, v, s.value)
				}
			}
			if tr.trees.Len() != 0 {
				t.Fatalf("Open() = %d after the tree ended, want 0", tr.trees.Len())
			}
		})
	}
}

func TestTrackerRotationExpiresOnTheThirdTick(t *testing.T) {
	tr := New(16)
	tr.Track(1, spoutTask, 0)
	tr.Anchor(1, 100)
	var expired []uint64
	onExpire := func(root uint64, spout int) {
		if spout != spoutTask {
			t.Errorf("expired tree of spout %d, want %d", spout, spoutTask)
		}
		expired = append(expired, root)
	}
	for tick := 1; tick <= buckets-1; tick++ {
		tr.Rotate(onExpire)
		if len(expired) != 0 {
			t.Fatalf("tick %d expired %v; a tree survives %d ticks", tick, expired, buckets-1)
		}
		if _, open := tr.Value(1); !open {
			t.Fatalf("tick %d: tree closed", tick)
		}
	}
	tr.Track(2, spoutTask, 0) // newer tree, must survive the next tick
	tr.Rotate(onExpire)
	if len(expired) != 1 || expired[0] != 1 {
		t.Fatalf("tick %d expired %v, want [1]", buckets, expired)
	}
	if tr.trees.Len() != 1 {
		t.Fatalf("Open() = %d, want 1", tr.trees.Len())
	}
	tr.Ok(1, 100) // late ack of an expired tree
	if _, done := tr.Ok(1, 100); done {
		t.Fatal("an expired tree completed")
	}
}

func TestTrackerOlderbucketsStillTrack(t *testing.T) {
	tr := New(16)
	tr.Track(1, spoutTask, 0)
	tr.Anchor(1, 100)
	tr.Rotate(func(uint64, int) { t.Fatal("nothing should expire") })
	tr.Anchor(1, 200) // the tree now sits in an older bucket
	tr.Ok(1, 100)
	tr.Rotate(func(uint64, int) { t.Fatal("nothing should expire") })
	if spout, done := tr.Ok(1, 200); !done || spout != spoutTask {
		t.Fatalf("Ok = (%d, %v), want (%d, true)", spout, done, spoutTask)
	}
	tr.Rotate(func(root uint64, _ int) { t.Fatalf("completed tree %d expired", root) })
}

func TestTrackerCapacity(t *testing.T) {
	tr := New(2)
	for root := uint64(1); root <= 2; root++ {
		if outcome, _ := apply(tr, op{"track", root, 0}); outcome != "" {
			t.Fatalf("tree %d refused below capacity", root)
		}
	}
	outcome, spout := apply(tr, op{"track", 3, 0})
	if outcome != "refused" || spout != spoutTask {
		t.Fatalf("third tree: (%q, %d), want (refused, %d)", outcome, spout, spoutTask)
	}
	if _, open := tr.Value(3); open {
		t.Fatal("a refused tree is open")
	}
	if outcome, _ := apply(tr, op{"anchor", 3, 9}); outcome != "" || tr.trees.Len() != 2 {
		t.Fatal("anchoring a refused tree changed something")
	}
	tr.Fail(1)
	if !tr.Track(3, spoutTask, 0) {
		t.Fatal("tree refused after a slot was freed by Fail")
	}
	tr.Rotate(func(uint64, int) {})
	tr.Rotate(func(uint64, int) {})
	tr.Rotate(func(uint64, int) {}) // expires 2 and 3
	if tr.trees.Len() != 0 {
		t.Fatalf("Open() = %d after expiry, want 0", tr.trees.Len())
	}
	if !tr.Track(4, spoutTask, 0) {
		t.Fatal("tree refused after expiry freed the tracker")
	}
}

// Root 0 marks an untracked tuple: tracking it opens nothing, and it is
// never found.
func TestTrackerRefusesRootZero(t *testing.T) {
	tr := New(10)
	if tr.Track(0, spoutTask, 0) {
		t.Fatal("Track(0) opened a tree")
	}
	if _, open := tr.Value(0); open || tr.trees.Len() != 0 {
		t.Fatal("root 0 is open")
	}
	if _, done := tr.Ok(0, 0); done {
		t.Fatal("Ok(0, 0) completed a tree")
	}
	if _, found := tr.Fail(0); found {
		t.Fatal("Fail(0) found a tree")
	}
}

// TestExpiryBounds replays the rotation schedule of the runtime (a tick every
// half timeout from activation) and checks the bounds of the package doc: a
// tree expires no earlier than the timeout and no later than 1.5 times it.
func TestExpiryBounds(t *testing.T) {
	const timeout = 30 * time.Second
	const period = timeout / 2
	offsets := []time.Duration{0, time.Nanosecond, period / 2, period - time.Nanosecond}
	for _, phase := range []int{0, 1, 5} {
		for _, off := range offsets {
			start := time.Duration(phase)*period + off // ticks at period, 2·period, ...; Track lands after a tick at the same instant
			tr := New(4)
			tr.Track(1, spoutTask, 0)
			var expiredAt time.Duration
			for tick := time.Duration(phase + 1); expiredAt == 0; tick++ {
				tr.Rotate(func(uint64, int) { expiredAt = tick * period })
			}
			age := expiredAt - start
			if age < timeout || age > timeout*3/2 {
				t.Errorf("tracked at %v, expired at %v: age %v outside [%v, %v]", start, expiredAt, age, timeout, timeout*3/2)
			}
		}
	}
}

// TestTrackerModel applies random trees, with edges anchored and acked in random
// interleavings, and compares the tracker with a set-based model.
func TestTrackerModel(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed))
		tr := New(1 << 10)
		type tree struct{ open, anchored []uint64 }
		trees := map[uint64]*tree{}
		nextID := func() uint64 {
			for {
				if v := rng.Uint64(); v != 0 {
					return v
				}
			}
		}
		for i := 0; i < 20; i++ {
			root := nextID()
			tr.Track(root, spoutTask, 0)
			trees[root] = &tree{}
		}
		for len(trees) > 0 {
			var root uint64
			for r := range trees { // any tree; map order is random enough with a seeded rng below
				root = r
				if rng.IntN(2) == 0 {
					break
				}
			}
			tree := trees[root]
			// Anchor a new edge (a tuple is emitted) unless the tree is large, or ack one.
			if len(tree.open) == 0 || (len(tree.anchored) < 8 && rng.IntN(3) > 0) {
				e := nextID()
				tr.Anchor(root, e)
				tree.open = append(tree.open, e)
				tree.anchored = append(tree.anchored, e)
				continue
			}
			i := rng.IntN(len(tree.open))
			e := tree.open[i]
			tree.open = append(tree.open[:i], tree.open[i+1:]...)
			_, done := tr.Ok(root, e)
			if done != (len(tree.open) == 0) {
				t.Fatalf("seed %d: tree %x done=%v with %d edges open", seed, root, done, len(tree.open))
			}
			if done {
				delete(trees, root)
			}
		}
		if tr.trees.Len() != 0 {
			t.Fatalf("seed %d: Open() = %d, want 0", seed, tr.trees.Len())
		}
	}
}

// TestTrackerTrackWithEdges: a tree opened with its first edges XORed in
// completes when those edges are acked, as if they had been anchored one by one.
func TestTrackerTrackWithEdges(t *testing.T) {
	tr := New(16)
	if !tr.Track(1, spoutTask, 100^200) {
		t.Fatal("Track refused below capacity")
	}
	if v, open := tr.Value(1); !open || v != 100^200 {
		t.Fatalf("Value = (%d, %v), want (%d, true)", v, open, 100^200)
	}
	if _, done := tr.Ok(1, 100); done {
		t.Fatal("complete with edge 200 still open")
	}
	if spout, done := tr.Ok(1, 200); !done || spout != spoutTask {
		t.Fatalf("Ok = (%d, %v), want (%d, true)", spout, done, spoutTask)
	}
	if tr.trees.Len() != 0 {
		t.Fatalf("open = %d after the tree ended, want 0", tr.trees.Len())
	}
}

// TestTrackerTrackTwiceCountsOnce: tracking a root that is open again restarts
// it and still counts one open tree against the capacity.
func TestTrackerTrackTwiceCountsOnce(t *testing.T) {
	tr := New(1)
	tr.Track(1, spoutTask, 100)
	tr.Track(1, spoutTask, 0) // at capacity: refused, the tree stays as it was
	if v, _ := tr.Value(1); v != 100 {
		t.Fatalf("Value = %d, want 100", v)
	}
	tr2 := New(2)
	tr2.Track(1, spoutTask, 100)
	tr2.Track(1, spoutTask, 7)
	if tr2.trees.Len() != 1 {
		t.Fatalf("open = %d after tracking one root twice, want 1", tr2.trees.Len())
	}
	if v, _ := tr2.Value(1); v != 7 {
		t.Fatalf("Value = %d, want 7 (restarted)", v)
	}
}
