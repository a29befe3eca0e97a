package kafka

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// kworld is a kfake broker with topic "in" (one partition) and a client to
// produce to it and read the group's commits: a spout task's surroundings,
// driven by hand (Next, Ack, Nack on the test's goroutine).
type kworld struct {
	t     *testing.T
	c     *kfake.Cluster
	seeds []string
	cl    *kgo.Client
	adm   *kadm.Client
	ctx   context.Context
	// translate is the spouts' translate function (identity unless set).
	translate func(Record) Record
}

func newKWorld(t *testing.T) *kworld { t.Helper(); return newKWorldOf(t, 1) }

// newKWorldOf is newKWorld with topic "in" of the given partitions.
func newKWorldOf(t *testing.T, partitions int32) *kworld {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "in"), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(30*time.Second))
	t.Cleanup(cancel)
	return &kworld{t: t, c: c, seeds: c.ListenAddrs(), cl: cl, adm: kadm.NewClient(cl), ctx: ctx,
		translate: func(r Record) Record { return r }}
}

// produce writes values from..to-1 to in[0] (at offsets from..to-1 when the
// partition held from records).
func (w *kworld) produce(from, to int) {
	w.t.Helper()
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		rs = append(rs, &kgo.Record{Topic: "in", Value: fmt.Appendf(nil, "%d", i),
			Headers: []kgo.RecordHeader{{Key: "n", Value: fmt.Appendf(nil, "%d", i)}}})
	}
	if err := w.cl.ProduceSync(w.ctx, rs...).FirstErr(); err != nil {
		w.t.Fatal(err)
	}
}

// committed is group's committed offset of in[0], -1 for none.
func (w *kworld) committed(group string) int64 {
	w.t.Helper()
	os, err := w.adm.FetchOffsets(w.ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		w.t.Fatal(err)
	}
	if o, ok := os.Lookup("in", 0); ok {
		return o.At
	}
	return -1
}

func (w *kworld) commit(group string, at int64) {
	w.t.Helper()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "in", Partition: 0, At: at, LeaderEpoch: -1})
	if resp, err := w.adm.CommitOffsets(w.ctx, group, os); err != nil || resp.Error() != nil {
		w.t.Fatalf("committing %d for %q: %v %v", at, group, err, resp.Error())
	}
}

// open starts a consumer-group spout task of group reading "in", its commit
// period an hour unless opts say otherwise (the tests make commits due by
// hand). The task ends with the test.
func (w *kworld) open(group string, opts ...Option) *spout[Record] {
	w.t.Helper()
	cfg := defaults()
	cfg.commitPeriod = time.Hour
	for _, o := range opts {
		o(&cfg)
	}
	cfg.client = append([]kgo.Opt{kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(50 * time.Millisecond),
		kgo.RebalanceTimeout(2 * time.Second), kgo.FetchMaxWait(50 * time.Millisecond)}, cfg.client...)
	ctx, cancel := context.WithCancel(context.Background())
	info := dsl.TaskInfo{Parallelism: 1}.WithContext(ctx)
	info.Settings.SpoutWait = 20 * time.Millisecond
	s, err := newSpout(info, cfg, w.translate, w.seeds, group, []string{"in"}, &firstSeen{m: map[key]bool{}}, newShared())
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { end(s, cancel) })
	return s
}

// end ends a task a test opened: what the test left open is abandoned. A
// panic of the test with mu held (a broken build's) leaves the client open
// rather than the cleanup deadlocked, so that the test fails instead of
// hanging.
func end(s *spout[Record], cancel context.CancelFunc) {
	defer cancel()
	if !s.mu.TryLock() {
		return
	}
	s.open = 0
	s.mu.Unlock()
	s.stop()
}

// next calls Next until it emits, within a deadline.
func next(t *testing.T, s *spout[Record]) (msgID, Record) {
	t.Helper()
	var id msgID
	var r Record
	testsupport.WaitUntil(t, 20*time.Second, "a record from Next", func() bool {
		var ok bool
		id, r, ok = s.Next()
		return ok
	})
	return id, r
}

