package actors

import (
	"reflect"
	"testing"

	"github.com/goshelter/goshelter/dsl"
)

// Held acks fold an ack into the one held before it when both go to the same
// tree (Ok XORs edges), hold an input of several trees as one Ok per tree, and
// fill blocks of heldAckBlock, reusing spare ones.
func TestHeldAcksFoldAndExpand(t *testing.T) {
	var h heldAcks
	var spare [][]heldAck
	h.add(&dsl.TupleID{Root: 1, Edge: 0b0011}, &spare)
	h.add(&dsl.TupleID{Root: 1, Edge: 0b0101}, &spare) // folded: 0011 ^ 0101
	h.add(&dsl.TupleID{Root: 2, Edge: 0b1000, Roots: []uint64{3}}, &spare)
	h.add(&dsl.TupleID{Root: 1, Edge: 0b0001}, &spare) // another tree came between: not folded
	want := []heldAck{{1, 0b0110}, {2, 0b1000}, {3, 0b1000}, {1, 0b0001}}
	if len(h.blocks) != 1 || !reflect.DeepEqual(h.blocks[0], want) {
		t.Fatalf("held %v, want %v", h.blocks, want)
	}

	var full heldAcks
	reused := make([]heldAck, 0, heldAckBlock)
	spare = [][]heldAck{reused}
	for i := range heldAckBlock + 1 {
		full.add(&dsl.TupleID{Root: uint64(i + 1), Edge: 1}, &spare)
	}
	if len(full.blocks) != 2 || len(full.blocks[0]) != heldAckBlock || len(full.blocks[1]) != 1 {
		t.Fatalf("blocks of %d and %d, want %d and 1", len(full.blocks[0]), len(full.blocks[len(full.blocks)-1]), heldAckBlock)
	}
	if &full.blocks[0][:1][0] != &reused[:1][0] || len(spare) != 0 {
		t.Error("the first block is not the spare one")
	}
	// The ack after a full block folds into the new block's entry.
	full.add(&dsl.TupleID{Root: heldAckBlock + 1, Edge: 2}, &spare)
	if got := full.blocks[1]; len(got) != 1 || got[0] != (heldAck{heldAckBlock + 1, 3}) {
		t.Errorf("last block %v, want the last ack folded into [{%d 3}]", got, heldAckBlock+1)
	}
}
