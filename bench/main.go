// Command bench measures goshelter's data path in one process against the limit
// (the same pipelines hand-written with Go channels; chan+tuple is the same with
// goshelter's tuple representation), the framework floor (bare protoactor-go
// actors) and a peer (watermill's router on its gochannel pub/sub).
//
// It first prints the machine's cache-line hand-off time (how long one
// core takes to see another's write, the constant behind every hand-off of a
// batch), then one table row per run, a check of the performance targets, and
// ends with one line:
//
//	ratios: unacked_vs_limit=X acked_vs_unacked=Y acked_vs_watermill=Z  ... kafka_vs_client=K stateful_vs_plain=S stateful_heap_vs_plain=H eos_vs_atleastonce=E eos_vs_client=C
//
// # Usage
//
//	cd bench && go run . -quick          # every case, about 30 s
//	cd bench && go run . -duration 5s -count 3   # the full run docs/BENCHMARKS.md reports
//	cd bench && go run . -soak 60s       # heap flatness over a long full-speed run
//	cd bench && go run . -quick -scale   # acked spout->bolt at 2 to 512 tasks
//	cd bench && go run . -only 'goshelter acked' -cpuprofile cpu.out
//	cd bench && go run . -quick -only 'goshelter acked spout' -trace trace.out   # the paced runs' execution traces
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	quick      bool
	duration   time.Duration
	warmup     time.Duration
	count      int
	only       string
	pending    int
	ackers     int
	cpuprofile string
	memprofile string
	soak       time.Duration
	soakCase   string
	markdown   bool
	spoutWait  time.Duration
	load       float64
	hops       bool
	scale      bool
	trace      string
}

func parseFlags() config {
	var c config
	flag.BoolVar(&c.quick, "quick", false, "short runs (1 s each, 0.3 s warm-up): the whole suite in under a minute")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "measured time per case")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured time per case before measuring")
	flag.IntVar(&c.count, "count", 1, "runs per full-speed case; the table shows the median by tuples/s (the machine is shared: more runs, less noise)")
	flag.StringVar(&c.only, "only", "", "run only cases whose name matches this regexp (e.g. 'goshelter|chan')")
	flag.IntVar(&c.pending, "pending", 4096, "max pending tuples per spout in acked runs (all systems)")
	flag.IntVar(&c.ackers, "ackers", 1, "goshelter acker tasks")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the runs to this file")
	flag.StringVar(&c.memprofile, "memprofile", "", "write an allocation profile to this file at the end")
	flag.DurationVar(&c.soak, "soak", 0, "run the soak instead of the table: one case at full speed for this long, checking heap flatness")
	flag.StringVar(&c.soakCase, "soak-case", "acked", "soak case: acked or unacked (goshelter spout->bolt->null), acked-null or unacked-null (spout->null), or wordcount")
	flag.DurationVar(&c.spoutWait, "spout-wait", defaultSpoutWait, "how long a paced spout sleeps when ahead of its rate, in every system")
	flag.Float64Var(&c.load, "load", 0.5, "the paced runs' rate as a fraction of the full-speed rate")
	flag.BoolVar(&c.hops, "hops", true, "run goshelter's acked cases once more with the hop probe and print where their complete latency goes")
	flag.StringVar(&c.trace, "trace", "", "write an execution trace of each paced run (the latency cases) to this file, .1, .2 and so on after the first (go tool trace -pprof=sched FILE names where goroutines waited for a core)")
	flag.BoolVar(&c.scale, "scale", false, "run the scale mode instead of the table: acked spout->bolt at 2, 8, 32, 128 and 512 tasks (throughput, peak RSS, start and stop times)")
	flag.BoolVar(&c.markdown, "markdown", false, "print the table as Markdown (for docs/BENCHMARKS.md)")
	flag.Parse()
	if c.quick {
		c.duration, c.warmup = time.Second, 300*time.Millisecond
	}
	return c
}

// runSpec is one case of the table.
type runSpec struct {
	system string
	start  starter
	shape  shape
	acked  bool
	half   bool // also run paced at -load (50%) of the full-speed rate, for latency
	// flushOff runs with topology.batch.flush.interval.millis 0 (slow source only).
	flushOff bool
}

func (r runSpec) name() string {
	res := result{system: r.system, shape: r.shape, acked: r.acked}
	if r.flushOff {
		return res.name() + " flush=0"
	}
	return res.name()
}

