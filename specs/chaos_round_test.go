package specs_test

// The chaos round (see chaos_test.go and chaos_helpers_test.go): the replaying
// spout's ledger, which records every broken promise, the misbehaving bolts,
// and running and checking one seeded round.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/supervision"
)

// chaosToken is one message attempt handed out by the spout.
type chaosToken struct {
	msg, attempt int
	source       *chaosSource
	settled      bool
}

// chaosLedger is the replaying spout's shared state: the queue of messages to
// (re)send, every id handed out and what happened to it. It records every
// broken promise as a violation instead of failing at once, because callbacks
// run on the runtime's goroutines.
type chaosLedger struct {
	mu         sync.Mutex // mu guards every field below
	queue      []int
	attempts   []int // by message, attempts handed out
	acks       []int // by message, acks received
	tokens     map[uint64]*chaosToken
	lastToken  uint64
	emissions  int
	nacks      int
	done       int
	stopped    bool // the topology is stopped: no callback may come
	sources    []*chaosSource
	crashes    []chaosCrash
	fired      []bool
	violations []string
	faults     map[string]int
}

func newChaosLedger(messages int, crashes []chaosCrash) *chaosLedger {
	l := &chaosLedger{attempts: make([]int, messages+1), acks: make([]int, messages+1),
		tokens: map[uint64]*chaosToken{}, crashes: crashes, fired: make([]bool, len(crashes)), faults: map[string]int{}}
	for m := 1; m <= messages; m++ {
		l.queue = append(l.queue, m)
	}
	return l
}

func (l *chaosLedger) violationLocked(format string, args ...any) {
	if len(l.violations) < 50 {
		l.violations = append(l.violations, fmt.Sprintf(format, args...))
	}
}

func (l *chaosLedger) fault(kind string) {
	l.mu.Lock()
	l.faults[kind]++
	l.mu.Unlock()
}

// crashDueLocked returns the crash planned for the next attempt, once.
func (l *chaosLedger) crashDueLocked() (chaosCrash, bool) {
	for i, c := range l.crashes {
		if !l.fired[i] && c.At == l.emissions+1 {
			l.fired[i] = true
			if c.Kind != faultBoltFail { // counted when the bolt fails
				l.faults[c.Kind]++
			}
			return c, true
		}
	}
	return chaosCrash{}, false
}

func (l *chaosLedger) doneCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

func (l *chaosLedger) setStopped(stopped bool) {
	l.mu.Lock()
	l.stopped = stopped
	l.mu.Unlock()
}

// outstanding counts ids handed out and not settled, over every source.
func (l *chaosLedger) outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, t := range l.tokens {
		if !t.settled {
			n++
		}
	}
	return n
}

// chaosSource is one spout task's source in one incarnation.
type chaosSource struct {
	l       *chaosLedger
	round   *chaosRound
	info    dsl.TaskInfo
	max     int
	open    map[uint64]bool // ids handed out by this source and not settled
	maxOpen int
}

func (s *chaosSource) Next() (uint64, ChaosHop, bool) {
	l := s.l
	l.mu.Lock()
	if len(l.queue) == 0 {
		l.mu.Unlock()
		return 0, ChaosHop{}, false
	}
	if c, ok := l.crashDueLocked(); ok {
		switch c.Kind {
		case faultSpoutPanic:
			l.mu.Unlock()
			panic(fmt.Sprintf("chaos: spout task %d crashes before attempt #%d", s.info.Task, c.At))
		case faultSpoutFail:
			s.info.Fail(fmt.Errorf("chaos: spout task %d fails at attempt #%d", s.info.Task, c.At))
		case faultBoltFail:
			s.round.boltCrash.Store(int32(c.Bolt))
		}
	}
	m := l.queue[0]
	l.queue = l.queue[1:]
	l.attempts[m]++
	l.emissions++
	l.lastToken++
	id := l.lastToken
	l.tokens[id] = &chaosToken{msg: m, attempt: l.attempts[m], source: s}
	s.open[id] = true
	if len(s.open) > s.max {
		l.violationLocked("spout task %d holds %d ids, over max pending %d", s.info.Task, len(s.open), s.max)
	}
	s.maxOpen = max(s.maxOpen, len(s.open))
	attempt := l.attempts[m]
	l.mu.Unlock()
	return id, ChaosHop{Key: strconv.Itoa(m % 13), Parts: []ChaosPart{{Msg: m, Attempt: attempt}}}, true
}

