package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// produceTo writes values from..to-1 to in[p].
func (w *kworld) produceTo(p int32, from, to int) {
	w.t.Helper()
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		rs = append(rs, &kgo.Record{Topic: "in", Partition: p, Value: fmt.Appendf(nil, "%d/%d", p, i)})
	}
	if err := w.cl.ProduceSync(w.ctx, rs...).FirstErr(); err != nil {
		w.t.Fatal(err)
	}
}

// committedAt is group's committed offset of in[p] and its leader epoch
// (-1, -1 for none).
func (w *kworld) committedAt(group string, p int32) (int64, int32) {
	w.t.Helper()
	os, err := w.adm.FetchOffsets(w.ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return -1, -1 // nothing committed yet
	}
	if err != nil {
		w.t.Fatalf("fetching group %s's offsets: %v", group, err) // not "none": that is what some tests expect
	}
	if o, ok := os.Lookup("in", p); ok {
		return o.At, o.LeaderEpoch
	}
	return -1, -1
}

// positioned opens a checkpointed spout task of group "g", task index of
// parallelism, on sh (the definition's shared state), logging to log. Its
// loop is not started: the tests call discover, or Next with loop true.
func (w *kworld) positioned(sh *shared, index, parallelism int, log *zap.Logger, loop bool, opts ...Option) *spout[Record] {
	w.t.Helper()
	cfg := defaults()
	cfg.commitPeriod = time.Hour
	for _, o := range opts {
		o(&cfg)
	}
	cfg.client = append([]kgo.Opt{kgo.FetchMaxWait(50 * time.Millisecond)}, cfg.client...)
	ctx, cancel := context.WithCancel(context.Background())
	info := dsl.TaskInfo{Index: index, Parallelism: parallelism, Checkpointed: true, Logger: log}.WithContext(ctx)
	info.Settings.SpoutWait = 20 * time.Millisecond
	s, err := newSpout(info, cfg, w.translate, w.seeds, "g", []string{"in"}, &firstSeen{m: map[key]bool{}}, sh)
	if err != nil {
		w.t.Fatal(err)
	}
	s.looping = !loop
	w.t.Cleanup(func() { end(s, cancel) })
	return s
}

func (w *kworld) discover(s *spout[Record]) {
	w.t.Helper()
	if err := s.discover(w.ctx); err != nil {
		w.t.Fatal(err)
	}
}

// starts returns where each partition the task reads starts.
func starts(s *spout[Record]) map[int32]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int32]int64{}
	for k, p := range s.parts {
		out[k.id] = p.emitted
	}
	return out
}

