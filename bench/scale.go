package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/goshelter/goshelter/supervision"
)

// scaleTasks are the task counts the scale mode runs.
var scaleTasks = []int{2, 8, 32, 128, 512}

// runScale runs the acked spout->bolt shape with n tasks for each n of
// scaleTasks: n/2 reliable spout tasks shuffling into n/2 null bolt tasks, so
// every spout task feeds every bolt task and the task pairs with a data lane
// between them grow with the square of n (n^2/4: the densest a two-component
// topology gets). It prints throughput, peak RSS and heap, and the times to
// start and to stop.
func runScale(c config) int {
	fmt.Printf("scale: acked spout->bolt (shuffle), n/2 spout and n/2 bolt tasks, %d acker(s), max pending %d per spout task, %v per run after %v warm-up\n",
		c.ackers, c.pending, c.duration, c.warmup)
	fmt.Printf("%6s %7s %7s %12s %10s %10s %10s %10s\n", "tasks", "spouts", "lanes", "tuples/s", "peak RSS", "peak heap", "start", "stop")
	failed := 0
	for _, n := range scaleTasks {
		r, err := scaleRun(c, n)
		if err != nil {
			fmt.Printf("%6d: %v\n", n, err)
			failed++
			continue
		}
		fmt.Printf("%6d %7d %7d %12s %10s %10s %10s %10s\n", n, n/2, n*n/4, mega(r.rate), mibs(r.rss), mibs(r.heap),
			r.start.Round(time.Microsecond), r.stop.Round(time.Microsecond))
	}
	if failed > 0 {
		return 1
	}
	return 0
}

type scaleResult struct {
	rate        float64
	rss, heap   uint64
	start, stop time.Duration
}

func scaleRun(c config, n int) (scaleResult, error) {
	var r scaleResult
	p := &probe{}
	s := setup{shape: oneHop, acked: true, pending: c.pending, ackers: c.ackers, spoutWait: c.spoutWait, probe: p, tasks: n / 2}
	topo, err := goshelterTopology(s)
	if err != nil {
		return r, err
	}
	runtime.GC()
	resetPeakRSS()
	heap := startHeapSampler(5 * time.Millisecond)
	began := time.Now()
	run, err := supervision.Run(context.Background(), topo, supervision.WithoutRestarts(), supervision.WithDrainTimeout(10*time.Second))
	if err != nil {
		heap.peak()
		return r, err
	}
	r.start = time.Since(began)
	time.Sleep(c.warmup)
	from, at := p.sinkCount(), time.Now()
	time.Sleep(c.duration)
	r.rate = float64(p.sinkCount()-from) / time.Since(at).Seconds()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stopping := time.Now()
	err = run.Stop(ctx)
	r.stop = time.Since(stopping)
	r.heap = heap.peak()
	r.rss = peakRSS()
	if err != nil {
		return r, fmt.Errorf("stopping %d tasks: %w", n, err)
	}
	return r, nil
}

// resetPeakRSS sets the process's peak resident set back to its current one
// (Linux: "5" to /proc/self/clear_refs), so that each run reports its own.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns the process's peak resident set since the last reset, or 0
// where /proc/self/status does not say.
func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

func mibs(b uint64) string { return fmt.Sprintf("%.1f MiB", mib(b)) }
