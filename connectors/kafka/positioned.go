package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// The positioned mode: a spout task of a topology with state (see "Exactly
// once" in the package doc). goshelter assigns it its partitions, it reads
// them by offset with no group membership, its position (the next offset of
// each partition after the last record it emitted) is stored with each
// checkpoint, and it is rewound there at a restart.

// discoveryRetry bounds the wait before a failed partition discovery is
// tried again: a task with no partitions yet emits nothing until one works.
const discoveryRetry = 500 * time.Millisecond

// requestTimeout bounds each admin request of a positioned task (metadata,
// offsets), so a broker that never answers cannot hold its loop forever.
const requestTimeout = 10 * time.Second

// shared is what a spout definition keeps across the incarnations of its
// tasks in this process: a rollback makes every task anew, and what a task
// learnt (a record's failures, where a partition started) must survive it.
// Each partition is read by one task index, so the tasks never compete for
// an entry; mu is for the hand-over between incarnations.
type shared struct {
	mu sync.Mutex // mu guards every field below
	// failures counts the failures of records, by topic, partition and
	// offset: a record failed under state rolls the topology back, and its
	// retries are counted across the rollbacks.
	failures map[recordKey]*failure
	// resolved is where each partition started when no checkpoint had its
	// position: a rollback before the first checkpoint restarts from the
	// same offsets (a "latest" start resolved again would skip records).
	resolved map[key]int64
	// discovered marks the task indexes that listed their partitions once:
	// a partition they find later was created since, and starts at its
	// earliest offset.
	discovered map[int]bool
	gaveUp     map[int]int64 // records given up, by task index

	// failing is len(failures), read without mu: the check of every record
	// emitted costs an atomic load while no record has failed.
	failing atomic.Int64
}

func newShared() *shared {
	return &shared{failures: map[recordKey]*failure{}, resolved: map[key]int64{},
		discovered: map[int]bool{}, gaveUp: map[int]int64{}}
}

// recordKey identifies a record in its topic.
type recordKey struct {
	topic  string
	id     int32
	offset int64
}

// failure is a record's account of failures.
type failure struct {
	fails    int
	last     time.Time // of the last failure
	gaveUp   bool      // its retries are spent: skipped from now on
	reported bool      // its give-up was logged and reported
}

// fail counts a failure of record k and reports whether its retries are
// spent.
func (sh *shared) fail(k recordKey, now time.Time, b backoff) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	f := sh.failures[k]
	if f == nil {
		f = &failure{}
		sh.failures[k] = f
		sh.failing.Add(1)
	}
	f.fails++
	f.last = now
	f.gaveUp = f.gaveUp || f.fails > b.retries
	return f.gaveUp
}

// verdict says what to do with record k now: skip it (given up; report is
// true the first time), hold it until due (a retry waiting for its
// back-off), or emit it (due zero).
func (sh *shared) verdict(k recordKey, now time.Time, b backoff) (skip, report bool, due time.Time) {
	if sh.failing.Load() == 0 {
		return false, false, time.Time{}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	f := sh.failures[k]
	switch {
	case f == nil:
		return false, false, time.Time{}
	case f.gaveUp:
		report, f.reported = !f.reported, true
		return true, report, time.Time{}
	}
	if at := f.last.Add(b.delay(f.fails)); at.After(now) {
		return false, false, at
	}
	return false, false, time.Time{}
}

// prune forgets the failures of partition p below offset: a checkpoint past
// them committed, no rewind goes back there.
func (sh *shared) prune(p key, below int64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for k := range sh.failures {
		if k.topic == p.topic && k.id == p.id && k.offset < below {
			delete(sh.failures, k)
			sh.failing.Add(-1)
		}
	}
}

// gaveUpOne counts a record given up by task index and returns the total.
func (sh *shared) gaveUpOne(index int) int64 {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.gaveUp[index]++
	return sh.gaveUp[index]
}

// Position returns the next offset of every partition the task reads (after
// the last record it emitted), encoded (see encodePosition). The runtime
// calls it at each checkpoint's barrier, on the task's goroutine, in the
// positioned mode only. Partitions of the last rewind not listed yet keep
// their offsets.
func (s *spout[T]) Position() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[key]int64, len(s.start)+len(s.parts))
	for k, at := range s.start {
		next[k] = at
	}
	for k, p := range s.parts {
		next[k] = p.emitted
	}
	return encodePosition(next)
}

