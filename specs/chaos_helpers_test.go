package specs_test

// Helpers of the chaos specs (chaos_test.go): the streams, a seeded generator
// of random topologies and fault plans, the figures a round reports, and the
// heap, process and log probes. The round itself (ledger, misbehaving bolts,
// checks) is in chaos_round_test.go.
//
// A round is fully described by its seed: the shape (depth, fan-out, groupings,
// parallelism, rings, anchoring), the conf, the crash points and the fault plan
// (which bolt task misbehaves on which attempt of which message, and how) are
// all derived from it. Thread interleaving is not, so a replay reproduces the
// same topology and the same faults, not the same schedule.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// ChaosPart names one attempt of one message of the replaying spout.
type ChaosPart struct{ Msg, Attempt int }

// ChaosHop is the grouped stream of the chaos topologies; Parts lists the
// message attempts the tuple carries (several after a batching bolt, none for
// the unreliable noise spout).
type ChaosHop struct {
	Key   string
	Parts []ChaosPart
}

// ChaosDirectHop is the same payload on the direct stream.
type ChaosDirectHop struct {
	Key   string
	Parts []ChaosPart
}

// chaosCarrier is the input type of every chaos bolt.
type chaosCarrier interface{ payload() ChaosHop }

func (h ChaosHop) payload() ChaosHop       { return h }
func (h ChaosDirectHop) payload() ChaosHop { return ChaosHop(h) }

// Fault kinds, as counted in the figures.
const (
	faultPanic      = "bolt-panic"
	faultError      = "bolt-error"
	faultNeverAck   = "bolt-never-ack"
	faultStall      = "bolt-stall"
	faultSpoutPanic = "spout-panic"
	faultSpoutFail  = "spout-fail"
	faultBoltFail   = "bolt-task-fail"
	faultShellDie   = "shell-child-dies"
)

// chaosFaultyAttempts: faults hit only the first attempts of a message, so a
// replaying spout always gets every message through eventually.
const chaosFaultyAttempts = 2

// chaosEdge subscribes a bolt to the spout (From -1), the noise spout (From -2)
// or an earlier bolt.
type chaosEdge struct {
	From     int
	Grouping string
	Anchored bool
}

// chaosBolt is one generated bolt.
type chaosBolt struct {
	ID       string
	Level    int
	Par      int
	Manual   bool // acks itself (dsl.Manual); may hold inputs and never ack
	Batching bool // a manual bolt that emits anchored to two inputs, flushing on ticks
	Shell    bool // a multilang bolt: a Python child that passes tuples on and sometimes dies
	Ring     int  // its own receive buffer size, 0 for the topology's
	Parents  []chaosEdge
}

// chaosCrash is a planned task failure, fired when the ledger hands out its
// At-th message attempt.
type chaosCrash struct {
	At   int
	Kind string
	Bolt int // for faultBoltFail
}

// chaosShape is everything a seed decides.
type chaosShape struct {
	Seed       uint64
	Messages   int
	SpoutPar   int
	Ackers     int
	MaxPending int
	Ring       int
	Batch      int
	Noise      bool
	StopMidway bool // stop once half is done, then run the topology again
	ShellDeath int  // a shell child dies on a first attempt with this chance in 10000
	// Stalls bounds the stalls of a round: a stalled task processes nothing for
	// longer than the timeout, and too many of them make every tree time out
	// while the queue behind it grows (a replay storm, see limitInFlight).
	Stalls  int
	Bolts   []chaosBolt
	Crashes []chaosCrash
	// per-tuple fault probabilities on faulty attempts
	PPanic, PError, PNeverAck, PStall float64
}

var chaosGroupings = []string{"shuffle", "fields", "all", "direct", "global"}