func (s *chaosSource) Ack(id uint64)  { s.settle(id, true) }
func (s *chaosSource) Nack(id uint64) { s.settle(id, false) }

func (s *chaosSource) settle(id uint64, acked bool) {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	what := "nack"
	if acked {
		what = "ack"
	}
	if l.stopped {
		l.violationLocked("%s of id %d after the topology stopped", what, id)
	}
	t, known := l.tokens[id]
	switch {
	case !known:
		l.violationLocked("%s of id %d, which no source handed out", what, id)
		return
	case t.source != s || !s.open[id]:
		l.violationLocked("%s of id %d (message %d attempt %d) on spout task %d, which does not hold it (settled before: %v)",
			what, id, t.msg, t.attempt, s.info.Task, t.settled)
		return
	}
	t.settled = true
	delete(s.open, id)
	if !acked {
		l.nacks++
		l.queue = append(l.queue, t.msg) // replay
		return
	}
	l.acks[t.msg]++
	if l.acks[t.msg] == 1 {
		l.done++
	} else {
		l.violationLocked("message %d acked %d times", t.msg, l.acks[t.msg])
	}
}

// chaosRound runs one seeded round and checks it.
type chaosRound struct {
	shape     chaosShape
	set       chaosSettings
	ledger    *chaosLedger
	topo      *dsl.Topology
	boltComp  []int // component index of each bolt
	boltCrash atomic.Int32
	stalls    atomic.Int64 // stalls left this round
	executed  atomic.Int64
	restarts  atomic.Int64
	logs      *chaosLogTail
	peakHeap  atomic.Uint64

	mu        sync.Mutex          // mu guards processed and seen
	processed []map[ChaosPart]int // by bolt: successful executions of each attempt
	seen      map[ChaosPart][]string
}

func newChaosRound(shape chaosShape, set chaosSettings) *chaosRound {
	r := &chaosRound{shape: shape, set: set, ledger: newChaosLedger(shape.Messages, shape.Crashes), logs: newChaosLogTail(40)}
	r.boltCrash.Store(-1)
	r.stalls.Store(int64(shape.Stalls))
	r.seen = map[ChaosPart][]string{}
	r.processed = make([]map[ChaosPart]int, len(shape.Bolts))
	for i := range r.processed {
		r.processed[i] = map[ChaosPart]int{}
	}
	return r
}

// build turns the shape into a topology.
func (r *chaosRound) build() (*dsl.Topology, error) {
	s := r.shape
	b := dsl.New(fmt.Sprintf("chaos-%d", s.Seed), dsl.Conf{
		dsl.AckerTasks: s.Ackers, dsl.MaxSpoutPending: s.MaxPending, dsl.ReceiveBufferSize: s.Ring,
		dsl.BatchSize: s.Batch, dsl.MessageTimeout: r.set.Timeout, dsl.SpoutWait: r.set.SpoutWait,
	})
	b.Streams(ChaosDirectHop{})
	ids := map[int]string{}
	ids[-1] = b.Spout("spout", dsl.ReliableFrom(r.newSource), dsl.Parallelism(s.SpoutPar))
	if s.Noise {
		ids[-2] = b.Spout("noise", dsl.UnreliableFrom(chaosNoise), dsl.Parallelism(2))
	}
	for i, bolt := range s.Bolts {
		conf := dsl.Conf{}
		if bolt.Ring > 0 {
			conf[dsl.ReceiveBufferSize] = bolt.Ring
		}
		if bolt.Batching {
			conf[dsl.TickFrequency] = r.set.Tick
		}
		spec := dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[chaosCarrier] { return r.newBolt(i, info) })
		if bolt.Shell {
			spec = multilang.Bolt(multilang.Command{Path: "python3", Args: []string{"-u", chaosShellScript(),
				strconv.FormatUint(s.Seed%1000003, 10), strconv.Itoa(s.ShellDeath)}, GracePeriod: time.Second})
		} else if bolt.Manual {
			spec = dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[chaosCarrier] { return chaosManual{r.newBolt(i, info)} })
		}
		ids[i] = b.Bolt(bolt.ID, spec, dsl.Parallelism(bolt.Par), dsl.WithConf(conf))
	}
	for i, bolt := range s.Bolts {
		for _, e := range bolt.Parents {
			g := chaosGrouping(e.Grouping)
			if e.Anchored {
				b.Anchored(ids[e.From], ids[i], g)
			} else {
				b.Unanchored(ids[e.From], ids[i], g)
			}
		}
	}
	topo, err := b.Build()
	if err != nil {
		return nil, err
	}
	r.topo = topo
	for _, bolt := range s.Bolts {
		r.boltComp = append(r.boltComp, topo.Component(bolt.ID).Index)
	}
	return topo, nil
}