// Rewind sets where the task reads each partition of position: the runtime
// calls it before the first Next, with the position of the last committed
// checkpoint. Partitions not in it start by the first-poll strategy.
func (s *spout[T]) Rewind(position []byte) error {
	start, err := decodePosition(position)
	if err != nil {
		return fmt.Errorf("kafka: rewinding the spout of group %q: %w", s.group, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = start
	return nil
}

// owner returns the index, among all tasks reading the spout's topics (every
// process's share), of the task that reads partition id of the topic ranked
// rank in the sorted topic list. A topic's partitions go round the tasks from
// the topic's rank on, so a topic that grows never moves the partitions it
// had, nor those of other topics.
func owner(rank int, id int32, tasks int) int { return (rank + int(id)) % tasks }

// startLoop starts the task's loop (discovery and lag commits), at its first
// Next: Rewind has come by then, if it comes at all.
func (s *spout[T]) startLoop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.looping = true
	if s.stopping || s.closed {
		return
	}
	s.loop.Add(1)
	go func() {
		defer s.loop.Done()
		s.run()
	}()
}

// run discovers the task's partitions now and every discovery period, and
// commits the acked offsets to the group every commit period, until the
// task's client closes.
func (s *spout[T]) run() {
	commit := time.NewTicker(s.cfg.commitPeriod)
	defer commit.Stop()
	discover := time.NewTimer(0)
	defer discover.Stop()
	warned := false
	for {
		select {
		case <-s.life.Done():
			return
		case <-discover.C:
			wait := s.cfg.discovery
			if err := s.discover(s.life); err != nil {
				if s.life.Err() != nil {
					return
				}
				s.log.Warn("kafka: partition discovery failed; trying again", zap.Strings("topics", s.topics), zap.Error(err))
				wait = min(wait, discoveryRetry)
			}
			discover.Reset(wait)
		case <-commit.C:
			if err := s.commitAcked(s.life); err != nil && s.life.Err() == nil {
				// Lag only: the checkpoint holds the positions. A group
				// with members of its own refuses commits from outside.
				level := zap.DebugLevel
				if !warned {
					level, warned = zap.WarnLevel, true
				}
				s.log.Log(level, "kafka: committing the checkpointed offsets to the group (for lag monitoring) failed", zap.String("group", s.group), zap.Error(err))
			}
		}
	}
}

// discover lists the partitions of the spout's topics, and starts reading
// those of this task that it does not read yet.
func (s *spout[T]) discover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	tds, err := s.adm.ListTopics(ctx, s.topics...)
	if err != nil {
		return fmt.Errorf("kafka: listing the partitions of %v: %w", s.topics, err)
	}
	topics := slices.Clone(s.topics)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	var fresh []key
	s.mu.Lock()
	for rank, t := range topics {
		td, ok := tds[t]
		if !ok || td.Err != nil {
			continue // not created yet: a later discovery finds it
		}
		for id := range td.Partitions {
			if k := (key{t, id}); owner(rank, id, s.tasks) == s.global && s.parts[k] == nil {
				fresh = append(fresh, k)
			}
		}
	}
	s.mu.Unlock()
	if len(fresh) > 0 {
		starts, err := s.resolve(ctx, fresh)
		if err != nil {
			return err
		}
		s.assign(starts)
	}
	s.shared.mu.Lock()
	s.shared.discovered[s.global] = true
	s.shared.mu.Unlock()
	return nil
}

// resolve finds where each fresh partition starts: its position in the last
// checkpoint, else where an earlier incarnation started it, else (a partition
// this process never read) by the first-poll strategy; a partition created
// since the task's first discovery starts at its earliest offset, since
// records may have been produced to it before it was found.
func (s *spout[T]) resolve(ctx context.Context, fresh []key) (map[key]int64, error) {
	out := make(map[key]int64, len(fresh))
	var need []key
	s.mu.Lock()
	for _, k := range fresh {
		if at, ok := s.start[k]; ok {
			out[k] = at
		}
	}
	s.mu.Unlock()
	s.shared.mu.Lock()
	created := s.shared.discovered[s.global]
	for _, k := range fresh {
		if _, ok := out[k]; ok {
			continue
		}
		if at, ok := s.shared.resolved[k]; ok {
			out[k] = at
		} else {
			need = append(need, k)
		}
	}
	s.shared.mu.Unlock()
	if len(need) == 0 {
		return out, nil
	}
	fp := s.cfg.firstPoll
	if created {
		fp = Earliest
	}
	if err := s.firstPoll(ctx, fp, need, out); err != nil {
		return nil, err
	}
	s.shared.mu.Lock()
	for _, k := range need {
		s.shared.resolved[k] = out[k]
	}
	s.shared.mu.Unlock()
	return out, nil
}