// newChaosShape derives a round from its seed; messages bounds its size.
// Shell bolts are generated only when shell is true (python3 is installed).
func newChaosShape(seed uint64, minMsgs, maxMsgs int, shell bool) chaosShape {
	rng := rand.New(rand.NewPCG(seed, 0xc4a05))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	s := chaosShape{
		Seed:       seed,
		Messages:   minMsgs + rng.IntN(maxMsgs-minMsgs+1),
		SpoutPar:   1 + rng.IntN(4),
		Ackers:     1 + rng.IntN(4),
		MaxPending: pick(1, 3, 16, 64, 128, 256),
		Ring:       pick(2, 4, 8, 1024, 4096),
		Batch:      pick(1, 7, 64),
		Noise:      rng.IntN(3) == 0,
		StopMidway: rng.IntN(4) == 0,
		PPanic:     rng.Float64() * 0.03,
		PError:     rng.Float64() * 0.03,
		PNeverAck:  rng.Float64() * 0.02,
		PStall:     rng.Float64() * 0.003,
	}
	s.Stalls = max(3, s.Messages/100)
	depth := 1 + rng.IntN(4)
	var prev []int // bolt indexes of the previous level
	for level := 1; level <= depth; level++ {
		var cur []int
		width := 1 + rng.IntN(3)
		for i := 0; i < width; i++ {
			b := chaosBolt{ID: fmt.Sprintf("l%d%c", level, 'a'+i), Level: level, Par: 1 + rng.IntN(4)}
			b.Manual = rng.IntN(2) == 0
			b.Batching = b.Manual && rng.IntN(3) == 0
			if rng.IntN(3) == 0 {
				b.Ring = pick(2, 8, 2048)
			}
			b.Parents = append(b.Parents, chaosRandomEdge(rng, prev))
			if len(prev) > 1 && rng.IntN(4) == 0 { // fan-in from a second parent
				e := chaosRandomEdge(rng, prev)
				if e.From != b.Parents[0].From {
					b.Parents = append(b.Parents, e)
				}
			}
			if level == 1 && s.Noise && rng.IntN(2) == 0 {
				b.Parents = append(b.Parents, chaosEdge{From: -2, Grouping: "shuffle"})
			}
			cur = append(cur, len(s.Bolts))
			s.Bolts = append(s.Bolts, b)
		}
		prev = cur
	}
	if shell && rng.IntN(3) == 0 {
		b := &s.Bolts[rng.IntN(len(s.Bolts))]
		b.Shell, b.Manual, b.Batching = true, false, false
		s.ShellDeath = 1 + 15000/s.Messages // about one or two deaths a round
	}
	s.ensureTracked()
	s.limitCopies(48)
	s.limitInFlight(4000)
	for n := rng.IntN(3); n > 0; n-- {
		c := chaosCrash{At: 1 + rng.IntN(s.Messages), Kind: []string{faultSpoutPanic, faultSpoutFail, faultBoltFail}[rng.IntN(3)]}
		c.Bolt = rng.IntN(len(s.Bolts))
		s.Crashes = append(s.Crashes, c)
	}
	return s
}

func chaosRandomEdge(rng *rand.Rand, prev []int) chaosEdge {
	e := chaosEdge{From: -1, Anchored: rng.IntN(5) != 0}
	if len(prev) > 0 {
		e.From = prev[rng.IntN(len(prev))]
		e.Grouping = chaosGroupings[rng.IntN(len(chaosGroupings))]
	} else {
		e.Grouping = chaosGroupings[rng.IntN(len(chaosGroupings))]
		if e.Grouping == "direct" { // the chaos spouts do not emit direct
			e.Grouping = "shuffle"
		}
	}
	return e
}

// ensureTracked anchors the first spout edge so messages have trees to track.
func (s *chaosShape) ensureTracked() {
	for i := range s.Bolts {
		for j := range s.Bolts[i].Parents {
			if s.Bolts[i].Parents[j].From == -1 {
				s.Bolts[i].Parents[j].Anchored = true
				return
			}
		}
	}
}

// copies estimates the tuples one message becomes; All groupings multiply it.
func (s *chaosShape) copies() (total int, per []int) {
	per = make([]int, len(s.Bolts))
	for i, b := range s.Bolts {
		for _, e := range b.Parents {
			in := 1
			if e.From >= 0 {
				in = per[e.From]
			} else if e.From == -2 {
				continue
			}
			if e.Grouping == "all" {
				in *= b.Par
			}
			per[i] += in
		}
		total += per[i]
	}
	return total, per
}

// limitCopies turns All groupings into shuffles until a message makes at most
// max tuples, so trees stay well inside the message timeout under -race.
func (s *chaosShape) limitCopies(max int) {
	for i := len(s.Bolts) - 1; i >= 0; i-- {
		if total, _ := s.copies(); total <= max {
			return
		}
		for j := range s.Bolts[i].Parents {
			if s.Bolts[i].Parents[j].Grouping == "all" {
				s.Bolts[i].Parents[j].Grouping = "shuffle"
			}
		}
	}
}