// A checkpointed task reads the partitions that fall to it from where the
// rewind says, its position follows what it emits, and its loop commits the
// acked offsets to the group (for lag), with no leader epoch.
func TestPositionedReadsItsShareFromTheRewind(t *testing.T) {
	w := newKWorldOf(t, 3)
	for p := range int32(3) {
		w.produceTo(p, 0, 3)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	s := w.positioned(newShared(), 1, 2, zap.New(core), true, WithCommitPeriod(5*time.Millisecond))
	other := key{"gone", 4}
	if err := s.Rewind(encodePosition(map[key]int64{{"in", 1}: 1, other: 7})); err != nil {
		t.Fatal(err)
	}
	var ids []msgID
	for _, want := range []int64{1, 2} {
		id, r := next(t, s)
		if r.Partition != 1 || id.offset != want {
			t.Fatalf("emitted %d at %d, want partition 1 (task 1 of 2) at %d", r.Partition, id.offset, want)
		}
		ids = append(ids, id)
	}
	nothing(t, s)
	pos, err := decodePosition(s.Position())
	if err != nil || len(pos) != 2 || pos[key{"in", 1}] != 3 || pos[other] != 7 {
		t.Fatalf("position %v (%v), want in[1] at 3 and the rewind's gone[4] at 7", pos, err)
	}
	if n := s.openCount(); n != 2 {
		t.Errorf("open = %d, want 2", n)
	}
	s.Ack(ids[0])
	if n := s.openCount(); n != 1 {
		t.Errorf("open = %d after an ack, want 1", n)
	}
	var at int64
	var epoch int32
	if !testsupport.Await(testsupport.Scaled(20*time.Second), func() bool { at, epoch = w.committedAt("g", 1); return at == 2 }) || epoch != -1 {
		t.Fatalf("the group's offset of in[1] is %d (epoch %d), want 2, -1", at, epoch)
	}
	s.Ack(ids[1])
	s.mu.Lock()
	acked := ids[1].p.acked
	s.mu.Unlock()
	if acked != 3 {
		t.Errorf("acked %d, want 3", acked)
	}
	s.Deactivate() // the close commits the last ack
	if at, _ := w.committedAt("g", 1); at != 3 {
		t.Errorf("after the close the group's offset is %d, want 3", at)
	}
	for _, o := range []int32{0, 2} {
		if at, _ := w.committedAt("g", o); at != -1 {
			t.Errorf("the group has in[%d] at %d, a partition of the other task", o, at)
		}
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len() + logs.FilterMessageSnippet("failed").Len(); n != 0 {
		t.Errorf("%d warnings or failures logged: %v", n, logs.All())
	}
}

// A second ack of older records never moves the acked offset back, and a
// commit with nothing new sends nothing.
func TestPositionedCommitsOnlyWhatMoved(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	s := w.positioned(newShared(), 0, 1, nil, false)
	w.discover(s)
	a, _ := next(t, s)
	b, _ := next(t, s)
	s.Ack(b)
	s.Ack(a)
	commit := func() {
		t.Helper()
		if err := s.commitAcked(w.ctx); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	if at, _ := w.committedAt("g", 0); at != 2 {
		t.Fatalf("committed %d, want 2", at)
	}
	s.mu.Lock()
	committed := b.p.committed
	s.mu.Unlock()
	if committed != 2 {
		t.Errorf("the partition's committed offset is %d, want 2", committed)
	}
	// Nothing new: no request.
	w.commit("g", 1) // a request would set it back to 2
	commit()
	if at, _ := w.committedAt("g", 0); at != 1 {
		t.Errorf("a commit with nothing new moved the group to %d", at)
	}
}

// Where a partition starts when no checkpoint has it: by the first-poll
// strategy, the uncommitted ones from the group's commit; a partition
// created since the task's first discovery from its earliest offset; a new
// incarnation where the last one started.
func TestPositionedFirstPoll(t *testing.T) {
	for _, tc := range []struct {
		fp         FirstPoll
		commit     int64 // -1: none
		discovered bool
		want       int64
	}{
		{UncommittedEarliest, -1, false, 0},
		{UncommittedEarliest, 2, false, 2},
		{UncommittedLatest, -1, false, 3},
		{UncommittedLatest, 0, false, 0},
		{UncommittedLatest, 1, false, 1},
		{Earliest, 2, false, 0},
		{Latest, 1, false, 3},
		{Latest, 1, true, 0},
		{UncommittedLatest, -1, true, 0},
	} {
		t.Run(fmt.Sprint(tc.fp, tc.commit, tc.discovered), func(t *testing.T) {
			w := newKWorld(t)
			w.produce(0, 3)
			if tc.commit >= 0 {
				w.commit("g", tc.commit)
			}
			sh := newShared()
			sh.discovered[0] = tc.discovered
			s := w.positioned(sh, 0, 1, nil, false, WithFirstPoll(tc.fp))
			w.discover(s)
			if got := starts(s); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("starts %v, want in[0] at %d", got, tc.want)
			}
			if !sh.discovered[0] || sh.resolved[key{"in", 0}] != tc.want {
				t.Errorf("shared: discovered %v, resolved %v", sh.discovered, sh.resolved)
			}
			// A discovery again changes nothing; a new incarnation starts
			// where this one did, whatever was produced since.
			w.discover(s)
			w.produce(3, 5)
			again := w.positioned(sh, 0, 1, nil, false, WithFirstPoll(tc.fp))
			w.discover(again)
			if got := starts(again); got[0] != tc.want {
				t.Errorf("the next incarnation starts at %d, want %d", got[0], tc.want)
			}
		})
	}
}

// A discovery of a topic that does not exist finds nothing and fails not.
func TestPositionedDiscoversNothingOfAMissingTopic(t *testing.T) {
	w := newKWorld(t)
	s := w.positioned(newShared(), 0, 1, nil, false)
	s.topics = []string{"nope", "in", "nope"}
	w.discover(s)
	if got := starts(s); len(got) != 1 {
		t.Errorf("starts %v, want in[0] only", got)
	}
}

// A record that failed waits for its back-off: its partition is held, the
// records after it too, other partitions not; at the end of the hold the
// partition goes on from the failed record.
func TestPositionedHoldsAFailedRecordsPartition(t *testing.T) {
	w := newKWorldOf(t, 2)
	w.produceTo(0, 0, 3)
	sh := newShared()
	b := backoff{initial: time.Hour, period: time.Hour, max: time.Hour, retries: 5}
	sh.fail(recordKey{"in", 0, 1}, time.Now(), b)
	s := w.positioned(sh, 0, 1, nil, false, WithRetry(b.initial, b.period, b.max, b.retries))
	w.discover(s)
	if id, _ := next(t, s); id.offset != 0 {
		t.Fatalf("first %d, want 0", id.offset)
	}
	nothing(t, s)
	w.produceTo(1, 0, 1)
	if id, r := next(t, s); r.Partition != 1 || id.offset != 0 {
		t.Fatalf("then %d at %d, want in[1] at 0: a hold stops its partition only", r.Partition, id.offset)
	}
	s.mu.Lock()
	p := s.parts[key{"in", 0}]
	held, holds, backlog := p.held, s.holds, len(p.backlog)
	p.holdUntil = time.Now().Add(-time.Millisecond) // the back-off is over
	s.mu.Unlock()
	sh.mu.Lock()
	sh.failures[recordKey{"in", 0, 1}].last = time.Now().Add(-2 * time.Hour)
	sh.mu.Unlock()
	if !held || holds != 1 || backlog != 2 {
		t.Fatalf("held %v, holds %d, backlog %d; want true, 1, 2", held, holds, backlog)
	}
	for _, want := range []int64{1, 2} {
		if id, r := next(t, s); r.Partition != 0 || id.offset != want {
			t.Fatalf("after the hold: %d at %d, want in[0] at %d", r.Partition, id.offset, want)
		}
	}
	s.mu.Lock()
	held, holds = p.held, s.holds
	s.mu.Unlock()
	if held || holds != 0 {
		t.Errorf("after the hold: held %v, holds %d", held, holds)
	}
}

// A record whose retries are spent is skipped, past in the position, and
// reported once.
func TestPositionedSkipsARecordGivenUp(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	sh := newShared()
	if spent := sh.fail(recordKey{"in", 0, 1}, time.Now(), backoff{retries: 0}); !spent {
		t.Fatal("a first failure with no retries is not spent")
	}
	var given []int64
	var metric int64
	s := w.positioned(sh, 0, 1, nil, false, WithRetry(0, 0, 0, 0), WithGiveUp(func(r Record) { given = append(given, r.Offset) }))
	s.metric = func(name string, v any) { metric = v.(int64) }
	w.discover(s)
	for _, want := range []int64{0, 2} {
		if id, _ := next(t, s); id.offset != want {
			t.Fatalf("emitted %d, want %d", id.offset, want)
		}
	}
	if fmt.Sprint(given) != "[1]" || metric != 1 {
		t.Errorf("given up %v (metric %d), want [1] (1)", given, metric)
	}
	// A new incarnation skips it again, without a second report.
	again := w.positioned(sh, 0, 1, nil, false, WithRetry(0, 0, 0, 0), WithGiveUp(func(r Record) { given = append(given, r.Offset) }))
	w.discover(again)
	for _, want := range []int64{0, 2} {
		if id, _ := next(t, again); id.offset != want {
			t.Fatalf("the next incarnation emitted %d, want %d", id.offset, want)
		}
	}
	if fmt.Sprint(given) != "[1]" {
		t.Errorf("given up %v, want [1]: reported once", given)
	}
	if pos, _ := decodePosition(again.Position()); pos[key{"in", 0}] != 3 {
		t.Errorf("position %v, want in[0] at 3", pos)
	}
}

// A Nack counts a failure of its record while the task runs; the Nacks of
// the incarnation's end do not.
func TestPositionedNack(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 2)
	sh := newShared()
	s := w.positioned(sh, 0, 1, nil, false)
	w.discover(s)
	a, _ := next(t, s)
	b, _ := next(t, s)
	s.Nack(a)
	if f := sh.failures[recordKey{"in", 0, 0}]; f == nil || f.fails != 1 || sh.failing.Load() != 1 || s.openCount() != 1 {
		t.Fatalf("after a nack: %+v, failing %d, open %d", f, sh.failing.Load(), s.openCount())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.taskCtx = ctx // the incarnation ended
	s.Nack(b)
	if f := sh.failures[recordKey{"in", 0, 1}]; f != nil || s.openCount() != 0 {
		t.Errorf("a nack at the end counted %+v, open %d", f, s.openCount())
	}
}

// A translation that panics fails its record: the partition holds it for
// its back-off (none here: the next Next), or skips it once spent.
func TestPositionedTranslatePanics(t *testing.T) {
	for _, retries := range []int{1, 0} {
		t.Run(fmt.Sprint(retries), func(t *testing.T) {
			w := newKWorld(t)
			w.produce(0, 3)
			w.panicOnceAt(1)
			s := w.positioned(newShared(), 0, 1, nil, false, WithRetry(0, 0, 0, retries))
			w.discover(s)
			want := []int64{0, 1, 2}
			if retries == 0 {
				want = []int64{0, 2}
			}
			for _, o := range want {
				if id, _ := next(t, s); id.offset != o {
					t.Fatalf("emitted %d, want %d", id.offset, o)
				}
			}
			if n := s.openCount(); n != len(want) {
				t.Errorf("open = %d, want %d", n, len(want))
			}
		})
	}
}

func TestSharedFailures(t *testing.T) {
	sh := newShared()
	now := time.Now()
	b := backoff{initial: time.Second, period: 10 * time.Second, max: time.Hour, retries: 2}
	k := recordKey{"t", 0, 5}
	if skip, report, due := sh.verdict(k, now, b); skip || report || !due.IsZero() {
		t.Fatal("a record that never failed is held or skipped")
	}
	for i, want := range []time.Duration{time.Second, 20 * time.Second} {
		if sh.fail(k, now, b) {
			t.Fatalf("fail %d spent the retries", i+1)
		}
		if _, _, due := sh.verdict(k, now, b); !due.Equal(now.Add(want)) {
			t.Errorf("after fail %d due in %v, want %v", i+1, due.Sub(now), want)
		}
		if _, _, due := sh.verdict(k, now.Add(want), b); !due.IsZero() {
			t.Errorf("after fail %d, at its due time it is still held", i+1)
		}
	}
	if _, _, due := sh.verdict(recordKey{"t", 0, 6}, now, b); !due.IsZero() {
		t.Error("a record that never failed is held while another is")
	}
	if !sh.fail(k, now, b) {
		t.Fatal("the third fail is over 2 retries")
	}
	if skip, report, _ := sh.verdict(k, now, b); !skip || !report {
		t.Error("a record given up is not skipped and reported")
	}
	if skip, report, _ := sh.verdict(k, now, b); !skip || report {
		t.Error("a record given up is reported twice")
	}
	sh.fail(recordKey{"t", 0, 9}, now, b)
	sh.fail(recordKey{"t", 1, 1}, now, b)
	sh.fail(recordKey{"u", 0, 1}, now, b)
	if sh.failing.Load() != 4 {
		t.Fatalf("failing %d, want 4", sh.failing.Load())
	}
	sh.prune(key{"t", 0}, 9)
	if sh.failing.Load() != 3 || sh.failures[k] != nil || sh.failures[recordKey{"t", 0, 9}] == nil ||
		sh.failures[recordKey{"t", 1, 1}] == nil || sh.failures[recordKey{"u", 0, 1}] == nil {
		t.Errorf("after pruning t[0] below 9: failing %d, %v", sh.failing.Load(), sh.failures)
	}
	if sh.gaveUpOne(3) != 1 || sh.gaveUpOne(3) != 2 || sh.gaveUpOne(4) != 1 {
		t.Error("gaveUpOne does not count by task")
	}
}

func TestRewindRefusesABadPosition(t *testing.T) {
	s := &spout[Record]{group: "g"}
	if err := s.Rewind([]byte{9}); err == nil || !strings.Contains(err.Error(), `rewinding the spout of group "g"`) {
		t.Errorf("Rewind of a bad position = %v", err)
	}
	if s.start != nil {
		t.Errorf("a bad rewind set %v", s.start)
	}
}

// hang makes the broker keep requests of key unanswered until the test ends.
func (w *kworld) hang(key int16) {
	release := make(chan struct{})
	w.t.Cleanup(func() { close(release) })
	w.c.ControlKey(key, func(kmsg.Request) (kmsg.Response, error, bool) {
		w.c.KeepControl()
		w.c.SleepControl(func() { <-release })
		return nil, nil, false
	})
}

// A discovery that cannot list the topics, read the group's offsets or list
// the partitions' offsets fails, naming the step, and assigns nothing.
func TestPositionedDiscoveryFailures(t *testing.T) {
	over, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		key  int16 // the request that hangs, -1: none (the context is over)
		fp   FirstPoll
		says string
	}{
		{"topics", -1, UncommittedEarliest, "listing the partitions of [in]"},
		{"group offsets", int16(kmsg.OffsetFetch), UncommittedEarliest, `reading the committed offsets of group "g"`},
		{"first offsets", int16(kmsg.ListOffsets), Earliest, "listing the first offsets of [in]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newKWorld(t)
			s := w.positioned(newShared(), 0, 1, nil, false, WithFirstPoll(tc.fp))
			ctx := over
			if tc.key >= 0 {
				if _, err := s.adm.ListTopics(w.ctx, "in"); err != nil { // the connection is up
					t.Fatal(err)
				}
				w.hang(tc.key)
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(w.ctx, testsupport.Scaled(500*time.Millisecond))
				defer cancel()
			}
			if err := s.discover(ctx); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("discover = %v, want an error saying %q", err, tc.says)
			}
			if got := starts(s); len(got) != 0 {
				t.Errorf("a failed discovery assigned %v", got)
			}
		})
	}
}

