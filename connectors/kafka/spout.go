package kafka

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Spout defines a spout that consumes topics as a member of a consumer group
// (or, in a topology with state, by offset as part of the checkpoints) and
// emits each record as a [Record]. See [SpoutOf].
func Spout(seeds []string, group string, topics []string, opts ...Option) *dsl.SpoutSpec {
	return SpoutOf(func(r Record) Record { return r }, seeds, group, topics, opts...)
}

// SpoutOf defines a spout that consumes topics as a member of a consumer
// group, from the brokers at seeds, and emits translate(record) for each
// record (Storm's RecordTranslator). Each task of the spout is a member of the
// group with a client of its own, so the group spreads the partitions over
// the tasks; in a topology with state the tasks read the partitions
// goshelter assigns them, by offset, as part of the checkpoints (see "Exactly
// once" in the package doc). translate runs on the task's goroutine and must
// not block; a panic in it fails that record, which is retried as a record a
// bolt failed (logged at error level, never left open), or dropped under
// [AtMostOnce] and [NoGuarantee].
//
// While records flow, a task whose client ran out of fetched records waits
// for the next fetch, up to the topology's spout wait and at most 200 ms
// (Storm's poll timeout), rather than handing back to the runtime, which
// would sleep the whole spout wait however soon the fetch arrives; its acks
// wait meanwhile. Once such a wait finds nothing, the task backs off as any
// spout does until records come again.
//
// SpoutOf panics with an error naming the culprit when an argument or an
// option is invalid (no seed, no group, no topic, a bound that is not
// positive): the definition is wrong, not the run.
func SpoutOf[T any](translate func(Record) T, seeds []string, group string, topics []string, opts ...Option) *dsl.SpoutSpec {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkSpout(translate != nil, seeds, group, topics, &cfg); err != nil {
		panic(err)
	}
	seen := &firstSeen{m: map[key]bool{}}
	sh := newShared()
	newSource := func(info dsl.TaskInfo) *spout[T] {
		s, err := newSpout(info, cfg, translate, seeds, group, topics, seen, sh)
		if err != nil {
			info.Fail(err)
		}
		return s
	}
	if cfg.guarantee == AtLeastOnce {
		// The constructor's result is the concrete type, so that Build sees
		// the Position and Rewind hooks (the runtime calls them only when
		// the task is checkpointed).
		return dsl.ReliableFrom[msgID, T](newSource)
	}
	return dsl.UnreliableFrom(func(info dsl.TaskInfo) func() (T, bool) {
		s := newSource(info)
		return func() (T, bool) { _, t, ok := s.Next(); return t, ok }
	})
}

func checkSpout(translate bool, seeds []string, group string, topics []string, cfg *config) error {
	switch {
	case !translate:
		return errors.New("kafka: spout: the translate function is nil")
	case len(seeds) == 0:
		return errors.New("kafka: spout: no seed broker")
	case group == "":
		return errors.New("kafka: spout: empty consumer group")
	case len(topics) == 0:
		return fmt.Errorf("kafka: spout of group %q: no topic", group)
	}
	return cfg.validate(fmt.Sprintf("spout of group %q", group))
}

// msgID is a tracked record: its partition's account, compared by pointer so
// that a record of a partition revoked and assigned again is told apart, and
// its offset.
type msgID struct {
	p      *partition
	offset int64
}

// queued is a record taken from the client and not emitted yet.
type queued struct {
	p   *partition
	rec *kgo.Record
}