// nothing checks that Next emits nothing, a few calls in a row.
func nothing(t *testing.T, s *spout[Record]) {
	t.Helper()
	for range 3 {
		if id, r, ok := s.Next(); ok {
			t.Fatalf("Next emitted %s at %d, want nothing", r.Value, id.offset)
		}
	}
}

// commitNow makes the commit period over: the next Next or Ack commits.
func commitNow(s *spout[Record]) { s.due.Store(true) }

func (s *spout[T]) openCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// panicOnceAt makes the spouts' translation panic the first time it meets
// the record at offset, and pass every record through otherwise; it returns
// how many times that record was translated so far.
func (w *kworld) panicOnceAt(offset int64) (tries *int) {
	tries = new(int)
	w.translate = func(r Record) Record {
		if r.Offset == offset {
			if *tries++; *tries == 1 {
				panic("first time")
			}
		}
		return r
	}
	return tries
}

func (w *kworld) awaitCommitted(group string, want int64) {
	w.t.Helper()
	var at int64
	if !testsupport.Await(testsupport.Scaled(20*time.Second), func() bool { at = w.committed(group); return at == want }) {
		w.t.Fatalf("group %q committed %d, want %d", group, at, want)
	}
}

// awaitAnswered waits until no commit of the spout's is in flight: the broker
// stores a commit before the client hands its answer to the spout.
func awaitAnswered(t *testing.T, s *spout[Record]) {
	t.Helper()
	testsupport.WaitUntil(t, 20*time.Second, "the commit's answer", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return !s.committing
	})
}

func TestSpoutCommitsOnlyWhatIsAcked(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	s := w.open("g")
	var ids []msgID
	for want := range int64(3) {
		id, r := next(t, s)
		if id.offset != want || r.Offset != want || string(r.Value) != fmt.Sprint(want) || r.Topic != "in" ||
			len(r.Headers) != 1 || string(r.Headers[0].Value) != fmt.Sprint(want) {
			t.Fatalf("emitted %+v (id at %d), want offset %d", r, id.offset, want)
		}
		ids = append(ids, id)
	}
	if n := s.openCount(); n != 3 {
		t.Errorf("open = %d after 3 emits, want 3", n)
	}
	s.Ack(ids[0])
	s.Ack(ids[2])
	commitNow(s)
	nothing(t, s)
	w.awaitCommitted("g", 1) // 1 is not done: the commit stops before it
	awaitAnswered(t, s)
	s.mu.Lock()
	committing, committed := s.committing, ids[0].p.committed
	s.mu.Unlock()
	if committing || committed != 1 {
		t.Errorf("after the commit's answer: committing %v, partition committed at %d, want false, 1", committing, committed)
	}
	commitNow(s)
	s.Ack(ids[1]) // the Ack commits when it is due
	w.awaitCommitted("g", 3)
	awaitAnswered(t, s)
	if n := s.openCount(); n != 0 {
		t.Errorf("open = %d after every record was acked", n)
	}
	// Nothing new done: a due period commits nothing.
	commitNow(s)
	nothing(t, s)
	s.mu.Lock()
	committing = s.committing
	s.mu.Unlock()
	if committing {
		t.Error("a commit is in flight with nothing to commit")
	}
}

// A nacked record comes again after its back-off (initial, here none) before
// the records after it; after its retries it is given up, reported and
// committed past.
func TestSpoutRetriesThenGivesUp(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 2)
	var given []Record
	var metric atomic.Int64
	s := w.open("g", WithRetry(0, time.Hour, time.Hour, 1), WithGiveUp(func(r Record) { given = append(given, r) }))
	s.metric = func(name string, v any) {
		if name == "kafka-gave-up" {
			metric.Store(v.(int64))
		}
	}
	first, _ := next(t, s)
	s.Nack(first)
	again, r := next(t, s)
	if again.offset != 0 || r.Offset != 0 {
		t.Fatalf("after a nack of 0 Next emitted %d, want 0 again", r.Offset)
	}
	if n := s.openCount(); n != 1 {
		t.Errorf("open = %d with the retry emitted, want 1", n)
	}
	second, _ := next(t, s)
	if second.offset != 1 {
		t.Fatalf("then %d, want 1", second.offset)
	}
	s.Nack(again) // its second fail: over the one retry
	if len(given) != 1 || given[0].Offset != 0 || metric.Load() != 1 {
		t.Fatalf("given up %v (metric %d), want offset 0 once", given, metric.Load())
	}
	nothing(t, s)
	s.Ack(second)
	commitNow(s)
	nothing(t, s)
	w.awaitCommitted("g", 2)
}