// A group with members of its own refuses the lag commits: the first refusal
// is a warning, the next ones are at debug level.
func TestPositionedLagCommitRefused(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 2)
	member, err := kgo.NewClient(kgo.SeedBrokers(w.seeds...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("in"),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	if fs := member.PollFetches(w.ctx); len(fs.Records()) == 0 {
		t.Fatalf("the group's member read nothing: %v", fs.Err())
	}
	core, logs := observer.New(zapcore.DebugLevel)
	s := w.positioned(newShared(), 0, 1, zap.New(core), true, WithCommitPeriod(5*time.Millisecond))
	a, _ := next(t, s)
	s.Ack(a)
	const msg = "kafka: committing the checkpointed offsets to the group (for lag monitoring) failed"
	testsupport.WaitUntil(t, 20*time.Second, "two refused lag commits", func() bool { return logs.FilterMessage(msg).Len() >= 2 })
	if n := logs.FilterMessage(msg).FilterLevelExact(zapcore.WarnLevel).Len(); n != 1 {
		t.Errorf("%d warnings of a refused lag commit, want 1", n)
	}
}

// A hold takes its partition's records out of the queue, not those of other
// partitions queued behind the failed record.
func TestPositionedHoldKeepsOtherPartitionsQueued(t *testing.T) {
	w := newKWorldOf(t, 2)
	w.produceTo(0, 0, 2)
	w.produceTo(1, 0, 2)
	sh := newShared()
	b := backoff{initial: time.Hour, period: time.Hour, max: time.Hour, retries: 5}
	sh.fail(recordKey{"in", 0, 0}, time.Now(), b)
	s := w.positioned(sh, 0, 1, nil, false, WithRetry(b.initial, b.period, b.max, b.retries))
	w.discover(s)
	for _, want := range []int64{0, 1} {
		if id, r := next(t, s); r.Partition != 1 || id.offset != want {
			t.Fatalf("emitted in[%d] at %d, want in[1] at %d while in[0] is held", r.Partition, id.offset, want)
		}
	}
	nothing(t, s)
}

// A record given up as the last one read moves the position past it.
func TestPositionedSkipsTheLastRecord(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 2)
	sh := newShared()
	sh.fail(recordKey{"in", 0, 1}, time.Now(), backoff{retries: 0})
	s := w.positioned(sh, 0, 1, nil, false, WithRetry(0, 0, 0, 0))
	w.discover(s)
	if id, _ := next(t, s); id.offset != 0 {
		t.Fatalf("emitted %d, want 0", id.offset)
	}
	nothing(t, s)
	if pos, _ := decodePosition(s.Position()); pos[key{"in", 0}] != 2 {
		t.Errorf("position %v after skipping the last record, want in[0] at 2", pos)
	}
}