// limitInFlight lowers max pending until the tuples in flight at once (a shell
// bolt's counting five times: JSON through a pipe) stay within budget. More
// than the topology can process within the message timeout makes every tree
// time out and be replayed forever, in goshelter as in Storm.
func (s *chaosShape) limitInFlight(budget int) {
	_, per := s.copies()
	weight := 0
	for i, b := range s.Bolts {
		if b.Shell {
			weight += 5 * per[i]
		} else {
			weight += per[i]
		}
	}
	if most := budget / max(1, weight*s.SpoutPar); s.MaxPending > most {
		s.MaxPending = max(1, most)
	}
}

// String is a compact one-line description, printed with every round.
func (s chaosShape) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed=%d messages=%d spout-par=%d ackers=%d max-pending=%d ring=%d batch=%d noise=%v stop-midway=%v p(panic,error,never-ack,stall)=(%.3f,%.3f,%.3f,%.4f) stalls<=%d",
		s.Seed, s.Messages, s.SpoutPar, s.Ackers, s.MaxPending, s.Ring, s.Batch, s.Noise, s.StopMidway, s.PPanic, s.PError, s.PNeverAck, s.PStall, s.Stalls)
	for _, bolt := range s.Bolts {
		kind := "auto"
		if bolt.Shell {
			kind = fmt.Sprintf("shell,death=%d/10000", s.ShellDeath)
		} else if bolt.Batching {
			kind = "batching"
		} else if bolt.Manual {
			kind = "manual"
		}
		fmt.Fprintf(&b, " | %s(%s,x%d", bolt.ID, kind, bolt.Par)
		if bolt.Ring > 0 {
			fmt.Fprintf(&b, ",ring=%d", bolt.Ring)
		}
		b.WriteString(")<-")
		for i, e := range bolt.Parents {
			if i > 0 {
				b.WriteString("+")
			}
			arrow := "-"
			if e.Anchored {
				arrow = "="
			}
			fmt.Fprintf(&b, "%s%s%v", s.source(e.From), arrow, e.Grouping)
		}
	}
	for _, c := range s.Crashes {
		fmt.Fprintf(&b, " | crash %s at attempt #%d", c.Kind, c.At)
		if c.Kind == faultBoltFail {
			fmt.Fprintf(&b, " of %s", s.Bolts[c.Bolt].ID)
		}
	}
	return b.String()
}

func (s chaosShape) source(from int) string {
	switch from {
	case -1:
		return "spout"
	case -2:
		return "noise"
	}
	return s.Bolts[from].ID
}

// required lists the bolts every fully processed message must have passed:
// those reachable from the spout over anchored edges only. Shell bolts pass
// tuples on but record nothing (their work happens in the child).
func (s chaosShape) required() []int {
	reach := make([]bool, len(s.Bolts))
	var out []int
	for i, b := range s.Bolts {
		for _, e := range b.Parents {
			if e.Anchored && (e.From == -1 || (e.From >= 0 && reach[e.From])) {
				reach[i] = true
			}
		}
		if reach[i] && !b.Shell {
			out = append(out, i)
		}
	}
	return out
}

// chaosSettings are the conf values every round shares; time keys are short
// so timeouts and restarts happen within the round.
type chaosSettings struct {
	Timeout   time.Duration
	Stall     time.Duration
	Tick      time.Duration
	SpoutWait time.Duration
}

func defaultChaosSettings() chaosSettings {
	timeout := Scaled(200 * time.Millisecond)
	return chaosSettings{Timeout: timeout, Stall: timeout + timeout/2, Tick: 50 * time.Millisecond, SpoutWait: 2 * time.Millisecond}
}

// chaosFigures are the counts of one round, or of a whole soak.
type chaosFigures struct {
	Rounds     int
	Messages   int // distinct messages fully processed (acked)
	Emissions  int // message attempts handed out by the spout
	Acks       int
	Nacks      int
	Executed   int64 // bolt executions of tracked and noise tuples
	Restarts   int
	Runs       int // supervision.Run calls (more than rounds with stop-midway)
	Lost       int // messages never fully processed
	Duplicates int // messages acked more than once, or ids settled more than once
	MaxPending int // most outstanding ids one spout task held
	PeakHeap   uint64
	Faults     map[string]int
}