// A retry waits for its back-off: it is not emitted before it is due, nor
// are retries emitted out of their order.
func TestSpoutHoldsARetryUntilItIsDue(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	s := w.open("g", WithRetry(time.Hour, time.Hour, time.Hour, 5))
	var ids []msgID
	for range 3 {
		id, _ := next(t, s)
		ids = append(ids, id)
	}
	s.Nack(ids[1])
	nothing(t, s)
	s.Nack(ids[0])
	s.Nack(ids[2])
	// Make the later ones due, in an order of their own.
	s.mu.Lock()
	for i := range s.retries {
		s.retries[i].due = time.Now().Add(-time.Duration(10-s.retries[i].offset) * time.Second)
	}
	heap.Init(&s.retries)
	s.mu.Unlock()
	var last msgID
	for _, want := range []int64{0, 1, 2} {
		if last, _ = next(t, s); last.offset != want {
			t.Fatalf("retry emitted %d, want %d", last.offset, want)
		}
	}
	// A retry of a record whose partition was revoked meanwhile is dropped
	// when it is due.
	s.Nack(last)
	s.forget(map[string][]int32{"in": {0}}, false)
	s.mu.Lock()
	s.retries[0].due = time.Now()
	s.mu.Unlock()
	nothing(t, s)
	if len(s.retries) != 0 {
		t.Errorf("%d retries left", len(s.retries))
	}
}

// At the bound of uncommitted offsets the partition pauses; a commit that
// brings it below resumes it.
func TestSpoutPausesAtMaxUncommitted(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 5)
	s := w.open("g", WithMaxUncommitted(2))
	a, _ := next(t, s)
	b, _ := next(t, s)
	s.mu.Lock()
	paused := a.p.paused
	s.mu.Unlock()
	if !paused || b.offset != 1 {
		t.Fatalf("after 2 records of a bound of 2: paused %v, last %d", paused, b.offset)
	}
	nothing(t, s)
	s.Ack(a)
	s.Ack(b)
	commitNow(s)
	nothing(t, s)
	w.awaitCommitted("g", 2)
	if id, _ := next(t, s); id.offset != 2 {
		t.Fatalf("after the commit Next emitted %d, want 2", id.offset)
	}
}

// At most once, a poll's offsets are committed before any of its records is
// emitted, and nothing is tracked.
func TestSpoutAtMostOnceCommitsBeforeEmitting(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	calls := 0
	w.translate = func(r Record) Record {
		calls++
		if r.Offset == 1 {
			panic("no")
		}
		return r
	}
	s := w.open("g", WithGuarantee(AtMostOnce))
	id, _ := next(t, s)
	if at := w.committed("g"); at != 3 || id.offset != 0 {
		t.Fatalf("emitted %d with the commit at %d, want 0 and 3", id.offset, at)
	}
	// 1's translation panics: dropped, not retried.
	if id, _ := next(t, s); id.offset != 2 {
		t.Fatalf("then %d, want 2", id.offset)
	}
	nothing(t, s)
	if calls != 3 || s.openCount() != 0 {
		t.Errorf("translated %d times, open %d; want 3, 0", calls, s.openCount())
	}
	s.mu.Lock()
	flowing := s.flowing
	s.mu.Unlock()
	if !flowing {
		t.Error("at most once waited for the client: only tracked guarantees wait")
	}
}

// No guarantee: what was polled is committed when due, done or not.
func TestSpoutNoGuaranteeCommitsWhatIsPolled(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	s := w.open("g", WithGuarantee(NoGuarantee))
	for range 3 {
		next(t, s)
	}
	if n := s.openCount(); n != 0 {
		t.Errorf("open = %d, want 0: nothing is tracked", n)
	}
	commitNow(s)
	nothing(t, s)
	w.awaitCommitted("g", 3)
}