// spout is one task's consumer. Next, Ack and Nack run on the task's
// goroutine; the client's rebalance callbacks and commit results run on the
// client's goroutines, and the close on the one that ends the task's context:
// mu serialises them. Nothing that waits for the client (a commit, a close)
// is called with mu held, since the client may be waiting for a callback
// that needs mu.
type spout[T any] struct {
	cfg       config
	translate func(Record) T
	log       *zap.Logger
	metric    func(string, any)
	cl        *kgo.Client // nil if it could not be created (the task failed)
	life      context.Context
	endLife   context.CancelFunc
	// due is set by tick when a commit period is over: Next and Ack read it
	// instead of the clock, which costs more than the rest of an Ack.
	due  atomic.Bool
	tick *time.Timer

	// wait is how long Next waits for the client while records are flowing
	// (see await): the task's spout wait, which it would otherwise sleep, at
	// most maxAwait.
	wait time.Duration

	mu    sync.Mutex // mu guards every field below
	parts map[key]*partition
	// epoch counts the rebalances that took partitions away; goneAt is the
	// epoch at which each partition was last forgotten. A poll made without
	// mu drops the records of partitions forgotten while it waited.
	epoch  uint64
	goneAt map[key]uint64
	// flowing is set when the last poll took records and cleared when a
	// wait for more found none.
	flowing    bool
	queue      []queued
	retries    retryHeap
	committing bool
	open       int // tracked records emitted and not acked or nacked yet
	stopping   bool
	closed     bool
	gaveUp     int64

	// The positioned mode (positioned.go), for a task checkpointed in a
	// topology with state.
	positioned bool
	shared     *shared
	// taskCtx is the task's context: a Nack that comes once it is over is
	// the abandon of an incarnation's open records, not a failure.
	taskCtx context.Context
	// global is this task's index among the tasks of every process reading
	// the topics, tasks their number (see WithProcessShare).
	global, tasks int
	index         int
	group         string
	topics        []string
	adm           *kadm.Client
	loop          sync.WaitGroup // the task's loop (discovery, lag commits)
	looping       bool           // the loop was started (task goroutine only)
	// Guarded by mu: the rewind's offsets, the partitions held for a
	// retry's back-off, the records given up and not reported yet.
	start   map[key]int64
	holds   int
	reports []*kgo.Record
}

func newSpout[T any](info dsl.TaskInfo, cfg config, translate func(Record) T, seeds []string, group string, topics []string, seen *firstSeen, sh *shared) (*spout[T], error) {
	s := &spout[T]{
		cfg: cfg, translate: translate, log: info.Logger, metric: info.Metric,
		parts: map[key]*partition{}, goneAt: map[key]uint64{}, wait: min(info.Settings.SpoutWait, maxAwait),
		positioned: info.Checkpointed && cfg.guarantee == AtLeastOnce, shared: sh, taskCtx: info.Context(),
		global: cfg.share.index*info.Parallelism + info.Index, tasks: cfg.share.count * info.Parallelism,
		index: info.Index, group: group, topics: topics,
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.metric == nil {
		s.metric = func(string, any) {}
	}
	s.life, s.endLife = context.WithCancel(context.Background())
	if s.positioned {
		return s, s.openPositioned(info, seeds)
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(cfg.firstPoll.reset()),
		kgo.OnPartitionsRevoked(s.revoked), kgo.OnPartitionsLost(s.lost),
	}
	if cfg.firstPoll == Earliest || cfg.firstPoll == Latest {
		opts = append(opts, kgo.AdjustFetchOffsetsFn(seen.adjust(cfg.firstPoll.reset())))
	}
	cl, err := kgo.NewClient(append(opts, cfg.client...)...)
	if err != nil {
		s.endLife()
		s.closed = true
		return s, fmt.Errorf("kafka: creating the client of group %q: %w", group, err)
	}
	s.cl = cl
	s.tick = time.AfterFunc(cfg.commitPeriod, func() { s.due.Store(true) })
	context.AfterFunc(info.Context(), s.stop)
	return s, nil
}

func (f FirstPoll) reset() kgo.Offset {
	if f == Latest || f == UncommittedLatest {
		return kgo.NewOffset().AtEnd()
	}
	return kgo.NewOffset().AtStart()
}

// firstSeen is the partitions a spout definition has been assigned: Earliest
// and Latest ignore the committed offset of the others.
type firstSeen struct {
	mu sync.Mutex // mu guards m
	m  map[key]bool
}

func (f *firstSeen) adjust(start kgo.Offset) func(context.Context, map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	return func(_ context.Context, m map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for t, ps := range m {
			for p := range ps {
				if k := (key{t, p}); !f.m[k] {
					f.m[k] = true
					ps[p] = start
				}
			}
		}
		return m, nil
	}
}

// Next emits a due retry, else the next record taken from the client, else
// takes what the client has buffered (it never waits for the broker).
func (s *spout[T]) Next() (msgID, T, bool) {
	var zero T
	if s.cl == nil {
		return msgID{}, zero, false
	}
	if s.positioned && !s.looping {
		s.startLoop()
	}
	for {
		q, ok := s.take()
		if !ok {
			return msgID{}, zero, false
		}
		t, err := s.translateSafe(q.rec)
		if err == nil {
			if s.positioned {
				q.p.emitted = q.rec.Offset + 1
			}
			return msgID{q.p, q.rec.Offset}, t, true
		}
		s.translateFailed(q, err)
	}
}

// take returns the next record to emit, polling the client if need be.
func (s *spout[T]) take() (queued, bool) {
	s.mu.Lock()
	req := s.commitDueLocked()
	q, ok := s.nextLocked()
	wait := !ok && s.flowing && s.wait > 0 && s.cfg.guarantee != AtMostOnce
	reports := s.reports
	s.reports = nil
	s.mu.Unlock()
	for _, r := range reports {
		s.reportGiveUp(r, s.shared.gaveUpOne(s.index))
	}
	s.commit(req)
	if wait {
		q, ok = s.await()
	}
	if !ok && s.cfg.guarantee == AtMostOnce {
		q, ok = s.pollAtMostOnce()
	}
	return q, ok
}

// translateSafe calls translate, turning its panic into an error: a record
// whose translation panicked is failed, never left open.
func (s *spout[T]) translateSafe(r *kgo.Record) (t T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kafka: translating the record at %s[%d] offset %d panicked: %v", r.Topic, r.Partition, r.Offset, p)
		}
	}()
	return s.translate(fromKgo(r)), nil
}