func (f *chaosFigures) add(o chaosFigures) {
	f.Rounds += o.Rounds
	f.Messages += o.Messages
	f.Emissions += o.Emissions
	f.Acks += o.Acks
	f.Nacks += o.Nacks
	f.Executed += o.Executed
	f.Restarts += o.Restarts
	f.Runs += o.Runs
	f.Lost += o.Lost
	f.Duplicates += o.Duplicates
	f.MaxPending = max(f.MaxPending, o.MaxPending)
	f.PeakHeap = max(f.PeakHeap, o.PeakHeap)
	if f.Faults == nil {
		f.Faults = map[string]int{}
	}
	for k, v := range o.Faults {
		f.Faults[k] += v
	}
}

func (f chaosFigures) totalFaults() int {
	n := 0
	for _, v := range f.Faults {
		n += v
	}
	return n
}

// String renders the figures as one "k=v" line.
func (f chaosFigures) String() string {
	kinds := make([]string, 0, len(f.Faults))
	for k := range f.Faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var faults strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&faults, " %s=%d", k, f.Faults[k])
	}
	return fmt.Sprintf("rounds=%d runs=%d messages=%d emissions=%d acks=%d nacks=%d executed=%d restarts=%d faults=%d%s lost=%d duplicates=%d max-pending-seen=%d peak-heap-mib=%.1f",
		f.Rounds, f.Runs, f.Messages, f.Emissions, f.Acks, f.Nacks, f.Executed, f.Restarts, f.totalFaults(), faults.String(),
		f.Lost, f.Duplicates, f.MaxPending, float64(f.PeakHeap)/(1<<20))
}

// chaosHeapNow reads the bytes of heap objects (live and not yet swept) without
// stopping the world.
func chaosHeapNow() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// chaosLiveHeap collects garbage and returns the live heap.
func chaosLiveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// chaosChildren lists the processes whose parent is this test process, zombies
// included (a child that exited but was never waited for). Linux only; elsewhere
// it finds none.
func chaosChildren() []string {
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		rest := string(data)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			fields := strings.Fields(rest[i+1:])
			if len(fields) >= 2 && fields[1] == self {
				out = append(out, fmt.Sprintf("%s %s", strings.Fields(string(data))[0], fields[0]))
			}
		}
	}
	return out
}

// chaosLogTail keeps the last lines the runtime logged (warn and above), for
// failure messages, and counts them.
type chaosLogTail struct {
	mu    sync.Mutex // mu guards lines, next and count
	lines []string
	next  int
	count int
}

func newChaosLogTail(n int) *chaosLogTail { return &chaosLogTail{lines: make([]string, n)} }

func (t *chaosLogTail) Write(p []byte) (int, error) {
	line := string(p)
	if len(line) > 600 {
		line = line[:600] + "...\n"
	}
	t.mu.Lock()
	t.lines[t.next] = line
	t.next = (t.next + 1) % len(t.lines)
	t.count++
	t.mu.Unlock()
	return len(p), nil
}

func (t *chaosLogTail) Sync() error { return nil }

func (t *chaosLogTail) logger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(t), zap.WarnLevel))
}

// String returns the kept lines, oldest first.
func (t *chaosLogTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d log lines at warn and above; the last ones:\n", t.count)
	for i := range t.lines {
		if l := t.lines[(t.next+i)%len(t.lines)]; l != "" {
			b.WriteString(l)
		}
	}
	return b.String()
}

// chaosSeedEnv replays one round; chaosSoakEnv runs the soak for a duration.
const (
	chaosSeedEnv   = "GOSHELTER_CHAOS_SEED"
	chaosRoundsEnv = "GOSHELTER_CHAOS_ROUNDS"
	chaosSoakEnv   = "GOSHELTER_SOAK"
)

// chaosSeeds returns the seeds of the short run: the one in GOSHELTER_CHAOS_SEED,
// or GOSHELTER_CHAOS_ROUNDS (default 10) seeds counted from ginkgo's random seed.
func chaosSeeds(base int64) ([]uint64, error) {
	if v := os.Getenv(chaosSeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", chaosSeedEnv, v, err)
		}
		return []uint64{s}, nil
	}
	rounds := 10
	if v := os.Getenv(chaosRoundsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, errors.New(chaosRoundsEnv + " must be a positive number")
		}
		rounds = n
	}
	seeds := make([]uint64, rounds)
	for i := range seeds {
		seeds[i] = uint64(base)*1000 + uint64(i)
	}
	return seeds, nil
}