// A record whose translation panics is failed: retried after its back-off.
func TestSpoutRetriesARecordWhoseTranslationPanicked(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 3)
	tries := w.panicOnceAt(1)
	s := w.open("g")
	for _, want := range []int64{0, 1, 2} {
		if id, _ := next(t, s); id.offset != want {
			t.Fatalf("emitted %d, want %d", id.offset, want)
		}
	}
	if *tries != 2 || s.openCount() != 3 {
		t.Errorf("1 translated %d times, open %d; want 2, 3", *tries, s.openCount())
	}
}

// While records flow, a dry buffer makes Next wait for the client (up to the
// spout wait); a wait that finds nothing stops the flow.
func TestSpoutWaitsOnlyWhileRecordsFlow(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 1)
	s := w.open("g")
	if s.wait != 20*time.Millisecond {
		t.Fatalf("wait = %v, want the spout wait", s.wait)
	}
	next(t, s)
	s.mu.Lock()
	flowing := s.flowing
	s.mu.Unlock()
	if !flowing {
		t.Fatal("not flowing after a poll took a record")
	}
	nothing(t, s)
	s.mu.Lock()
	flowing = s.flowing
	s.mu.Unlock()
	if flowing {
		t.Error("still flowing after a wait found nothing")
	}
	w.produce(1, 2)
	if id, _ := next(t, s); id.offset != 1 {
		t.Errorf("emitted %d, want 1", id.offset)
	}
}

// The client closes once the task stops and no record is open: at the stop,
// or at the last ack or nack.
func TestSpoutClosesAfterTheLastOpenRecord(t *testing.T) {
	for _, how := range []string{"ack", "nack"} {
		t.Run(how, func(t *testing.T) {
			w := newKWorld(t)
			w.produce(0, 2)
			s := w.open("g")
			core, logs := observer.New(zapcore.WarnLevel)
			s.log = zap.New(core)
			a, _ := next(t, s)
			b, _ := next(t, s)
			s.Deactivate()
			s.Ack(a)
			if s.life.Err() != nil {
				t.Fatal("closed with a record open")
			}
			if how == "ack" {
				s.Ack(b)
			} else {
				s.Nack(b)
			}
			if s.life.Err() == nil {
				t.Fatal("not closed after the last open record")
			}
			// Leaving the group commits what is done: all, or up to the
			// nacked record.
			w.awaitCommitted("g", map[string]int64{"ack": 2, "nack": 1}[how])
			if logs.Len() != 0 {
				t.Errorf("the close logged %v", logs.All())
			}
		})
	}
}

// Earliest and Latest ignore the group's commit the first time the definition
// reads a partition; the uncommitted strategies resume from it.
func TestSpoutFirstPoll(t *testing.T) {
	w := newKWorld(t)
	w.produce(0, 4)
	for _, tc := range []struct {
		fp   FirstPoll
		want int64
	}{{UncommittedEarliest, 2}, {Earliest, 0}, {UncommittedLatest, 2}} {
		group := tc.fp.String()
		w.commit(group, 2)
		s := w.open(group, WithFirstPoll(tc.fp))
		if id, _ := next(t, s); id.offset != tc.want {
			t.Errorf("%v: first record %d, want %d", tc.fp, id.offset, tc.want)
		}
	}
}

func TestFirstPollReset(t *testing.T) {
	start, end := kgo.NewOffset().AtStart(), kgo.NewOffset().AtEnd()
	for f, want := range map[FirstPoll]kgo.Offset{UncommittedEarliest: start, Earliest: start, UncommittedLatest: end, Latest: end} {
		if got := f.reset(); got != want {
			t.Errorf("%v.reset() = %v, want %v", f, got, want)
		}
	}
	seen := &firstSeen{m: map[key]bool{}}
	adjust := seen.adjust(start)
	committed := kgo.NewOffset().At(7)
	got, _ := adjust(context.Background(), map[string]map[int32]kgo.Offset{"t": {0: committed}})
	if got["t"][0] != start {
		t.Errorf("first assignment starts at %v, want the start", got["t"][0])
	}
	got, _ = adjust(context.Background(), map[string]map[int32]kgo.Offset{"t": {0: committed, 1: committed}})
	if got["t"][0] != committed || got["t"][1] != start {
		t.Errorf("second assignment: %v, want 0 at the commit, 1 (new) at the start", got["t"])
	}
}

