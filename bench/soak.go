package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"time"
)

// flatLimit is how much the live heap may grow over its size after warm-up.
const flatLimit = 1.5

const liveMetric = "/gc/heap/live:bytes" // heap marked live by the last GC

// soak runs one goshelter pipeline at full speed for c.soak and checks that the
// live heap stays flat: its largest value after warm-up (as each GC marks it, and
// after a forced GC at the end) is at most flatLimit times its largest value
// during the second half of the warm-up.
func soak(c config) int {
	s := setup{shape: twoHop, acked: true, pending: c.pending, ackers: c.ackers, spoutWait: c.spoutWait}
	switch c.soakCase {
	case "acked":
	case "unacked":
		s.acked = false
	case "acked-null":
		s.shape = oneHop
	case "unacked-null":
		s.shape, s.acked = oneHop, false
	case "wordcount":
		s.shape = wordCount
	default:
		fmt.Fprintf(os.Stderr, "bad -soak-case %q: want acked, unacked, acked-null, unacked-null or wordcount\n", c.soakCase)
		return 2
	}
	s.probe = &probe{}
	warmup := min(max(c.soak/6, 2*time.Second), 10*time.Second)
	fmt.Printf("soak: %s for %v (warm-up %v), GOMAXPROCS=%d %s\n",
		(&result{system: "goshelter", shape: s.shape, acked: s.acked}).name(), c.soak, warmup, runtime.GOMAXPROCS(0), runtime.Version())
	runtime.GC()
	pipe, err := startGoshelter(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 1
	}
	samples := []metrics.Sample{{Name: liveMetric}, {Name: heapMetric}}
	read := func() (live, heap uint64) {
		metrics.Read(samples)
		return samples[0].Value.Uint64(), samples[1].Value.Uint64()
	}
	start, first := time.Now(), snapshot(s.probe)
	var baseline, peakLive, peakHeap uint64
	lastPrint, lastCount := start, int64(0)
	warm := false
	for tick := time.NewTicker(100 * time.Millisecond); time.Since(start) < c.soak; <-tick.C {
		live, heap := read()
		elapsed := time.Since(start)
		switch {
		case elapsed < warmup/2:
		case elapsed < warmup:
			baseline = max(baseline, live)
		case !warm: // the size after warm-up: what a full GC keeps now
			warm = true
			runtime.GC()
			live, heap = read()
			baseline = max(baseline, live)
			fmt.Printf("soak: warm: live heap %.1f MiB after a GC\n", mib(live))
		default:
			peakLive, peakHeap = max(peakLive, live), max(peakHeap, heap)
		}
		if time.Since(lastPrint) >= 5*time.Second {
			n := s.probe.sinkCount()
			fmt.Printf("soak: t=%3.0fs live heap %6.1f MiB, heap %6.1f MiB, %s tuples/s\n", elapsed.Seconds(),
				mib(live), mib(heap), mega(float64(n-lastCount)/time.Since(lastPrint).Seconds()))
			lastPrint, lastCount = time.Now(), n
		}
	}
	last := snapshot(s.probe)
	total := s.probe.sinkCount()
	elapsed := time.Since(start)
	runtime.GC()
	final, _ := read()
	peakLive = max(peakLive, final)
	stopErr := pipe.Stop()
	growth := float64(peakLive) / float64(max(baseline, 1))
	flat := growth <= flatLimit && baseline > 0
	fmt.Printf("soak: %d tuples, %s tuples/s; live heap after warm-up %.1f MiB, largest after %.1f MiB (%.2fx, limit %.1fx), after a final GC %.1f MiB; peak heap %.1f MiB; other processes used %.0f%% of the CPU; flat=%v\n",
		total, mega(float64(total)/elapsed.Seconds()), mib(baseline), mib(peakLive), growth, flatLimit, mib(final), mib(peakHeap), 100*othersShare(first, last), flat)
	if stopErr != nil {
		fmt.Fprintln(os.Stderr, "soak: stop:", stopErr)
		return 1
	}
	if !flat {
		return 1
	}
	return 0
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