// firstPoll sets out's offsets of need by strategy fp: the group's committed
// offset (read without joining the group) for the uncommitted strategies,
// else the partition's first or next offset.
func (s *spout[T]) firstPoll(ctx context.Context, fp FirstPoll, need []key, out map[key]int64) error {
	if fp == UncommittedEarliest || fp == UncommittedLatest {
		os, err := s.adm.FetchOffsets(ctx, s.group)
		if errors.Is(err, kerr.GroupIDNotFound) {
			err = nil // a group that never committed: no offsets
		}
		if err != nil {
			return fmt.Errorf("kafka: reading the committed offsets of group %q: %w", s.group, err)
		}
		for _, k := range need {
			if o, ok := os.Lookup(k.topic, k.id); ok && o.Err == nil && o.At >= 0 {
				out[k] = o.At
			}
		}
	}
	var topics []string
	for _, k := range need {
		if _, ok := out[k]; !ok && !slices.Contains(topics, k.topic) {
			topics = append(topics, k.topic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	list, what := s.adm.ListStartOffsets, "first"
	if fp == Latest || fp == UncommittedLatest {
		list, what = s.adm.ListEndOffsets, "next"
	}
	listed, err := list(ctx, topics...)
	if err != nil {
		return fmt.Errorf("kafka: listing the %s offsets of %v: %w", what, topics, err)
	}
	for _, k := range need {
		if _, ok := out[k]; ok {
			continue
		}
		l, ok := listed.Lookup(k.topic, k.id)
		switch {
		case !ok:
			return fmt.Errorf("kafka: listing the %s offset of %s[%d]: no answer", what, k.topic, k.id)
		case l.Err != nil:
			return fmt.Errorf("kafka: listing the %s offset of %s[%d]: %w", what, k.topic, k.id, l.Err)
		case l.Offset < 0:
			return fmt.Errorf("kafka: listing the %s offset of %s[%d]: the broker has none (%d)", what, k.topic, k.id, l.Offset)
		}
		out[k] = l.Offset
	}
	return nil
}

// assign starts reading the partitions at their offsets.
func (s *spout[T]) assign(starts map[key]int64) {
	add := map[string]map[int32]kgo.Offset{}
	s.mu.Lock()
	for k, at := range starts {
		if s.parts[k] != nil {
			continue
		}
		p := newPartition(k.topic, k.id, at)
		p.emitted, p.acked = at, at
		s.parts[k] = p
		if add[k.topic] == nil {
			add[k.topic] = map[int32]kgo.Offset{}
		}
		add[k.topic][k.id] = kgo.NewOffset().At(at)
		s.log.Debug("kafka: reading partition", zap.String("topic", k.topic), zap.Int32("partition", k.id), zap.Int64("offset", at))
	}
	s.mu.Unlock()
	// The client is closed only after this loop ends (closePositioned).
	s.cl.AddConsumePartitions(add)
}

// commitAcked commits to the group, with no membership (as an admin tool
// does), the offset after each partition's last acked record: under state a
// record is acked once a committed checkpoint covers it, so this follows the
// checkpoints, for lag monitoring only (the positions are the checkpoint's).
func (s *spout[T]) commitAcked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	os := kadm.Offsets{}
	s.mu.Lock()
	for _, p := range s.parts {
		if p.acked > p.committed {
			os.Add(kadm.Offset{Topic: p.topic, Partition: p.id, At: p.acked, LeaderEpoch: -1})
		}
	}
	s.mu.Unlock()
	if len(os) == 0 {
		return nil
	}
	os.Each(func(o kadm.Offset) { s.shared.prune(key{o.Topic, o.Partition}, o.At) })
	resp, err := s.adm.CommitOffsets(ctx, s.group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resp.Each(func(o kadm.OffsetResponse) {
		if p := s.parts[key{o.Topic, o.Partition}]; p != nil && o.Err == nil {
			p.committed = max(p.committed, o.At)
		}
	})
	return nil
}

// nextPositionedLocked returns the next record to emit in the positioned
// mode: a held partition's records wait for its retry's back-off, a record
// given up after its retries is skipped (the position moves past it).
func (s *spout[T]) nextPositionedLocked() (queued, bool) {
	now := time.Now()
	s.releaseHoldsLocked(now)
	for {
		for len(s.queue) > 0 {
			q := s.queue[0]
			s.queue[0] = queued{}
			s.queue = s.queue[1:]
			if q.p.held {
				q.p.backlog = append(q.p.backlog, q)
				continue
			}
			skip, report, due := s.shared.verdict(recordKey{q.p.topic, q.p.id, q.rec.Offset}, now, s.cfg.retry)
			switch {
			case skip:
				q.p.emitted = q.rec.Offset + 1
				if report {
					s.reports = append(s.reports, q.rec)
				}
				continue
			case !due.IsZero():
				s.holdLocked(q, due)
				continue
			}
			s.open++
			return q, true
		}
		if s.pollLocked() == 0 {
			return queued{}, false
		}
	}
}

// holdLocked holds q's partition, with q first, until due: the partition
// stops fetching, and what was already taken waits in its backlog.
func (s *spout[T]) holdLocked(q queued, due time.Time) {
	p := q.p
	p.held, p.holdUntil = true, due
	s.holds++
	p.backlog = append(p.backlog[:0], q)
	// Records of p already queued behind q go to the backlog, in order.
	kept := s.queue[:0]
	for _, o := range s.queue {
		if o.p == p {
			p.backlog = append(p.backlog, o)
		} else {
			kept = append(kept, o)
		}
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	s.cl.PauseFetchPartitions(map[string][]int32{p.topic: {p.id}})
}

// releaseHoldsLocked puts the backlogs of the partitions whose hold is over
// back at the front of the queue and resumes their fetching.
func (s *spout[T]) releaseHoldsLocked(now time.Time) {
	if s.holds == 0 {
		return
	}
	for _, p := range s.parts {
		if !p.held || p.holdUntil.After(now) {
			continue
		}
		p.held = false
		s.holds--
		s.queue = append(p.backlog, s.queue...)
		p.backlog = nil
		s.cl.ResumeFetchPartitions(map[string][]int32{p.topic: {p.id}})
	}
}

// ackPositioned records how far the partition is acked.
func (s *spout[T]) ackPositioned(id msgID) {
	s.mu.Lock()
	s.open--
	id.p.acked = max(id.p.acked, id.offset+1)
	closing := s.closingLocked()
	s.mu.Unlock()
	if closing {
		s.closeClient()
	}
}

// nackPositioned counts a failure of the record, across incarnations: under
// state the topology now rolls back and the new incarnation reads it again,
// after its back-off, or skips it once its retries are spent. The Nacks of
// an incarnation's end (the task's context is over) are no failures of
// their records: the rewind replays them.
func (s *spout[T]) nackPositioned(id msgID) {
	if s.taskCtx.Err() == nil {
		s.shared.fail(recordKey{id.p.topic, id.p.id, id.offset}, time.Now(), s.cfg.retry)
	}
	s.mu.Lock()
	s.open--
	closing := s.closingLocked()
	s.mu.Unlock()
	if closing {
		s.closeClient()
	}
}

// translateFailedPositioned counts a translate panic as a failure of its
// record: nothing downstream saw it, so the partition holds it for its
// back-off and translates it again, or skips it once its retries are spent.
func (s *spout[T]) translateFailedPositioned(q queued) {
	now := time.Now()
	spent := s.shared.fail(recordKey{q.p.topic, q.p.id, q.rec.Offset}, now, s.cfg.retry)
	s.mu.Lock()
	s.open--
	if spent {
		// Back to the front: nextPositionedLocked skips and reports it.
		s.queue = append([]queued{q}, s.queue...)
	} else {
		_, _, due := s.shared.verdict(recordKey{q.p.topic, q.p.id, q.rec.Offset}, now, s.cfg.retry)
		if due.IsZero() {
			due = now // no back-off: the next Next translates it again
		}
		s.holdLocked(q, due)
	}
	s.mu.Unlock()
}

// closePositioned ends the task's loop, commits the acked offsets to the
// group a last time and closes the client.
func (s *spout[T]) closePositioned() {
	s.endLife()
	s.loop.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.closeTimeout)
	defer cancel()
	if err := s.commitAcked(ctx); err != nil {
		s.log.Debug("kafka: last commit to the group (for lag monitoring) failed", zap.String("group", s.group), zap.Error(err))
	}
	s.cl.Close()
}

// openPositioned creates the task's client: it reads the partitions the
// task's loop assigns it (AddConsumePartitions), with no group membership,
// so no rebalance can take a partition mid-checkpoint. An offset out of range
// (records deleted by retention while no process ran) restarts at the first
// one still there.
func (s *spout[T]) openPositioned(info dsl.TaskInfo, seeds []string) error {
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	cl, err := kgo.NewClient(append(opts, s.cfg.client...)...)
	if err != nil {
		s.endLife()
		s.closed = true
		return fmt.Errorf("kafka: creating the client of the spout of group %q: %w", s.group, err)
	}
	s.cl, s.adm = cl, kadm.NewClient(cl)
	context.AfterFunc(info.Context(), s.stop)
	return nil
}

// takePositionedLocked queues a record taken from the client, or keeps it in
// its partition's backlog while the partition is held. It returns 1, or 0
// for a partition the task does not read (none: the loop registers a
// partition before the client reads it).
func (s *spout[T]) takePositionedLocked(r *kgo.Record) int {
	p := s.parts[key{r.Topic, r.Partition}]
	if p == nil {
		return 0
	}
	p.polled = r.Offset + 1
	if q := (queued{p, r}); p.held {
		p.backlog = append(p.backlog, q)
	} else {
		s.queue = append(s.queue, q)
	}
	return 1
}