func TestNewSpoutModes(t *testing.T) {
	w := newKWorld(t)
	for _, tc := range []struct {
		name                string
		checkpointed        bool
		g                   Guarantee
		positioned          bool
		index, parallelism  int
		share, count        int
		wantGlobal, wantAll int
	}{
		{"group", false, AtLeastOnce, false, 1, 2, 0, 1, 1, 2},
		{"checkpointed", true, AtLeastOnce, true, 1, 2, 1, 3, 3, 6},
		{"checkpointed at most once", true, AtMostOnce, false, 0, 3, 2, 4, 6, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaults()
			cfg.guarantee, cfg.share = tc.g, share{tc.share, tc.count}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			info := dsl.TaskInfo{Index: tc.index, Parallelism: tc.parallelism, Checkpointed: tc.checkpointed}.WithContext(ctx)
			info.Settings.SpoutWait = time.Hour
			s, err := newSpout(info, cfg, func(r Record) Record { return r }, w.seeds, "g", []string{"in"}, &firstSeen{m: map[key]bool{}}, newShared())
			if err != nil {
				t.Fatal(err)
			}
			defer s.stop()
			if s.positioned != tc.positioned || s.global != tc.wantGlobal || s.tasks != tc.wantAll || s.wait != maxAwait {
				t.Errorf("positioned %v, task %d of %d, wait %v", s.positioned, s.global, s.tasks, s.wait)
			}
			// No logger, no metric in the TaskInfo: the spout has its own.
			s.reportGiveUp(&kgo.Record{Topic: "t"}, 1)
		})
	}
}

// A client that cannot be created fails the task: its Next emits nothing.
func TestSpoutWithNoClient(t *testing.T) {
	cfg := defaults()
	cfg.client = []kgo.Opt{kgo.MaxProduceRequestsInflightPerBroker(2)} // refused with idempotency
	for _, checkpointed := range []bool{false, true} {
		info := dsl.TaskInfo{Parallelism: 1, Checkpointed: checkpointed}
		s, err := newSpout(info, cfg, func(r Record) Record { return r }, []string{"127.0.0.1:1"}, "g", []string{"t"}, &firstSeen{m: map[key]bool{}}, newShared())
		if err == nil {
			s.stop()
			t.Fatal("a client with a bad option was created")
		}
		if _, _, ok := s.Next(); ok || s.life.Err() == nil {
			t.Error("a spout with no client emitted, or lives")
		}
		s.stop()
		s.Deactivate()
	}
}

func TestRetryHeapPopsTheEarliest(t *testing.T) {
	var h retryHeap
	base := time.Now()
	for _, i := range rand.Perm(20) {
		heap.Push(&h, retry{due: base.Add(time.Duration(i) * time.Second), offset: int64(i)})
	}
	for want := range int64(20) {
		if r := heap.Pop(&h).(retry); r.offset != want {
			t.Fatalf("popped %d, want %d", r.offset, want)
		}
		if len(h) != int(19-want) {
			t.Fatalf("%d left after %d pops", len(h), want+1)
		}
	}
}

func TestCommitError(t *testing.T) {
	ok := &kmsg.OffsetCommitResponse{Topics: []kmsg.OffsetCommitResponseTopic{{Topic: "t",
		Partitions: []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0}, {Partition: 1}}}}}
	if err := commitError(ok, nil); err != nil {
		t.Errorf("commitError(no error codes) = %v", err)
	}
	boom := errors.New("boom")
	if err := commitError(ok, boom); err != boom {
		t.Errorf("commitError(request failed) = %v, want it", err)
	}
	bad := &kmsg.OffsetCommitResponse{Topics: []kmsg.OffsetCommitResponseTopic{{Topic: "t",
		Partitions: []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0}, {Partition: 1, ErrorCode: kerr.RebalanceInProgress.Code}}}}}
	if err := commitError(bad, nil); !errors.Is(err, kerr.RebalanceInProgress) || err.Error() != "committing t[1]: "+kerr.RebalanceInProgress.Error() {
		t.Errorf("commitError(a partition failed) = %v", err)
	}
}