// translateFailed fails a record whose translation panicked: at least once,
// it is retried after its back-off (or given up) as if a bolt had failed it;
// in the positioned mode the same, without a rollback (nothing downstream
// saw it); at most once, it is dropped.
func (s *spout[T]) translateFailed(q queued, err error) {
	s.log.Error("kafka: translate panicked; failing the record", zap.String("topic", q.rec.Topic),
		zap.Int32("partition", q.rec.Partition), zap.Int64("offset", q.rec.Offset), zap.Error(err))
	switch {
	case s.positioned:
		s.translateFailedPositioned(q)
	case s.cfg.guarantee == AtLeastOnce:
		s.Nack(msgID{q.p, q.rec.Offset})
	}
}

func (s *spout[T]) nextLocked() (queued, bool) {
	if s.positioned {
		return s.nextPositionedLocked()
	}
	if len(s.retries) > 0 {
		now := time.Now()
		for len(s.retries) > 0 && !s.retries[0].due.After(now) {
			r := heap.Pop(&s.retries).(retry)
			if e := r.p.find(r.offset); !r.p.gone && e != nil && !e.done {
				s.open++
				return queued{r.p, e.rec}, true
			}
		}
	}
	for {
		for len(s.queue) > 0 {
			q := s.queue[0]
			s.queue[0] = queued{}
			s.queue = s.queue[1:]
			if !q.p.gone {
				if s.cfg.guarantee == AtLeastOnce {
					s.open++
				}
				return q, true
			}
		}
		if s.cfg.guarantee == AtMostOnce || s.pollLocked() == 0 {
			return queued{}, false
		}
	}
}

// maxAwait bounds await: Storm's KafkaSpout polls with this timeout
// (pollTimeoutMs, 200 ms by default).
const maxAwait = 200 * time.Millisecond

