package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goshelter/goshelter/internal/hops"
)

// shape is a pipeline shape.
type shape int

const (
	oneHop        shape = iota + 1 // spout -> null bolt
	twoHop                         // spout -> bolt -> null bolt
	wordCount                      // sentences -> split -> count (fields grouping, 2 tasks)
	slidingWindow                  // spout -> a windowed bolt: the last 1,000 tuples every 100
	slowSource                     // a spout whose Next blocks 1 ms per tuple (1,000 tuples/s) -> null bolt
	topicToTopic                   // Kafka topic -> topic (issue 22)
	ackedCount                     // the word count acked, without state (issue 23's baseline)
	statefulCount                  // the word count with a stateful count bolt, 1 s checkpoints on Pebble (issue 23)
	topicCount                     // Kafka topic -> count by key -> topic (issue 31)
)

func (s shape) String() string {
	switch s {
	case oneHop:
		return "spout->null"
	case twoHop:
		return "spout->bolt->null"
	case wordCount:
		return "wordcount"
	case slidingWindow:
		return "window(1000/100)"
	case slowSource:
		return "slow-source(1k/s)"
	case topicToTopic:
		return "topic->topic"
	case ackedCount:
		return "wordcount"
	case statefulCount:
		return "wordcount-stateful(pebble,1s)"
	case topicCount:
		return "topic->count->topic"
	}
	return fmt.Sprintf("shape(%d)", int(s))
}

// batchSize is the tuples carried per message by every batched implementation,
// goshelter's default.
const batchSize = 64

// setup is what one run asks of an implementation.
type setup struct {
	shape   shape
	acked   bool
	rate    float64 // tuples/s the spout is paced at; 0 is full speed
	load    float64 // rate as a fraction of the full-speed rate (for labels)
	pending int     // max tuples in flight per spout (acked runs)
	ackers  int     // goshelter acker tasks
	// spoutWait is how long a paced spout sleeps when it is ahead of its rate.
	spoutWait time.Duration
	probe     *probe
	// flushOff sets topology.batch.flush.interval.millis to 0: batches leave
	// only when full or when their task runs dry (the slow source's "before").
	flushOff bool
	// fill is how long a Kafka case fills its input topic before the run.
	fill time.Duration
	// tasks, when set, is the parallelism of the spout and of the sink bolt
	// (the scale mode); 0 is 1.
	tasks int
	// hops, when set, is the hop probe of the run's topology (goshelter only,
	// given to Run through its ctx): the run then reports where the time goes,
	// not figures.
	hops *hops.Probe
}

// pipeline is a running implementation. Stop ends the flow, drains what is in
// flight and releases every goroutine the implementation started.
type pipeline interface {
	Stop() error
}

// starter builds and starts an implementation for s.
type starter func(s setup) (pipeline, error)

// probe is what pipelines report into: tuples reaching the sink, complete
// latency of sampled tuples, and nacks.
type probe struct {
	mu      sync.Mutex // mu guards tallies
	tallies []*counter
	lat     histogram
	nacks   atomic.Int64
}

// counter is one sink task's count, alone on its cache line.
type counter struct {
	n atomic.Int64
	_ [56]byte
}

// tally is a sink task's local count; it publishes to its counter every 64
// tuples, so counting costs the sink one plain add per tuple.
type tally struct {
	local int64
	c     *counter
}

func (p *probe) tally() *tally {
	c := &counter{}
	p.mu.Lock()
	p.tallies = append(p.tallies, c)
	p.mu.Unlock()
	return &tally{c: c}
}

func (t *tally) inc() {
	t.local++
	if t.local&63 == 0 {
		t.c.n.Store(t.local)
	}
}

func (t *tally) add(n int) {
	t.local += int64(n)
	t.c.n.Store(t.local)
}

// sinkCount is the tuples counted by every sink so far.
func (p *probe) sinkCount() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, c := range p.tallies {
		n += c.n.Load()
	}
	return n
}

// result is one measured run.
type result struct {
	system   string
	shape    shape
	acked    bool
	load     string // "full", or the paced rate as a share of full speed ("50%")
	tuples   int64
	elapsed  time.Duration
	cpu      time.Duration
	mallocs  uint64
	bytes    uint64
	peakHeap uint64
	gcs      uint32
	p50      time.Duration
	p99      time.Duration
	p999     time.Duration
	samples  uint64
	nacks    int64
	stop     time.Duration
	hops     []hops.Span     // a hop-probe run's spans, hop by hop
	hopTotal []time.Duration // and its emit-to-settled times
	others   float64         // share of the machine's CPU used by other processes, -1 if unknown
	err      error
}