// The records of a poll made before a rebalance took their partition are
// dropped; those of partitions forgotten before the poll began are not.
func TestTakeDropsRecordsOfPartitionsForgottenWhileItPolled(t *testing.T) {
	s := bareSpout(defaults().retry, nil)
	fetch := func(ps ...int32) kgo.Fetches {
		var fps []kgo.FetchPartition
		for _, p := range ps {
			fps = append(fps, kgo.FetchPartition{Partition: p, Records: []*kgo.Record{{Topic: "t", Partition: p, Offset: 5}}})
		}
		return kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "t", Partitions: fps}}}}
	}
	s.epoch = 3
	s.goneAt[key{"t", 0}] = 2 // forgotten before a poll made at epoch 2
	s.goneAt[key{"t", 1}] = 3 // forgotten while it polled
	if n := s.takeLocked(fetch(0, 1, 2), 2); n != 2 || len(s.queue) != 2 || s.queue[0].rec.Partition != 0 || s.queue[1].rec.Partition != 2 {
		t.Fatalf("a poll of epoch 2 took %d: %v; want partitions 0 and 2", n, s.queue)
	}
	if n := s.takeLocked(fetch(0), 1); n != 0 {
		t.Errorf("a poll of epoch 1 took %d records of a partition forgotten at 2", n)
	}
	if n := s.takeLocked(fetch(1), 3); n != 1 {
		t.Errorf("a poll of the current epoch took %d, want 1", n)
	}
	p := s.parts[key{"t", 2}]
	if p == nil || p.polled != 6 || p.committed != 5 || len(p.open) != 1 || !s.flowing {
		t.Errorf("partition 2: %+v, flowing %v", p, s.flowing)
	}
}

// Untracked guarantees only move the polled offset.
func TestTakeUntracked(t *testing.T) {
	s := bareSpout(defaults().retry, nil)
	s.cfg.guarantee = NoGuarantee
	rs := kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{{Partition: 0,
		Records: []*kgo.Record{{Topic: "t", Offset: 3}, {Topic: "t", Offset: 4}}}}}}}}
	if n := s.takeLocked(rs, 0); n != 2 {
		t.Fatalf("took %d, want 2", n)
	}
	if p := s.parts[key{"t", 0}]; p.polled != 5 || len(p.open) != 0 || s.point(p) != 5 {
		t.Errorf("polled %d, %d open, point %d; want 5, 0, 5", p.polled, len(p.open), s.point(p))
	}
	idle := bareSpout(defaults().retry, nil)
	if idle.takeLocked(kgo.Fetches{}, 0) != 0 || idle.flowing {
		t.Error("an empty poll took records, or set the flow going")
	}
}

// A commit that leaves a paused partition at its bound keeps it paused; one
// that brings it below resumes it.
func TestResumeBelowTheBoundOnly(t *testing.T) {
	w := newKWorld(t)
	s := bareSpout(defaults().retry, nil)
	s.cl, s.cfg.maxUncommitted = w.cl, 2
	p := newPartition("t", 0, 7)
	p.polled, p.paused = 10, true
	s.parts[key{"t", 0}] = p
	s.markCommittedLocked(map[string]map[int32]kgo.EpochOffset{"t": {0: {Offset: 8}}})
	if !p.paused {
		t.Fatal("resumed with 2 uncommitted of a bound of 2")
	}
	s.markCommittedLocked(map[string]map[int32]kgo.EpochOffset{"t": {0: {Offset: 9}}})
	if p.paused {
		t.Error("still paused with 1 uncommitted of 2")
	}
}

