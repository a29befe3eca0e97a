package main

import (
	"runtime"
	"sync/atomic"
	"time"
)

// lineHandoff measures what it costs this machine to move one cache line from
// one core to another: two goroutines take turns writing one atomic counter,
// each waiting (spinning) for the other's write, rounds times. It returns the
// mean one-way time, or 0 with a single P (the two would share a core).
//
// It is the machine's constant behind the runtime's per-batch cost: a batch
// handed from task to task moves several lines written on both sides
// (docs/BENCHMARKS.md, "Performance III: the throughput gaps").
func lineHandoff(rounds int) time.Duration {
	if runtime.GOMAXPROCS(0) < 2 || rounds < 2 {
		return 0
	}
	var turn atomic.Int64
	done := make(chan struct{})
	n := int64(rounds)
	go func() {
		defer close(done)
		for i := int64(1); i < n; i += 2 {
			for turn.Load() != i {
			}
			turn.Store(i + 1)
		}
	}()
	start := time.Now()
	for i := int64(0); i < n; i += 2 {
		for turn.Load() != i {
		}
		turn.Store(i + 1)
	}
	<-done
	return time.Since(start) / time.Duration(n)
}
