package sheltertest

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// Source is a reliable source that records what happens to every message it
// hands out. Messages get ids 1, 2, ... in the order Next takes them; a
// replayed message keeps its id. It is safe for concurrent use, so one Source
// may feed a spout of any parallelism.
//
// Next hands out, in this order: messages due again (see [Replay]), the
// queue ([NewSource], [Source.Push]), then a generator's values
// ([Generate]). A nacked message is not handed out again unless the source
// replays it.
type Source[T any] struct {
	mu      sync.Mutex    // mu guards every field below
	changed chan struct{} // closed and replaced at every change: waits wake up
	version uint64        // counts changes, so WaitIdle can tell a still state

	opts    sourceOptions
	queue   []T         // values not yet given an id
	gen     func(int) T // Generate's function, nil for none
	genLeft int         // values gen may still make; negative: no end
	genNext int         // gen's next index
	ready   []int       // ids to hand out before anything new: replays, and messages whose Next did not return

	msgs        map[int]*message[T]
	last        int // the highest id given so far
	taking      int // Next calls that took a message and have not returned it
	outstanding int // messages handed out and not settled
	maxOut      int // the most outstanding of one task once a Next of it handed one out
	handouts    []Handout[T]
	outcomes    []Outcome[T]
	unknown     map[int]int // outcomes for ids never handed out
	late        []string    // calls the runtime should not have made, in order
	closed      bool

	outByTask map[int]int                       // outstanding, by the task that handed them out
	posts     map[int]func(func(dsl.Collector)) // each spout task's TaskInfo.Post, for Clock.Quiet
}

// message is one id's record.
type message[T any] struct {
	value    T
	handouts int  // times handed out
	outcomes int  // acks and nacks received
	out      bool // handed out and not settled
	task     int  // the task it was last handed out by
}

// Outcome is what happened to one message: acked, or nacked (failed or timed
// out), and when (wall clock).
type Outcome[T any] struct {
	ID    int
	Value T
	Acked bool
	At    time.Time
}

// Handout is one message handed out by a Next call.
type Handout[T any] struct {
	ID    int
	Value T
	Task  int // the spout task that called Next
	// Attempt is 1 the first time the message is handed out, 2 at its
	// first replay, and so on.
	Attempt int
	// Outstanding counts the messages Task handed out and not settled once
	// this one was, itself included: with max spout pending p it is at most
	// p, whatever the spout's parallelism ([Source.MaxOutstanding] is its
	// highest value).
	Outstanding int
	At          time.Time // wall clock
}

// NewSource returns a source holding values, in order. Give it options with
// [Source.With].
func NewSource[T any](values ...T) *Source[T] {
	return &Source[T]{queue: values, changed: make(chan struct{}), msgs: map[int]*message[T]{}, unknown: map[int]int{},
		outByTask: map[int]int{}, posts: map[int]func(func(dsl.Collector)){}}
}

// Generate returns a source of n values, value(0) to value(n-1), made as
// they are handed out; n < 0 makes them without end (WaitSettled and WaitIdle
// then never see it settled). value is called with the source's lock held,
// one call at a time: it must not call the source's methods.
func Generate[T any](n int, value func(i int) T, opts ...SourceOption) *Source[T] {
	s := NewSource[T]()
	s.gen, s.genLeft = value, n
	return s.With(opts...)
}

// With applies opts to s and returns s. Call it before s feeds a topology.
func (s *Source[T]) With(opts ...SourceOption) *Source[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

// Push adds values at the end of the queue, before a generator's values.
func (s *Source[T]) Push(values ...T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, values...)
	s.touchLocked()
}

// Spout returns a reliable spout over the source, shared by its tasks.
// [WaitIdle] finds the source through it.
func (s *Source[T]) Spout() *dsl.SpoutSpec {
	spec := dsl.ReliableFrom(s.feed)
	spec.Impl = s
	return spec
}

// SpoutPerTask returns a reliable spout whose task of index i is fed by
// sources[i] alone, as each partition of a topic feeds one consumer: give the
// spout dsl.Parallelism(len(sources)); a task with no source fails, naming
// the spout. Each source records its task's handouts and outcomes, so a test
// reads and verifies them task by task. [WaitIdle] and [Clock.Quiet] see
// every one of them.
func SpoutPerTask[T any](sources ...*Source[T]) *dsl.SpoutSpec {
	spec := dsl.ReliableFrom(func(info dsl.TaskInfo) *feed[T] {
		if info.Index >= len(sources) {
			panic(fmt.Errorf("sheltertest: spout %q: task %d (index %d of %d) has no source: SpoutPerTask was given %d",
				info.Component, info.Task, info.Index, info.Parallelism, len(sources)))
		}
		return sources[info.Index].feed(info)
	})
	group := make(sourceGroup, len(sources))
	for i, src := range sources {
		group[i] = src
	}
	spec.Impl = group
	return spec
}