func (r *result) name() string {
	mode := "unacked"
	if r.acked {
		mode = "acked"
	}
	if r.shape == wordCount || r.shape == slidingWindow {
		mode = "unacked"
	}
	return fmt.Sprintf("%s %s %s", r.system, mode, r.shape)
}

func (r *result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.tuples) / r.elapsed.Seconds()
}

func (r *result) perTuple(v float64) float64 {
	if r.tuples == 0 {
		return 0
	}
	return v / float64(r.tuples)
}

// window holds the process counters at one instant.
type window struct {
	at      time.Time
	tuples  int64
	cpu     time.Duration
	mallocs uint64
	bytes   uint64
	gcs     uint32
	busy    time.Duration // CPU time of the whole machine, -1 if unknown
}

func snapshot(p *probe) window {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return window{at: time.Now(), tuples: p.sinkCount(), cpu: cpu, mallocs: ms.Mallocs, bytes: ms.TotalAlloc, gcs: ms.NumGC, busy: machineBusy()}
}

// machineBusy reads the CPU time all processes have used from /proc/stat
// (Linux), or -1.
func machineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	var ticks int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return -1
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// othersShare is the share of the machine's CPU that other processes used
// between two snapshots.
func othersShare(begin, end window) float64 {
	if begin.busy < 0 || end.busy < 0 {
		return -1
	}
	total := float64(end.at.Sub(begin.at)) * float64(runtime.NumCPU())
	others := float64(end.busy-begin.busy) - float64(end.cpu-begin.cpu)
	return min(max(others/total, 0), 1)
}

// heapSampler tracks the peak of the heap (bytes in live and not yet swept
// objects, MemStats.HeapAlloc) by polling runtime/metrics, which does not stop
// the world.
type heapSampler struct {
	stop chan struct{}
	done chan uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler(every time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan uint64, 1)}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		s := []metrics.Sample{{Name: heapMetric}}
		var peak uint64
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-t.C:
			case <-h.stop:
				h.done <- peak
				return
			}
		}
	}()
	return h
}

// peak stops the sampler and returns the largest heap it saw.
func (h *heapSampler) peak() uint64 {
	close(h.stop)
	return <-h.done
}

// timing is how long a run warms up and then measures.
type timing struct {
	warmup, measure time.Duration
}

// measure starts an implementation, lets it warm up, measures one window and
// stops it.
func measure(system string, start starter, s setup, t timing) result {
	r := result{system: system, shape: s.shape, acked: s.acked, load: "full"}
	if s.rate > 0 {
		r.load = fmt.Sprintf("%.0f%%", 100*s.load)
	}
	if s.shape == slowSource {
		r.load = "flush 1ms"
		if s.flushOff {
			r.load = "flush 0"
		}
	}
	p := &probe{}
	s.probe = p
	runtime.GC()
	pipe, err := start(s)
	if err != nil {
		r.err = err
		return r
	}
	time.Sleep(t.warmup)
	p.lat.reset()
	if s.hops != nil {
		s.hops.Reset()
	}
	heap := startHeapSampler(5 * time.Millisecond)
	begin := snapshot(p)
	time.Sleep(t.measure)
	end := snapshot(p)
	r.peakHeap = heap.peak()
	r.p50, r.p99, r.p999 = p.lat.quantile(0.50), p.lat.quantile(0.99), p.lat.quantile(0.999)
	r.samples = p.lat.total()
	if s.hops != nil {
		r.hops, r.hopTotal = s.hops.Spans()
	}
	stopAt := time.Now()
	r.err = pipe.Stop()
	r.stop = time.Since(stopAt)
	r.tuples = end.tuples - begin.tuples
	r.elapsed = end.at.Sub(begin.at)
	r.cpu = end.cpu - begin.cpu
	r.mallocs = end.mallocs - begin.mallocs
	r.bytes = end.bytes - begin.bytes
	r.gcs = end.gcs - begin.gcs
	r.others = othersShare(begin, end)
	r.nacks = p.nacks.Load()
	if r.err == nil && r.tuples == 0 {
		r.err = fmt.Errorf("no tuple reached the sink in %v", t.measure)
	}
	return r
}
