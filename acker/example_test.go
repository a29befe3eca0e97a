package acker_test

import (
	"fmt"
	"time"

	"github.com/goshelter/goshelter/acker"
)

// A tree spout -> A -> B: every edge is XORed in when anchored and out when acked.
func Example() {
	t := acker.New(1024)
	const root, spoutTask = 42, 3
	t.Track(root, spoutTask)
	t.Anchor(root, 100) // the spout's tuple to A
	t.Anchor(root, 200) // A's tuple to B
	t.Ok(root, 100)     // A is done
	v, _ := t.Value(root)
	fmt.Println("after A:", v)
	spout, complete := t.Ok(root, 200) // B is done
	fmt.Println("after B: complete", complete, "ack spout task", spout)
	// Output:
	// after A: 200
	// after B: complete true ack spout task 3
}

func ExampleTracker_Rotate() {
	t := acker.New(1024)
	t.Track(7, 1)
	for tick := 1; tick <= acker.Buckets; tick++ {
		t.Rotate(func(root uint64, spout int) {
			fmt.Printf("tick %d: tree %d of spout task %d expired\n", tick, root, spout)
		})
	}
	// Output:
	// tick 3: tree 7 of spout task 1 expired
}

func ExampleTracker_Apply() {
	t := acker.New(1) // room for one open tree
	names := map[acker.Outcome]string{acker.Pending: "pending", acker.Complete: "complete", acker.Failed: "failed", acker.Refused: "refused"}
	for _, op := range []acker.Op{
		{Kind: acker.OpTrack, Root: 1, Spout: 5},
		{Kind: acker.OpTrack, Root: 2, Spout: 5}, // over capacity
		{Kind: acker.OpFail, Root: 1},
	} {
		outcome, spout := t.Apply(op)
		fmt.Printf("%v %d: %s, spout task %d\n", op.Kind, op.Root, names[outcome], spout)
	}
	// Output:
	// Track 1: pending, spout task 0
	// Track 2: refused, spout task 5
	// Fail 1: failed, spout task 5
}

func ExampleTickPeriod() {
	timeout := 30 * time.Second
	p := acker.TickPeriod(timeout)
	fmt.Println("rotate every", p)
	fmt.Println("expiry between", time.Duration(acker.Buckets-1)*p, "and", time.Duration(acker.Buckets)*p)
	// Output:
	// rotate every 15s
	// expiry between 30s and 45s
}