// feed makes the source's feed for one spout task.
func (s *Source[T]) feed(info dsl.TaskInfo) *feed[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if info.Post != nil {
		s.posts[info.Task] = info.Post // this incarnation's, replacing a previous one's
	}
	return &feed[T]{s: s, task: info.Task, fail: info.Fail}
}

// postsOf returns the Post of every task the source feeds.
func (s *Source[T]) postsOf() []func(func(dsl.Collector)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]func(func(dsl.Collector)), 0, len(s.posts))
	for _, task := range sortedKeys(s.posts) {
		out = append(out, s.posts[task])
	}
	return out
}

// Close tells the source its topology has stopped: from then on Next hands
// out nothing, and every Next, Ack or Nack is a call after the stop, which
// Verify reports.
func (s *Source[T]) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.touchLocked()
}

// touchLocked records a change and wakes every wait.
func (s *Source[T]) touchLocked() {
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
}

// take picks the message a Next hands out and reserves it: it is neither
// handed out nor free until commit or withdraw.
func (s *Source[T]) take(f *feed[T]) (id int, v T, hook func(int) error, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		s.lateLocked(fmt.Sprintf("Next of task %d after Close", f.task))
		return 0, v, nil, false
	case f.state == deactivated:
		s.lateLocked(fmt.Sprintf("Next of task %d after its deactivation", f.task))
		return 0, v, nil, false
	case len(s.ready) > 0:
		id, s.ready = s.ready[0], s.ready[1:]
	case len(s.queue) > 0:
		id = s.newLocked(s.queue[0])
		s.queue = s.queue[1:]
	case s.gen != nil && s.genLeft != 0:
		id = s.newLocked(s.gen(s.genNext))
		s.genNext++
		if s.genLeft > 0 {
			s.genLeft--
		}
	default:
		return 0, v, nil, false
	}
	s.taking++
	s.touchLocked()
	return id, s.msgs[id].value, s.opts.onNext, true
}

// newLocked gives v the next id.
func (s *Source[T]) newLocked(v T) int {
	s.last++
	s.msgs[s.last] = &message[T]{value: v}
	return s.last
}

// commit hands out the message id that task took.
func (s *Source[T]) commit(task, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgs[id]
	m.handouts++
	m.out = true
	m.task = task
	s.outstanding++
	s.outByTask[task]++
	s.maxOut = max(s.maxOut, s.outByTask[task])
	s.taking--
	s.handouts = append(s.handouts, Handout[T]{ID: id, Value: m.value, Task: task, Attempt: m.handouts, Outstanding: s.outByTask[task], At: time.Now()})
	s.touchLocked()
}

// withdraw puts back the message id, taken by a Next that did not return it:
// it is the next one handed out, with the same id.
func (s *Source[T]) withdraw(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = append([]int{id}, s.ready...)
	s.taking--
	s.touchLocked()
}

// settle records an Ack or a Nack of id from task and returns the hook to
// run for it.
func (s *Source[T]) settle(task, id int, acked bool) func(int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hook := s.opts.onNack
	if acked {
		hook = s.opts.onAck
	}
	if s.closed {
		s.lateLocked(fmt.Sprintf("%s of message %d after Close", verb(acked), id))
		return hook
	}
	m := s.msgs[id]
	var v T
	if m != nil {
		v = m.value
	}
	s.outcomes = append(s.outcomes, Outcome[T]{ID: id, Value: v, Acked: acked, At: time.Now()})
	switch {
	case m == nil || m.handouts == 0:
		s.unknown[id]++
	case !m.out: // a second outcome: Verify counts it
		m.outcomes++
	default:
		m.outcomes++
		m.out = false
		s.outstanding--
		s.outByTask[m.task]--
		if !acked && s.opts.replays != 0 && (s.opts.replays < 0 || m.handouts <= s.opts.replays) {
			s.ready = append(s.ready, id)
		}
	}
	s.touchLocked()
	return hook
}

func (s *Source[T]) lateLocked(call string) {
	s.late = append(s.late, call)
	s.touchLocked()
}

func verb(acked bool) string {
	if acked {
		return "Ack"
	}
	return "Nack"
}

// feed is the source as one spout task sees it.
type feed[T any] struct {
	s     *Source[T]
	task  int
	fail  func(error)
	state feedState // touched only on the task's goroutine
}

// feedState is where a feed's task is in its life, as far as the feed heard.
type feedState int

const (
	fresh feedState = iota // driven by hand, or not activated yet
	active
	deactivated
)

// Next hands out a message. When the OnNext hook panics, blocks until the
// task dies or returns an error, the message is not handed out: it stays
// first in line.
func (f *feed[T]) Next() (int, T, bool) {
	id, v, hook, ok := f.s.take(f)
	if !ok {
		return 0, v, false
	}
	handed := false
	defer func() {
		if !handed {
			f.s.withdraw(id)
		}
	}()
	if hook != nil {
		if err := hook(id); err != nil {
			f.fail(fmt.Errorf("sheltertest: Next of message %d: %w", id, err))
			var zero T
			return 0, zero, false
		}
	}
	f.s.commit(f.task, id)
	handed = true
	return id, v, true
}