// chaosShellScript is the shell bolt's child program.
func chaosShellScript() string {
	path, err := filepath.Abs(filepath.Join("testdata", "chaos", "shell_bolt.py"))
	if err != nil {
		panic(err)
	}
	return path
}

// chaosShellAvailable reports whether shell bolts can run here.
func chaosShellAvailable() bool {
	_, err := exec.LookPath("python3")
	return err == nil
}

func chaosGrouping(k string) dsl.Grouping {
	switch k {
	case "fields":
		return dsl.Fields(func(h ChaosHop) string { return h.Key }, "Key")
	case "all":
		return dsl.All[ChaosHop]()
	case "direct":
		return dsl.Direct[ChaosDirectHop]()
	case "global":
		return dsl.Global[ChaosHop]()
	}
	return dsl.Shuffle[ChaosHop]()
}

// chaosNoise is an unreliable spout task: 150 untracked tuples, then nothing.
func chaosNoise(info dsl.TaskInfo) func() (ChaosHop, bool) {
	n := 0
	return func() (ChaosHop, bool) {
		if n >= 150 {
			return ChaosHop{}, false
		}
		n++
		return ChaosHop{Key: fmt.Sprintf("noise-%d-%d", info.Index, n)}, true
	}
}

func (r *chaosRound) newSource(info dsl.TaskInfo) dsl.Source[uint64, ChaosHop] {
	s := &chaosSource{l: r.ledger, round: r, info: info, max: info.Settings.MaxSpoutPending, open: map[uint64]bool{}}
	r.ledger.mu.Lock()
	r.ledger.sources = append(r.ledger.sources, s)
	r.ledger.mu.Unlock()
	return s
}

// chaosBoltTask is one task of a chaos bolt, auto-ack or manual.
type chaosBoltTask struct {
	r    *chaosRound
	idx  int
	bolt chaosBolt
	info dsl.TaskInfo
	held *dsl.Tuple // a batching bolt's input waiting for a partner or a tick
	// children: non-direct ones get one Emit; each direct one an EmitDirect.
	grouped bool
	direct  [][]int // task ids of each direct child
}

func (r *chaosRound) newBolt(idx int, info dsl.TaskInfo) *chaosBoltTask {
	t := &chaosBoltTask{r: r, idx: idx, bolt: r.shape.Bolts[idx], info: info}
	for child, b := range r.shape.Bolts {
		for _, e := range b.Parents {
			if e.From != idx {
				continue
			}
			if e.Grouping == "direct" {
				t.direct = append(t.direct, r.topo.Components[r.boltComp[child]].Tasks)
			} else {
				t.grouped = true
			}
		}
	}
	return t
}

// decide returns the fault planned for this task and input, or "".
func (t *chaosBoltTask) decide(h ChaosHop) string {
	s := t.r.shape
	key := chaosMix(s.Seed, uint64(t.idx), uint64(t.info.Index), chaosHashString(h.Key))
	for _, p := range h.Parts {
		if p.Attempt > chaosFaultyAttempts {
			return ""
		}
		key = chaosMix(key, uint64(p.Msg), uint64(p.Attempt))
	}
	u := float64(key>>11) / (1 << 53)
	for _, f := range []struct {
		p    float64
		kind string
	}{{s.PPanic, faultPanic}, {s.PError, faultError}, {s.PStall, faultStall}, {s.PNeverAck, faultNeverAck}} {
		if f.kind == faultNeverAck && !t.bolt.Manual {
			continue
		}
		if u < f.p {
			return f.kind
		}
		u -= f.p
	}
	return ""
}