// await waits up to s.wait for the client to have records, when records were
// flowing and the client's buffer ran dry (franz-go fetches again only once
// its buffer is drained, so the next fetch is on the way). Returning false
// instead would make the runtime sleep the whole spout wait (100 ms by
// default) however soon the fetch arrives, at every fetch. The task's acks
// and its stop wait meanwhile, at most s.wait; once a wait finds nothing,
// Next returns false at once again until records flow.
//
// The poll runs without mu, since the client may need a rebalance callback
// to finish first: records of partitions forgotten meanwhile are dropped
// (their new owner resumes from the commit made when they were revoked).
func (s *spout[T]) await() (queued, bool) {
	s.mu.Lock()
	epoch, n := s.epoch, s.pollLimitLocked()
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.life, s.wait)
	fs := s.cl.PollRecords(ctx, n)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.takeLocked(fs, epoch) == 0 {
		s.flowing = false
		return queued{}, false
	}
	return s.nextLocked()
}

// pollLocked takes what the client has buffered, at most what keeps every
// partition within its bound of uncommitted offsets, and pauses the
// partitions that reached it. It returns the number of records taken.
func (s *spout[T]) pollLocked() int {
	fs := s.cl.PollRecords(nil, s.pollLimitLocked()) //nolint:staticcheck // a nil context returns what is buffered, without waiting
	return s.takeLocked(fs, s.epoch)
}

// pollLimitLocked is how many records a poll may take.
func (s *spout[T]) pollLimitLocked() int {
	n := s.cfg.maxPoll
	if s.cfg.guarantee == AtLeastOnce && !s.positioned {
		n = min(n, s.cfg.maxUncommitted) // a partition not seen yet has the whole bound
		for _, p := range s.parts {
			if !p.paused {
				n = min(n, max(1, int(int64(s.cfg.maxUncommitted)-p.uncommitted())))
			}
		}
	}
	return n
}

// takeLocked queues the records of a poll made at epoch, and returns how many
// it took.
func (s *spout[T]) takeLocked(fs kgo.Fetches, epoch uint64) int {
	s.logErrors(fs)
	taken := 0
	fs.EachRecord(func(r *kgo.Record) {
		if epoch != s.epoch && s.goneAt[key{r.Topic, r.Partition}] > epoch {
			return
		}
		if s.positioned {
			taken += s.takePositionedLocked(r)
			return
		}
		p := s.partitionLocked(r)
		if s.cfg.guarantee == AtLeastOnce {
			p.take(r)
		} else {
			p.polled = r.Offset + 1
		}
		s.queue = append(s.queue, queued{p, r})
		taken++
	})
	if taken > 0 {
		s.flowing = true
		if s.cfg.guarantee == AtLeastOnce && !s.positioned {
			s.pauseFullLocked()
		}
	}
	return taken
}

func (s *spout[T]) partitionLocked(r *kgo.Record) *partition {
	k := key{r.Topic, r.Partition}
	p := s.parts[k]
	if p == nil {
		p = newPartition(r.Topic, r.Partition, r.Offset)
		s.parts[k] = p
	}
	return p
}

func (s *spout[T]) pauseFullLocked() {
	var full map[string][]int32
	for _, p := range s.parts {
		if !p.paused && p.uncommitted() >= int64(s.cfg.maxUncommitted) {
			p.paused = true
			if full == nil {
				full = map[string][]int32{}
			}
			full[p.topic] = append(full[p.topic], p.id)
		}
	}
	if full != nil {
		s.cl.PauseFetchPartitions(full)
	}
}

func (s *spout[T]) resumeLocked(ps ...*partition) {
	var resume map[string][]int32
	for _, p := range ps {
		if p.paused && (p.gone || p.uncommitted() < int64(s.cfg.maxUncommitted)) {
			p.paused = false
			if resume == nil {
				resume = map[string][]int32{}
			}
			resume[p.topic] = append(resume[p.topic], p.id)
		}
	}
	if resume != nil {
		s.cl.ResumeFetchPartitions(resume)
	}
}

func (s *spout[T]) logErrors(fs kgo.Fetches) {
	fs.EachError(func(topic string, partition int32, err error) {
		if errors.Is(err, kgo.ErrClientClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return
		}
		s.log.Warn("kafka: fetch error", zap.String("topic", topic), zap.Int32("partition", partition), zap.Error(err))
	})
}