func cases() []runSpec {
	return []runSpec{
		{"chan", startChan, oneHop, false, false, false},
		{"chan", startChan, twoHop, false, false, false},
		{"chan", startChan, oneHop, true, true, false},
		{"chan", startChan, twoHop, true, true, false},
		{"chan", startChan, wordCount, false, false, false},
		{"chan+tuple", startChanTuple, oneHop, false, false, false},
		{"chan+tuple", startChanTuple, twoHop, false, false, false},
		{"protoactor", startFloor, oneHop, false, false, false},
		{"protoactor", startFloor, twoHop, false, false, false},
		{"goshelter", startGoshelter, oneHop, false, false, false},
		{"goshelter", startGoshelter, twoHop, false, false, false},
		{"goshelter", startGoshelter, oneHop, true, true, false},
		{"goshelter", startGoshelter, twoHop, true, true, false},
		{"goshelter", startGoshelter, wordCount, false, false, false},
		{"goshelter", startCounting, ackedCount, true, false, false},
		{"goshelter", startCounting, statefulCount, true, false, false},
		{"goshelter", startGoshelter, slidingWindow, false, false, false},
		{"goshelter", startGoshelter, slowSource, false, false, false},
		{"goshelter", startGoshelter, slowSource, false, false, true},
		{"watermill", startWatermill, oneHop, true, true, false},
		{"watermill", startWatermill, twoHop, true, true, false},
		{"franz-go", startFranz, topicToTopic, true, false, false},
		{"kafka", startKafka, topicToTopic, true, false, false},
		{"franz-go", startFranzCount, topicCount, true, false, false},
		{"kafka-atleastonce", startKafkaCount(false), topicCount, true, false, false},
		{"kafka-exactlyonce", startKafkaCount(true), topicCount, true, false, false},
	}
}

func main() {
	c := parseFlags()
	os.Exit(run(c))
}

func run(c config) int {
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	defer writeMemProfile(c.memprofile)
	if c.soak > 0 {
		return soak(c)
	}
	if c.scale {
		return runScale(c)
	}
	only, err := regexp.Compile(c.only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad -only:", err)
		return 2
	}
	fmt.Printf("bench: GOMAXPROCS=%d %s, %v per case after %v warm-up, median of %d, batch %d, max pending %d, goshelter ackers %d, spout wait %v\n",
		runtime.GOMAXPROCS(0), runtime.Version(), c.duration, c.warmup, max(c.count, 1), batchSize, c.pending, c.ackers, c.spoutWait)
	if d := lineHandoff(200_000); d > 0 {
		fmt.Printf("machine: a cache line moves between two cores in %v (one way, mean of 200000)\n", d.Round(time.Nanosecond))
	}
	t := timing{warmup: c.warmup, measure: c.duration}
	var results []result
	traced := 0 // paced runs traced so far
	for _, rs := range cases() {
		if !only.MatchString(rs.name()) {
			continue
		}
		s := setup{shape: rs.shape, acked: rs.acked, pending: c.pending, ackers: c.ackers, spoutWait: c.spoutWait, flushOff: rs.flushOff}
		t := t
		if rs.shape == topicToTopic || rs.shape == topicCount {
			t, s.fill = kafkaTiming(t)
		}
		if rs.shape == ackedCount || rs.shape == statefulCount || rs.shape == topicCount {
			s.pending = statePending
		}
		full := median(rs, s, t, c.count)
		results = append(results, full)
		probed := c.hops && rs.system == "goshelter" && rs.acked && full.err == nil
		if probed {
			results = append(results, hopRun(rs, s, t))
		}
		if rs.half && full.err == nil {
			s.rate, s.load = full.rate()*c.load, c.load
			stopTrace := startTrace(c.trace, &traced)
			results = append(results, runOne(rs, s, t))
			stopTrace()
			if probed {
				results = append(results, hopRun(rs, s, t))
			}
		}
	}
	var table []result // the hop-probe runs print apart
	for _, r := range results {
		if r.hops == nil && !strings.HasSuffix(r.load, "hops") {
			table = append(table, r)
		}
	}
	printTable(os.Stdout, table, c.markdown)
	printHops(os.Stdout, results, c.markdown)
	printTargets(os.Stdout, table)
	fmt.Println(ratiosLine(table))
	for _, r := range results {
		if r.err != nil {
			return 1
		}
	}
	return 0
}

// startTrace starts an execution trace into path (path.n for the n-th after
// the first) and returns what stops it; with no path it does nothing. A
// trace that cannot start is reported and skipped: the run goes on.
func startTrace(path string, n *int) (stop func()) {
	if path == "" {
		return func() {}
	}
	if *n > 0 {
		path = fmt.Sprintf("%s.%d", path, *n)
	}
	*n++
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		f.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "trace:", err)
		}
	}
}

// kafkaTiming bounds a Kafka case's warm-up and measure (0.3 s and 1 s at
// most) and returns how long to fill the backlog for them: twice their
// length, at the rate one client produces (see kafka.go). franz-go
// alone moves over a million records a second here, and a backlog for the
// default 6 s would cost gigabytes of broker memory.
func kafkaTiming(t timing) (timing, time.Duration) {
	t.warmup, t.measure = min(t.warmup, 300*time.Millisecond), min(t.measure, time.Second)
	return t, 2 * (t.warmup + t.measure)
}

func runOne(rs runSpec, s setup, t timing) result {
	load := "full speed"
	if s.rate > 0 {
		load = fmt.Sprintf("%.0f tuples/s", s.rate)
	}
	fmt.Fprintf(os.Stderr, "running %s at %s...\n", rs.name(), load)
	return measure(rs.system, rs.start, s, t)
}

// median runs a case count times and returns the run with the median rate
// (the first failed run, if any fails).
func median(rs runSpec, s setup, t timing, count int) result {
	var runs []result
	for range max(count, 1) {
		r := runOne(rs, s, t)
		if r.err != nil {
			return r
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b result) int { return cmp.Compare(a.rate(), b.rate()) })
	return runs[len(runs)/2]
}

func writeMemProfile(path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