// misbehave applies the planned fault. It returns an error to return, and
// whether the input must be dropped without an ack.
func (t *chaosBoltTask) misbehave(h ChaosHop) (drop bool, err error) {
	if t.r.boltCrash.CompareAndSwap(int32(t.idx), -1) {
		t.r.ledger.fault(faultBoltFail)
		t.info.Fail(fmt.Errorf("chaos: bolt %s task %d fails", t.bolt.ID, t.info.Task))
	}
	kind := t.decide(h)
	if kind == faultStall && t.r.stalls.Add(-1) < 0 {
		kind = "" // out of stalls: each blocks its task past the timeout
	}
	t.r.mu.Lock()
	for _, p := range h.Parts {
		t.r.seen[p] = append(t.r.seen[p], fmt.Sprintf("%s#%d:%q", t.bolt.ID, t.info.Task, kind))
	}
	t.r.mu.Unlock()
	if kind == "" {
		return false, nil
	}
	t.r.ledger.fault(kind)
	switch kind {
	case faultPanic:
		panic(fmt.Sprintf("chaos: bolt %s panics on %+v", t.bolt.ID, h.Parts))
	case faultError:
		return false, fmt.Errorf("chaos: bolt %s fails %+v", t.bolt.ID, h.Parts)
	case faultStall:
		time.Sleep(t.r.set.Stall) // the fault itself: a task stuck past the message timeout
	case faultNeverAck:
		return true, nil
	}
	return false, nil
}

func (t *chaosBoltTask) record(parts []ChaosPart) {
	t.r.executed.Add(1)
	if len(parts) == 0 {
		return
	}
	t.r.mu.Lock()
	for _, p := range parts {
		t.r.processed[t.idx][p]++
	}
	t.r.mu.Unlock()
}

// Execute implements dsl.Handler: the auto-ack kind.
func (t *chaosBoltTask) Execute(in chaosCarrier, out dsl.Emitter) error {
	h := in.payload()
	if _, err := t.misbehave(h); err != nil {
		return err
	}
	t.record(h.Parts)
	if t.grouped {
		out.Emit(ChaosHop{Key: h.Key, Parts: h.Parts})
	}
	for _, tasks := range t.direct {
		out.EmitDirect(tasks[chaosHashString(h.Key)%uint64(len(tasks))], ChaosDirectHop{Key: h.Key, Parts: h.Parts})
	}
	return nil
}

// manualExecute is the manual kind (see chaosManual): it may drop its input
// without an ack, and a batching bolt holds one input until the next or a tick.
func (t *chaosBoltTask) manualExecute(in chaosCarrier, input dsl.Tuple, c dsl.Collector) error {
	h := in.payload()
	drop, err := t.misbehave(h)
	if err != nil || drop {
		return err
	}
	if !t.bolt.Batching {
		t.forward(c, []dsl.Tuple{input}, h.Key, h.Parts)
		return nil
	}
	if t.held == nil {
		t.held = &input
		return nil
	}
	held := *t.held
	t.held = nil
	parts := append(append([]ChaosPart(nil), held.Value.(chaosCarrier).payload().Parts...), h.Parts...)
	t.forward(c, []dsl.Tuple{held, input}, h.Key, parts)
	return nil
}

// forward records, emits anchored to inputs, then acks them.
func (t *chaosBoltTask) forward(c dsl.Collector, inputs []dsl.Tuple, key string, parts []ChaosPart) {
	t.record(parts)
	if t.grouped {
		c.EmitAnchored(inputs, ChaosHop{Key: key, Parts: parts})
	}
	for _, tasks := range t.direct {
		task := tasks[chaosHashString(key)%uint64(len(tasks))]
		c.EmitDirectAnchored(task, inputs, ChaosDirectHop{Key: key, Parts: parts})
	}
	for _, in := range inputs {
		c.Ack(in)
	}
}

// Tick flushes a batching bolt's held input.
func (t *chaosBoltTask) Tick(_ dsl.Tick, c dsl.Collector) error {
	if t.held != nil {
		held := *t.held
		t.held = nil
		h := held.Value.(chaosCarrier).payload()
		t.forward(c, []dsl.Tuple{held}, h.Key, h.Parts)
	}
	return nil
}

// chaosManual adapts a chaosBoltTask to dsl.ManualHandler (Execute's signature
// differs from the auto-ack one).
type chaosManual struct{ *chaosBoltTask }

func (m chaosManual) Execute(in chaosCarrier, input dsl.Tuple, c dsl.Collector) error {
	return m.manualExecute(in, input, c)
}