// pollAtMostOnce takes a poll's records and commits past them before any is
// emitted. If the commit fails they are dropped, never emitted: a record
// emitted twice would break the guarantee, one lost does not.
func (s *spout[T]) pollAtMostOnce() (queued, bool) {
	s.mu.Lock()
	taken := s.pollLocked()
	req := offsets(s.parts, func(p *partition) int64 { return p.polled })
	s.mu.Unlock()
	if taken == 0 {
		return queued{}, false
	}
	ctx, cancel := context.WithTimeout(s.life, s.cfg.closeTimeout)
	defer cancel()
	var cerr error
	s.cl.CommitOffsetsSync(ctx, req, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		cerr = commitError(resp, err)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if cerr != nil {
		s.log.Error("kafka: at-most-once commit failed; dropping the poll's records", zap.Int("records", taken), zap.Error(cerr))
		s.queue = s.queue[:0]
		return queued{}, false
	}
	s.markCommittedLocked(req)
	return s.nextLocked()
}

// Ack marks the record done: the commit point may move past it.
func (s *spout[T]) Ack(id msgID) {
	if s.positioned {
		s.ackPositioned(id)
		return
	}
	s.mu.Lock()
	s.open--
	if !id.p.gone {
		id.p.finish(id.offset)
	}
	req := s.commitDueLocked()
	closing := s.closingLocked()
	s.mu.Unlock()
	s.commit(req)
	if closing {
		s.closeClient()
	}
}

// Nack schedules a retry of the record, or gives it up after its retries.
func (s *spout[T]) Nack(id msgID) {
	if s.positioned {
		s.nackPositioned(id)
		return
	}
	now := time.Now()
	var gaveUp *kgo.Record
	s.mu.Lock()
	s.open--
	if e := id.p.find(id.offset); !id.p.gone && e != nil && !e.done {
		e.fails++
		if e.fails > s.cfg.retry.retries {
			gaveUp = e.rec
			s.gaveUp++
			id.p.finish(id.offset)
		} else {
			heap.Push(&s.retries, retry{due: now.Add(s.cfg.retry.delay(e.fails)), p: id.p, offset: id.offset})
		}
	}
	n := s.gaveUp
	closing := s.closingLocked()
	s.mu.Unlock()
	if gaveUp != nil {
		s.reportGiveUp(gaveUp, n)
	}
	if closing {
		s.closeClient()
	}
}

func (s *spout[T]) reportGiveUp(r *kgo.Record, total int64) {
	s.log.Error("kafka: record failed after its retries; committing past it",
		zap.String("topic", r.Topic), zap.Int32("partition", r.Partition), zap.Int64("offset", r.Offset),
		zap.Int("retries", s.cfg.retry.retries))
	s.metric("kafka-gave-up", total)
	if s.cfg.giveUp != nil {
		s.cfg.giveUp(fromKgo(r))
	}
}

// commitDueLocked returns the offsets to commit when the commit period is
// over and no commit is in flight.
func (s *spout[T]) commitDueLocked() map[string]map[int32]kgo.EpochOffset {
	if !s.due.Load() || s.committing || s.closed || s.cfg.guarantee == AtMostOnce {
		return nil
	}
	s.due.Store(false)
	s.tick.Reset(s.cfg.commitPeriod)
	req := offsets(s.parts, s.point)
	s.committing = req != nil
	return req
}

// point is where a partition may be committed under the spout's guarantee.
func (s *spout[T]) point(p *partition) int64 {
	if s.cfg.guarantee == AtLeastOnce {
		return p.commitPoint()
	}
	return p.polled
}

// commit sends req asynchronously; its result comes back through committed.
func (s *spout[T]) commit(req map[string]map[int32]kgo.EpochOffset) {
	if req == nil {
		return
	}
	s.cl.CommitOffsets(s.life, req, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.committing = false
		if err = commitError(resp, err); err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Warn("kafka: commit failed; retrying at the next period", zap.Error(err))
			}
			return
		}
		s.markCommittedLocked(req)
	})
}

