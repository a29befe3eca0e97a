// Command readme runs the topology of README's "Defining and running a
// topology", pasted below by modcheck from README.md, on a queue of numbers,
// until every number is acked.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

//modcheck:types

// queue hands out the numbers 0..n-1 as Original tuples, puts a nacked number
// back and closes done once every number is acked.
type queue struct {
	mu      sync.Mutex // mu guards next, retry and acked
	n, next int
	retry   []int
	acked   map[int]bool
	done    chan struct{}
}

func newQueue(n int) *queue { return &queue{n: n, acked: map[int]bool{}, done: make(chan struct{})} }

func (q *queue) Next() (int, Original, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.retry) > 0 {
		id := q.retry[0]
		q.retry = q.retry[1:]
		return id, Original{X: id}, true
	}
	if q.next == q.n {
		return 0, Original{}, false
	}
	q.next++
	return q.next - 1, Original{X: q.next - 1}, true
}

func (q *queue) Ack(id int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.acked[id] = true
	if len(q.acked) == q.n {
		close(q.done)
	}
}

func (q *queue) Nack(id int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retry = append(q.retry, id)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := newQueue(1000)
	run(ctx, q)
	select {
	case <-q.done:
		fmt.Printf("readme: acked=%d\n", q.n)
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "readme: not every number was acked:", ctx.Err())
		os.Exit(1)
	}
}

// run holds README's code: its deferred Stop runs when run returns, so run
// waits for the queue first.
func run(ctx context.Context, q *queue) {
	//modcheck:body
	select {
	case <-q.done:
	case <-ctx.Done():
	}
}
