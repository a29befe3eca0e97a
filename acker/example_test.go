package acker_test

import (
	"fmt"

	"github.com/goshelter/goshelter/acker"
)

// A tree spout -> A -> B: every edge is XORed in when anchored and out when acked.
func Example() {
	t := acker.New(1024)
	const root, spoutTask = 42, 3
	t.Track(root, spoutTask, 0)
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

// Trees live in three rotating buckets: a tree expires on the third rotation
// after it was tracked.
func ExampleTracker_Rotate() {
	t := acker.New(1024)
	t.Track(7, 1, 0)
	for tick := 1; tick <= 3; tick++ {
		t.Rotate(func(root uint64, spout int) {
			fmt.Printf("tick %d: tree %d of spout task %d expired\n", tick, root, spout)
		})
	}
	// Output:
	// tick 3: tree 7 of spout task 1 expired
}

// A tracker at capacity refuses new trees (the acker nacks them at once);
// Fail ends a tree and names its spout task, once.
func ExampleTracker_Track() {
	t := acker.New(1) // room for one open tree
	fmt.Println("track 1:", t.Track(1, 5, 0))
	fmt.Println("track 2:", t.Track(2, 5, 0)) // over capacity
	spout, found := t.Fail(1)
	fmt.Println("fail 1:", found, "nack spout task", spout)
	_, found = t.Fail(1)
	fmt.Println("fail 1 again:", found)
	fmt.Println("track 2:", t.Track(2, 5, 0)) // the freed place
	// Output:
	// track 1: true
	// track 2: false
	// fail 1: true nack spout task 5
	// fail 1 again: false
	// track 2: true
}
