package actors

import (
	"reflect"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/hops"
)

// rootOf returns a root of acker i of n: the first from from on.
func rootOf(i, n int, from uint64) uint64 {
	for r := from; ; r++ {
		if ackerIndex(r, n) == i {
			return r
		}
	}
}

// heldOf returns the acks held for acker i, block by block.
func heldOf(h *heldAcks, i int) [][]heldAck {
	var out [][]heldAck
	if i < len(h.byAcker) {
		for _, b := range h.byAcker[i] {
			out = append(out, b.acks)
		}
	}
	return out
}

// Held acks fold an ack into the one held before it for the same acker when
// both go to the same tree (Ok XORs edges), hold an input of several trees as
// one Ok per tree, each with the acker of its tree, and fill blocks of
// heldAckBlock.
func TestHeldAcksFoldAndExpand(t *testing.T) {
	var h heldAcks
	h.add(&dsl.TupleID{Root: 1, Edge: 0b0011}, 1)
	h.add(&dsl.TupleID{Root: 1, Edge: 0b0101}, 1) // folded: 0011 ^ 0101
	h.add(&dsl.TupleID{Root: 2, Edge: 0b1000, Roots: []uint64{3}}, 1)
	h.add(&dsl.TupleID{Root: 1, Edge: 0b0001}, 1) // another tree came between: not folded
	want := [][]heldAck{{{1, 0b0110}, {2, 0b1000}, {3, 0b1000}, {1, 0b0001}}}
	if got := heldOf(&h, 0); !reflect.DeepEqual(got, want) {
		t.Fatalf("held %v, want %v", got, want)
	}

	// Two ackers: roots a and c go to the first, b to the second.
	a, b := rootOf(0, 2, 1), rootOf(1, 2, 1)
	c := rootOf(0, 2, a+1)
	var two heldAcks
	two.add(&dsl.TupleID{Root: a, Edge: 1, Roots: []uint64{b}}, 2)
	two.add(&dsl.TupleID{Root: c, Edge: 2}, 2)
	two.add(&dsl.TupleID{Root: b, Edge: 4}, 2) // the last held for the second acker is b's: folded
	if got, want := heldOf(&two, 0), [][]heldAck{{{a, 1}, {c, 2}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("first acker holds %v, want %v", got, want)
	}
	if got, want := heldOf(&two, 1), [][]heldAck{{{b, 5}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("second acker holds %v, want %v", got, want)
	}
	if len(two.byAcker) != 2 {
		t.Errorf("acks held for %d ackers of 2: a commit hands a list to each", len(two.byAcker))
	}

	var full heldAcks
	if !full.empty() {
		t.Fatal("a new heldAcks is not empty")
	}
	for i := range heldAckBlock + 1 {
		full.add(&dsl.TupleID{Root: uint64(i + 1), Edge: 1}, 1)
	}
	blocks := heldOf(&full, 0)
	if len(blocks) != 2 || len(blocks[0]) != heldAckBlock || len(blocks[1]) != 1 || full.empty() {
		t.Fatalf("blocks of %d and %d, want %d and 1", len(blocks[0]), len(blocks[len(blocks)-1]), heldAckBlock)
	}
	// The ack after a full block folds into the new block's entry.
	full.add(&dsl.TupleID{Root: heldAckBlock + 1, Edge: 2}, 1)
	if got := heldOf(&full, 0)[1]; len(got) != 1 || got[0] != (heldAck{heldAckBlock + 1, 3}) {
		t.Errorf("last block %v, want the last ack folded into [{%d 3}]", got, heldAckBlock+1)
	}
}

// A commit hands each acker the blocks held for it, as they are, after the
// acker operations the task had buffered; the acks of a later checkpoint stay
// held until it commits.
func TestCommitHandsEachAckerItsHeldBlocks(t *testing.T) {
	o, inc := outboxHarness(t, 64)
	ackers := inc.plan.Ackers
	if len(ackers) != 4 {
		t.Fatalf("%d ackers, the test picks roots for 4", len(ackers))
	}
	b := &boltTask{inc: inc, out: o}
	k := &boltCheckpoint{ackers: len(ackers)}
	r := [4]uint64{rootOf(0, 4, 1), rootOf(1, 4, 1), rootOf(2, 4, 1), rootOf(3, 4, 1)} // a root of each acker
	for !hops.Sampled(r[0]) {                                                          // one the hop probe would time: with no probe, nothing marks it
		r[0] = rootOf(0, 4, r[0]+1)
	}
	o.ack(ackerOp{Kind: opAnchor, Root: r[1], Edge: 1}) // buffered before the commit
	k.hold(&dsl.TupleID{Root: r[0], Edge: 2})
	k.hold(&dsl.TupleID{Root: r[1], Edge: 3, Roots: []uint64{r[2]}})
	k.covered = append(k.covered, coveredAcks{id: 1, acks: k.acks})
	k.acks = heldAcks{}
	k.hold(&dsl.TupleID{Root: r[3], Edge: 8})
	k.covered = append(k.covered, coveredAcks{id: 2, acks: k.acks})
	k.acks = heldAcks{}

	received := func(acker int) []any {
		var out []any
		for m := inc.boxes[acker].control.pop(); m != nil; m = inc.boxes[acker].control.pop() {
			out = append(out, m)
		}
		return out
	}
	okAcks := func(m any) []heldAck {
		blk, ok := m.(*okBlock)
		if !ok {
			t.Fatalf("%T posted, want an *okBlock", m)
		}
		return blk.acks
	}
	k.commit(b, 1)
	if got := received(ackers[0]); len(got) != 1 || !reflect.DeepEqual(okAcks(got[0]), []heldAck{{r[0], 2}}) {
		t.Errorf("acker 0 received %v, want Ok(r0, 2)", got)
	}
	got := received(ackers[1])
	if len(got) != 2 {
		t.Fatalf("acker 1 received %d messages, want the buffered batch and a block", len(got))
	}
	if batch, ok := got[0].(*ackerBatch); !ok || len(batch.ops) != 1 || batch.ops[0].Kind != opAnchor {
		t.Errorf("acker 1 first received %#v, want the buffered Anchor", got[0])
	}
	if acks := okAcks(got[1]); !reflect.DeepEqual(acks, []heldAck{{r[1], 3}}) {
		t.Errorf("acker 1's block %v, want Ok(r1, 3)", acks)
	}
	if got := received(ackers[2]); len(got) != 1 || !reflect.DeepEqual(okAcks(got[0]), []heldAck{{r[2], 3}}) {
		t.Errorf("acker 2 received %v, want Ok(r2, 3)", got)
	}
	if got := received(ackers[3]); len(got) != 0 {
		t.Errorf("acker 3 received %v before checkpoint 2 committed", got)
	}
	if len(k.covered) != 1 || k.covered[0].id != 2 {
		t.Fatalf("still held: %v, want checkpoint 2's", k.covered)
	}
	k.commit(b, 2)
	if got := received(ackers[3]); len(got) != 1 || !reflect.DeepEqual(okAcks(got[0]), []heldAck{{r[3], 8}}) {
		t.Errorf("acker 3 received %v, want Ok(r3, 8)", got)
	}
	if len(k.covered) != 0 {
		t.Errorf("still held after the last commit: %v", k.covered)
	}
}

// The acker applies a block of held acks as Oks, and gives the block back
// empty.
func TestAckerAppliesAHeldBlock(t *testing.T) {
	a, box := ackerHarness(10, 64)
	a.apply(ackerOp{Kind: opTrack, Root: 1, Spout: 1, Edge: 0b0110})
	a.apply(ackerOp{Kind: opTrack, Root: 2, Spout: 1, Edge: 0b1000})
	blk := okBlocks.Get().(*okBlock)
	blk.acks = append(blk.acks[:0], heldAck{1, 0b0110}, heldAck{2, 0b0001})
	a.Receive(message{msg: blk})
	a.flush()
	if len(blk.acks) != 0 {
		t.Errorf("the block holds %d acks after the acker applied it", len(blk.acks))
	}
	f := posted(box)
	if len(f) != 1 || !reflect.DeepEqual(f[0].acked, []uint64{1}) || a.open != 1 {
		t.Fatalf("feedback %v, open %d; want tree 1 acked and tree 2 still open", f, a.open)
	}
}