func (f *feed[T]) Ack(id int)  { f.settle(id, true) }
func (f *feed[T]) Nack(id int) { f.settle(id, false) }

// settle records the outcome, then runs its hook: the runtime's call counts
// even if the hook panics, blocks or fails.
func (f *feed[T]) settle(id int, acked bool) {
	hook := f.s.settle(f.task, id, acked)
	if hook == nil {
		return
	}
	if err := hook(id); err != nil {
		f.fail(fmt.Errorf("sheltertest: %s of message %d: %w", verb(acked), id, err))
	}
}

// Activate and Deactivate are the runtime telling the feed its task's state
// (dsl.ReliableFrom): a Next while deactivated is a call Verify reports.
func (f *feed[T]) Activate()   { f.state = active }
func (f *feed[T]) Deactivate() { f.state = deactivated }

// Outcomes returns every outcome so far, in the order they happened.
func (s *Source[T]) Outcomes() []Outcome[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Outcome[T](nil), s.outcomes...)
}

// Acked returns the ids of the acks so far, in order, one entry per ack.
func (s *Source[T]) Acked() []int { return s.ids(true) }

// Nacked returns the ids of the nacks so far, in order, one entry per nack:
// a message nacked and replayed twice shows twice.
func (s *Source[T]) Nacked() []int { return s.ids(false) }

func (s *Source[T]) ids(acked bool) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := []int{}
	for _, o := range s.outcomes {
		if o.Acked == acked {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// Handouts returns every message handed out so far, in the order Next handed
// them out, replays included.
func (s *Source[T]) Handouts() []Handout[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Handout[T](nil), s.handouts...)
}

// MaxOutstanding returns the most messages one spout task had handed out and
// not settled at once, counted as each of its Next calls returned: what max
// spout pending bounds, per task. A message counts for the task that handed
// it out until its outcome; with max spout pending p it is at most p whatever
// the spout's parallelism.
func (s *Source[T]) MaxOutstanding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxOut
}

// Verify checks exactly-once: every message handed out got exactly one
// outcome per handout, no outcome names an id the source never handed out,
// and no call came after [Source.Close] or from a deactivated task. A source
// that handed out nothing fails too: its test checked nothing. The error
// lists every violation.
func (s *Source[T]) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var problems []string
	if len(s.handouts) == 0 {
		problems = append(problems, "no message was handed out")
	}
	for id := 1; id <= s.last; id++ {
		m := s.msgs[id]
		switch {
		case m.out:
			problems = append(problems, fmt.Sprintf("message %d has no outcome", id))
		case m.outcomes > m.handouts && m.handouts == 1:
			problems = append(problems, fmt.Sprintf("message %d has %d outcomes", id, m.outcomes))
		case m.outcomes > m.handouts && m.handouts > 1:
			problems = append(problems, fmt.Sprintf("message %d has %d outcomes for %d handouts", id, m.outcomes, m.handouts))
		}
	}
	for _, id := range sortedKeys(s.unknown) {
		problems = append(problems, fmt.Sprintf("outcome for message %d, which was never handed out", id))
	}
	problems = append(problems, s.late...)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("sheltertest: %s", strings.Join(problems, "; "))
}

// VerifyOutcomes checks what [Source.Verify] checks and, besides, that the
// messages acked are exactly the ids in acked and those nacked exactly the
// ids in nacked, in any order: an id missing from its set, or one in a set it
// does not belong to, is reported by id. A message nacked, replayed (see
// [Replay]) and then acked belongs to both sets. The error lists every
// violation.
func (s *Source[T]) VerifyOutcomes(acked, nacked []int) error {
	var problems []string
	if err := s.Verify(); err != nil {
		problems = append(problems, strings.TrimPrefix(err.Error(), "sheltertest: "))
	}
	problems = append(problems, compareIDs("acked", s.Acked(), acked)...)
	problems = append(problems, compareIDs("nacked", s.Nacked(), nacked)...)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("sheltertest: %s", strings.Join(problems, "; "))
}

// compareIDs reports the ids of got that want lacks and those of want that
// got lacks, as sets.
func compareIDs(what string, got, want []int) []string {
	gotSet, wantSet := map[int]bool{}, map[int]bool{}
	for _, id := range got {
		gotSet[id] = true
	}
	for _, id := range want {
		wantSet[id] = true
	}
	var extra, missing []int
	for _, id := range sortedKeys(gotSet) {
		if !wantSet[id] {
			extra = append(extra, id)
		}
	}
	for _, id := range sortedKeys(wantSet) {
		if !gotSet[id] {
			missing = append(missing, id)
		}
	}
	var problems []string
	if len(extra) > 0 {
		problems = append(problems, fmt.Sprintf("%s %v, which should not be", what, extra))
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("not %s %v, which should be", what, missing))
	}
	return problems
}
