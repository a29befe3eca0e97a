package actors

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// A run scheduled while a worker is parked goes to that worker: no new
// goroutine per run. After close, parked workers exit and a late run still runs.
func TestWorkersReuseAndClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	w := newWorkers()
	var wg sync.WaitGroup
	ids := make(chan int64, 10)
	run := func() {
		ids <- goid()
		wg.Done()
	}
	first := int64(-1)
	for i := range 10 {
		wg.Add(1)
		if i > 0 {
			waitParked(t)
		}
		w.schedule(run)
		wg.Wait()
		id := <-ids
		if i == 0 {
			first = id
		} else if id != first {
			t.Fatalf("run %d ran on goroutine %d, not on the parked worker %d", i, id, first)
		}
	}
	w.close()
	wg.Add(1)
	w.schedule(run) // after close: a worker of its own, which exits when done
	wg.Wait()
}

// goid returns the calling goroutine's id, read from its stack header.
func goid() int64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf)) // "goroutine N [running]:"
	id, _ := strconv.ParseInt(f[1], 10, 64)
	return id
}

// waitParked waits until a worker waits for work (bounded by waitFor: it
// looped forever before, so a worker that never parked hung the package).
func waitParked(t *testing.T) {
	t.Helper()
	waitUntil(t, "a worker to park", func() bool {
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "[select") && strings.Contains(g, "(*workers).loop") {
				return true
			}
		}
		return false
	})
}