func (s *spout[T]) markCommittedLocked(req map[string]map[int32]kgo.EpochOffset) {
	var moved []*partition
	for t, ps := range req {
		for id, eo := range ps {
			if p := s.parts[key{t, id}]; p != nil && eo.Offset > p.committed {
				p.committed = eo.Offset
				moved = append(moved, p)
			}
		}
	}
	s.resumeLocked(moved...)
}

// commitError is the first error of a commit, the request's or a partition's.
func commitError(resp *kmsg.OffsetCommitResponse, err error) error {
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return fmt.Errorf("committing %s[%d]: %w", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	return nil
}

// revoked commits how far the revoked partitions are done and forgets them:
// the acks of their records still in the topology are ignored, and their
// records not emitted yet are dropped (the group hands them to another
// member, which resumes from this commit).
func (s *spout[T]) revoked(_ context.Context, cl *kgo.Client, revoked map[string][]int32) {
	req := s.forget(revoked, true)
	if req == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.closeTimeout)
	defer cancel()
	cl.CommitOffsetsSync(ctx, req, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err = commitError(resp, err); err != nil {
			s.log.Warn("kafka: commit of revoked partitions failed; their new owner may repeat records", zap.Error(err))
		}
	})
}

// lost forgets the lost partitions without a commit: the group already gave
// them to another member.
func (s *spout[T]) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	s.forget(lost, false)
}

func (s *spout[T]) forget(parts map[string][]int32, commit bool) map[string]map[int32]kgo.EpochOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := map[key]*partition{}
	s.epoch++
	for t, ids := range parts {
		for _, id := range ids {
			k := key{t, id}
			s.goneAt[k] = s.epoch
			if p := s.parts[k]; p != nil {
				gone[k] = p
				delete(s.parts, k)
			}
		}
	}
	var req map[string]map[int32]kgo.EpochOffset
	if commit && s.cfg.guarantee != AtMostOnce {
		req = offsets(gone, s.point)
	}
	for _, p := range gone {
		p.gone = true
		p.open, p.head = nil, 0
		s.resumeLocked(p)
	}
	return req
}

// Activate is part of the task's lifecycle; the client starts consuming when
// it is created.
func (s *spout[T]) Activate() {}

// Deactivate runs on the task's goroutine when the topology stops: with no
// record open the client closes now, within the stop, and otherwise after the
// last open record's ack or nack.
func (s *spout[T]) Deactivate() { s.stop() }

// stop runs when the task is deactivated or its context ends (a task that
// fails is not deactivated first). (the task is deactivated or stops).
// The client closes once no tracked record is open: acks that arrive while
// the topology drains are still committed.
func (s *spout[T]) stop() {
	if s.cl == nil {
		return
	}
	s.mu.Lock()
	s.stopping = true
	closing := s.closingLocked()
	s.mu.Unlock()
	if closing {
		s.closeClient()
	}
}

func (s *spout[T]) closingLocked() bool {
	if s.stopping && s.open <= 0 && !s.closed {
		s.closed = true
		return true
	}
	return false
}

// closeClient leaves the group, which commits what is done through revoked,
// and closes the client, each bounded by the close timeout.
func (s *spout[T]) closeClient() {
	if s.positioned {
		s.closePositioned()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.closeTimeout)
	defer cancel()
	if err := s.cl.LeaveGroupContext(ctx); err != nil {
		s.log.Warn("kafka: leaving the group", zap.Error(err))
	}
	s.cl.Close()
	s.tick.Stop()
	s.endLife()
}

// retry is a failed record waiting for its back-off.
type retry struct {
	due    time.Time
	p      *partition
	offset int64
}

type retryHeap []retry

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h retryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *retryHeap) Push(x any)        { *h = append(*h, x.(retry)) }
func (h *retryHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = retry{}
	*h = old[:len(old)-1]
	return r
}