func TestPollLimit(t *testing.T) {
	s := bareSpout(defaults().retry, nil)
	s.cfg.maxPoll, s.cfg.maxUncommitted = 50, 10
	if n := s.pollLimitLocked(); n != 10 {
		t.Errorf("no partition yet: limit %d, want the bound 10", n)
	}
	add := func(id int32, uncommitted int64, paused bool) {
		p := newPartition("t", id, 100)
		p.polled, p.paused = 100+uncommitted, paused
		s.parts[key{"t", id}] = p
	}
	add(0, 3, false)
	if n := s.pollLimitLocked(); n != 7 {
		t.Errorf("3 uncommitted of 10: limit %d, want 7", n)
	}
	add(1, 12, true) // paused: it takes nothing
	if n := s.pollLimitLocked(); n != 7 {
		t.Errorf("with a paused partition: limit %d, want 7", n)
	}
	add(2, 10, false) // at the bound, not paused yet
	if n := s.pollLimitLocked(); n != 1 {
		t.Errorf("with a full partition: limit %d, want 1", n)
	}
	s.cfg.guarantee = NoGuarantee
	if n := s.pollLimitLocked(); n != 50 {
		t.Errorf("untracked: limit %d, want max poll 50", n)
	}
}

// A commit's answer moves each partition's committed offset forward only.
func TestMarkCommittedMovesForward(t *testing.T) {
	s := bareSpout(defaults().retry, nil)
	p := newPartition("t", 0, 5)
	p.polled = 9
	s.parts[key{"t", 0}] = p
	s.markCommittedLocked(map[string]map[int32]kgo.EpochOffset{"t": {0: {Offset: 4}, 1: {Offset: 8}}})
	if p.committed != 5 {
		t.Errorf("committed %d after an older commit, want 5", p.committed)
	}
	s.markCommittedLocked(map[string]map[int32]kgo.EpochOffset{"t": {0: {Offset: 7}}})
	if p.committed != 7 || p.uncommitted() != 2 {
		t.Errorf("committed %d, uncommitted %d; want 7, 2", p.committed, p.uncommitted())
	}
}

// Lost partitions are forgotten without a commit, and at most once commits
// nothing when partitions are revoked (it committed at each poll).
func TestForgetWithoutACommit(t *testing.T) {
	for _, tc := range []struct {
		g      Guarantee
		commit bool
	}{{AtLeastOnce, false}, {AtMostOnce, true}} {
		s := bareSpout(defaults().retry, nil)
		s.cfg.guarantee = tc.g
		p := newPartition("t", 0, 0)
		s.parts[key{"t", 0}] = p
		rec(p, 0)
		p.finish(0)
		if req := s.forget(map[string][]int32{"t": {0}}, tc.commit); req != nil {
			t.Errorf("%v, commit %v: forget commits %v", tc.g, tc.commit, req)
		}
	}
}

// The definition is reliable at least once only, and a task whose client
// cannot be created fails.
func TestSpoutDefinition(t *testing.T) {
	w := newKWorld(t)
	bad := WithClientOptions(kgo.MaxProduceRequestsInflightPerBroker(2)) // refused with idempotency
	for _, tc := range []struct {
		g        Guarantee
		reliable bool
	}{{AtLeastOnce, true}, {AtMostOnce, false}, {NoGuarantee, false}} {
		for _, broken := range []bool{false, true} {
			ctx, cancel := context.WithCancel(context.Background())
			var failed []error
			info := dsl.TaskInfo{Parallelism: 1, Fail: func(err error) { failed = append(failed, err) }}.WithContext(ctx)
			opts := []Option{WithGuarantee(tc.g)}
			if broken {
				opts = append(opts, bad)
			}
			spec := Spout(w.seeds, "g", []string{"in"}, opts...)
			if spec.Reliable != tc.reliable {
				t.Errorf("%v: reliable %v", tc.g, spec.Reliable)
			}
			if tc.reliable {
				s := spec.Typed(info).Source().(*spout[Record])
				s.stop()
			} else if _, ok := spec.TypedNext(info)(); ok {
				t.Errorf("%v: emitted from an empty topic", tc.g)
			}
			cancel()
			if (len(failed) == 1) != broken {
				t.Errorf("%v, a bad client option %v: the task failed with %v", tc.g, broken, failed)
			}
		}
	}
}