func chaosMix(vals ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range vals {
		h ^= v
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// chaosHashString is FNV-1a, the hash fields groupings use for strings.
func chaosHashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// run runs the round to completion and returns its figures and every broken
// invariant. It stops what it starts, also on failure.
func (r *chaosRound) run(ctx context.Context) (chaosFigures, []string) {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if _, err := r.build(); err != nil {
		return chaosFigures{}, []string{fmt.Sprintf("the generated topology does not build: %v", err)}
	}
	fig := chaosFigures{Rounds: 1}
	heapBefore := chaosLiveHeap()
	targets := []int{r.shape.Messages}
	if r.shape.StopMidway {
		targets = []int{r.shape.Messages / 2, r.shape.Messages}
	}
	for _, target := range targets {
		fig.Runs++
		if !r.runUntil(ctx, target, fail) {
			break
		}
	}
	r.collect(&fig, fail)
	runtime.GC()
	if after := chaosLiveHeap(); after > heapBefore+chaosHeapSlack {
		fail("live heap grew from %.1f MiB to %.1f MiB over the round", float64(heapBefore)/(1<<20), float64(after)/(1<<20))
	}
	if kids := chaosChildren(); len(kids) > 0 {
		fail("child processes outlived the topology: %v", kids)
	}
	return fig, problems
}

// chaosHeapSlack bounds how much the live heap may grow over a round, and
// chaosHeapPeak the heap at any moment.
const (
	chaosHeapSlack = 64 << 20
	chaosHeapPeak  = 1 << 30
)

// chaosTasks summarises each task's counters and mailbox.
func chaosTasks(st supervision.Stats) string {
	var b strings.Builder
	for _, t := range st.Tasks {
		fmt.Fprintf(&b, "\n  %s#%d emitted=%d transferred=%d executed=%d acked=%d failed=%d pending=%d mailbox=%d sent-to=%v",
			t.Component, t.Task, t.Emitted, t.Transferred, t.Executed, t.Acked, t.Failed, t.Pending, t.MailboxDepth, t.SentTo)
	}
	return b.String()
}

// chaosDump writes tasks and every goroutine's stack to a temporary file, to
// tell a deadlock from a replay storm, and returns its name.
func chaosDump(tasks string) string {
	f, err := os.CreateTemp("", "chaos-stuck-*.txt")
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	fmt.Fprintf(f, "tasks:%s\n\n", tasks)
	_ = pprof.Lookup("goroutine").WriteTo(f, 2)
	return f.Name()
}

// chaosStallLimit is how long a round may go without fully processing a
// message before it counts as stuck (a deadlock, or a replay storm).
var chaosStallLimit = Scaled(20 * time.Second)

// runUntil runs the topology until target messages are done, then stops it and
// checks that nothing is left open and no callback follows. It runs it with
// sheltertest.Start, whose cleanup, at the end of the spec, also fails it if a
// goroutine, fd or child process of the round outlived it.
func (r *chaosRound) runUntil(ctx context.Context, target int, fail func(string, ...any)) bool {
	r.ledger.setStopped(false)
	run := sheltertest.Start(ginkgo.GinkgoTB(), r.topo,
		supervision.WithLogger(r.logs.logger()),
		Restarts(time.Millisecond, 8*time.Millisecond, 1000),
		supervision.WithEvents(func(e supervision.Event) {
			switch {
			case e.Kind == supervision.Restarting:
				r.restarts.Add(1)
			case e.Kind == supervision.Failed && errors.Is(e.Err, multilang.ErrChildFailed):
				r.ledger.fault(faultShellDie)
			}
		}))
	ok := true
	done, progress := r.ledger.doneCount(), time.Now()
	for done < target {
		r.sampleHeap()
		if now := r.ledger.doneCount(); now > done {
			done, progress = now, time.Now()
		}
		if time.Since(progress) > chaosStallLimit {
			tasks := chaosTasks(run.Stats())
			fail("stuck: no message fully processed for %v, %d of %d done (%s); task counters and goroutines in %s",
				chaosStallLimit, done, target, r.stuck(), chaosDump(tasks))
			ok = false
			break
		}
		select {
		case <-run.Done():
			fail("the topology went down: %v", run.Wait())
			return false
		case <-ctx.Done(): // the spec's timeout or an interrupt
			fail("%d of %d done when the spec ended: %v", done, target, context.Cause(ctx))
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	stopCtx, cancel := context.WithTimeout(ctx, Scaled(20*time.Second))
	defer cancel()
	if err := run.Stop(stopCtx); err != nil {
		fail("stopping: %v", err)
		return false
	}
	if err := run.Wait(); err != nil {
		fail("Wait after Stop: %v", err)
	}
	r.ledger.setStopped(true)
	if n := r.ledger.outstanding(); n > 0 {
		fail("%d ids handed out were neither acked nor nacked when Stop returned", n)
	}
	return ok
}

func (r *chaosRound) sampleHeap() {
	h := chaosHeapNow()
	for {
		old := r.peakHeap.Load()
		if h <= old || r.peakHeap.CompareAndSwap(old, h) {
			return
		}
	}
}

// stuck describes the messages not yet done, for a failure message.
func (r *chaosRound) stuck() string {
	l := r.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	var open []string
	for m := 1; m < len(l.acks) && len(open) < 10; m++ {
		if l.acks[m] == 0 {
			open = append(open, fmt.Sprintf("%d(attempts=%d)", m, l.attempts[m]))
		}
	}
	unsettled := 0
	for _, t := range l.tokens {
		if !t.settled {
			unsettled++
		}
	}
	var first strings.Builder // what the bolts did with the first open message
	for m := 1; m < len(l.acks); m++ {
		if l.acks[m] == 0 {
			r.mu.Lock()
			for a := 1; a <= l.attempts[m]; a++ {
				fmt.Fprintf(&first, "; message %d attempt %d: %v", m, a, r.seen[ChaosPart{Msg: m, Attempt: a}])
			}
			r.mu.Unlock()
			break
		}
	}
	return fmt.Sprintf("queue=%d unsettled-ids=%d not done: %s%s", len(l.queue), unsettled, strings.Join(open, " "), first.String())
}

// collect checks the ledger and the processing record and fills fig.
func (r *chaosRound) collect(fig *chaosFigures, fail func(string, ...any)) {
	l := r.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.violations {
		fail("%s", v)
	}
	fig.Emissions, fig.Nacks, fig.Messages = l.emissions, l.nacks, l.done
	fig.Faults = map[string]int{}
	for k, v := range l.faults {
		fig.Faults[k] = v
	}
	for m := 1; m < len(l.acks); m++ {
		fig.Acks += l.acks[m]
		switch {
		case l.acks[m] == 0:
			fig.Lost++
		case l.acks[m] > 1:
			fig.Duplicates++
		}
	}
	for id, t := range l.tokens {
		if !t.settled {
			fail("id %d (message %d attempt %d) never got an ack or a nack", id, t.msg, t.attempt)
		}
	}
	for _, s := range l.sources {
		fig.MaxPending = max(fig.MaxPending, s.maxOpen)
	}
	fig.Executed = r.executed.Load()
	fig.Restarts = int(r.restarts.Load())
	fig.PeakHeap = r.peakHeap.Load()
	if fig.PeakHeap > chaosHeapPeak {
		fail("heap peaked at %.1f MiB", float64(fig.PeakHeap)/(1<<20))
	}
	if fig.Lost > 0 {
		fail("%d messages were never fully processed", fig.Lost)
	}
	r.checkProcessedLocked(fail)
}

// checkProcessedLocked: an acked attempt passed every bolt its tree covers.
func (r *chaosRound) checkProcessedLocked(fail func(string, ...any)) {
	l := r.ledger
	r.mu.Lock()
	defer r.mu.Unlock()
	required := r.shape.required()
	missing := 0
	for _, t := range l.tokens {
		if !t.settled || l.acks[t.msg] == 0 {
			continue
		}
		// The acked attempt is the last one handed out: a message is replayed
		// only after a nack, and never again after its ack.
		if t.attempt != l.attempts[t.msg] {
			continue
		}
		for _, b := range required {
			if r.processed[b][ChaosPart{Msg: t.msg, Attempt: t.attempt}] == 0 {
				if missing < 10 {
					p := ChaosPart{Msg: t.msg, Attempt: t.attempt}
					fail("message %d attempt %d was acked but bolt %s never processed it; seen: %v", t.msg, t.attempt, r.shape.Bolts[b].ID, r.seen[p])
				}
				missing++
			}
		}
	}
}
