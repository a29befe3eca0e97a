package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// txnWorld is a kfake broker with topic "out" and what the tests of txns
// need around it.
type txnWorld struct {
	t     *testing.T
	c     *kfake.Cluster
	ctx   context.Context
	seeds []string
	info  dsl.TaskInfo
	next  int // the value of the next record produced
}

func newTxnWorld(t *testing.T) *txnWorld {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(30*time.Second))
	t.Cleanup(cancel)
	info := dsl.TaskInfo{Topology: "topo", Component: "sink", Index: 0}
	info.Settings.CheckpointInterval = 10 * time.Millisecond
	return &txnWorld{t: t, c: c, ctx: ctx, seeds: c.ListenAddrs(), info: info}
}

// open creates a task's producers, as a new incarnation does, and recovers
// prepared.
func (w *txnWorld) open(prepared []byte) *txns {
	w.t.Helper()
	tx, err := newTxns(w.info, sinkConfig{}, []kgo.Opt{kgo.SeedBrokers(w.seeds...)}, zap.NewNop())
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(tx.close)
	if err := tx.recoverCheckpoint(w.ctx, prepared); err != nil {
		w.t.Fatalf("recovering %x: %v", prepared, err)
	}
	return tx
}

// produce produces n records in tx's open transaction.
func (w *txnWorld) produce(tx *txns, n int) {
	w.t.Helper()
	for range n {
		cl, _, err := tx.producer()
		if err != nil {
			w.t.Fatal(err)
		}
		rec := &kgo.Record{Topic: "out", Key: fmt.Appendf(nil, "%d", w.next), Value: fmt.Appendf(nil, "%d", w.next)}
		w.next++
		if err := cl.ProduceSync(w.ctx, rec).FirstErr(); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *txnWorld) prepare(tx *txns, id uint64) []byte {
	w.t.Helper()
	b, err := tx.prepareCheckpoint(w.ctx, id, func(int) bool { return false })
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// committed reads the whole topic read_committed: the values and how often
// each was read. It returns once the last stable offset of every partition
// was reached, so an open transaction makes it wait (until ctx ends).
func (w *txnWorld) committed() map[string]int {
	w.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.seeds...), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		w.t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]int{}
	// A probe record, produced outside any transaction, comes after every
	// transactional record: once it is read, all before it was decided.
	probe := &kgo.Record{Topic: "out", Partition: 0, Value: []byte("probe")}
	prod, err := kgo.NewClient(kgo.SeedBrokers(w.seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		w.t.Fatal(err)
	}
	defer prod.Close()
	for p := range int32(2) {
		probe.Partition = p
		if err := prod.ProduceSync(w.ctx, probe).FirstErr(); err != nil {
			w.t.Fatal(err)
		}
	}
	probes := 0
	for probes < 2 {
		fs := cl.PollFetches(w.ctx)
		if err := w.ctx.Err(); err != nil {
			w.t.Fatalf("reading the committed records: %v (read %v so far)", err, seen)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "probe" {
				probes++
				return
			}
			seen[string(r.Value)]++
		})
	}
	return seen
}

// exactly checks that the committed values are 0..n-1 once each.
func (w *txnWorld) exactly(n int, seen map[string]int) {
	w.t.Helper()
	for i := range n {
		if c := seen[fmt.Sprint(i)]; c != 1 {
			w.t.Errorf("value %d read %d times, want once", i, c)
		}
	}
	if len(seen) != n {
		w.t.Errorf("read %d distinct values, want %d: %v", len(seen), n, seen)
	}
}

// A crash after the store committed checkpoint 1 but before CommitCheckpoint
// ran: the next incarnation commits checkpoint 1's transaction from the bytes
// the checkpoint stored and aborts the one that took the inputs after the
// barrier (they are replayed).
func TestTxnsRecoverCommitsThePreparedAndAbortsTheOpen(t *testing.T) {
	w := newTxnWorld(t)
	first := w.open(nil)
	w.produce(first, 10)
	prepared := w.prepare(first, 1)
	w.produce(first, 5) // after the barrier: checkpoint 2's transaction
	first.close()       // the crash: nothing ended

	w.next = 10 // the replay of what checkpoint 1 does not cover
	second := w.open(prepared)
	w.exactly(10, w.committed()) // checkpoint 1's, and nothing of the aborted one
	w.produce(second, 5)
	p2 := w.prepare(second, 2)
	if err := second.commitCheckpoint(w.ctx, 2); err != nil {
		t.Fatal(err)
	}
	w.exactly(15, w.committed())

	// Recovering from checkpoint 2 again (a crash right after its commit)
	// commits nothing twice.
	second.close()
	w.open(p2)
	w.exactly(15, w.committed())
}

// Recovering checkpoint 1 after its transaction was committed and the
// producer moved on to later transactions is harmless.
func TestTxnsRecoverAfterTheCommitIsHarmless(t *testing.T) {
	w := newTxnWorld(t)
	tx := w.open(nil)
	var first []byte
	for id := uint64(1); id <= 3; id++ {
		w.produce(tx, 4)
		p := w.prepare(tx, id)
		if id == 1 {
			first = p
		}
		if err := tx.commitCheckpoint(w.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	tx.close()
	w.open(first)
	w.exactly(12, w.committed())
}

// A checkpoint with nothing produced prepares nothing, and one whose
// transaction had a failed record is refused.
func TestTxnsPrepareEmptyAndFailed(t *testing.T) {
	w := newTxnWorld(t)
	tx := w.open(nil)
	if b := w.prepare(tx, 1); b != nil {
		t.Fatalf("prepared %x with nothing produced", b)
	}
	w.produce(tx, 1)
	if _, err := tx.prepareCheckpoint(w.ctx, 2, func(int) bool { return true }); err == nil {
		t.Fatal("a transaction with a failed record was prepared")
	}
}

func TestTxnsRefuseATimeoutTheCheckpointsOutlast(t *testing.T) {
	info := dsl.TaskInfo{Topology: "topo", Component: "sink"}
	info.Settings.CheckpointInterval = time.Minute
	_, err := newTxns(info, sinkConfig{txnTimeout: 90 * time.Second}, nil, zap.NewNop())
	if err == nil {
		t.Fatal("a 90 s transaction timeout was taken with 1 min checkpoints")
	}
	t.Log(err)
}

func TestPreparedRoundTrip(t *testing.T) {
	p := preparedTxn{id: "goshelter/t/c/3/1", pid: 4242, epoch: 17}
	got, err := decodePrepared(p.encode())
	if err != nil || got != p {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, p)
	}
	for _, bad := range [][]byte{nil, {2}, {1, 200}, append(p.encode(), 0)} {
		if _, err := decodePrepared(bad); err == nil {
			t.Errorf("decoded %x", bad)
		}
	}
}

// The transaction timeout must be above twice the checkpoint interval; zero
// means the default, a minute.
func TestTxnsTimeoutBound(t *testing.T) {
	for _, tc := range []struct {
		timeout, interval time.Duration
		ok                bool
	}{
		{0, 29 * time.Second, true},
		{0, 30 * time.Second, false},
		{2*time.Second + 1, time.Second, true},
		{2 * time.Second, time.Second, false},
	} {
		info := dsl.TaskInfo{Topology: "topo", Component: "sink"}
		info.Settings.CheckpointInterval = tc.interval
		tx, err := newTxns(info, sinkConfig{txnTimeout: tc.timeout}, []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, zap.NewNop())
		if tx != nil {
			tx.close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("timeout %v with checkpoints every %v: %v", tc.timeout, tc.interval, err)
		}
		if err != nil && !strings.Contains(err.Error(), "twice the checkpoint interval "+tc.interval.String()) {
			t.Errorf("the error does not name the interval: %v", err)
		}
	}
}

// The ids are the prefix (default, or set, even to ""), the topology, the
// component, the task and the producer.
func TestTxnsIDs(t *testing.T) {
	info := dsl.TaskInfo{Topology: "topo", Component: "sink", Index: 3}
	for _, tc := range []struct {
		sc   sinkConfig
		want string
	}{
		{sinkConfig{}, "goshelter/topo/sink/3/"},
		{sinkConfig{txnPrefix: "p-", txnPrefixed: true}, "p-topo/sink/3/"},
		{sinkConfig{txnPrefixed: true}, "topo/sink/3/"},
	} {
		tx, err := newTxns(info, tc.sc, []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		tx.close()
		if tx.ids != [2]string{tc.want + "0", tc.want + "1"} || tx.prepared != -1 {
			t.Errorf("ids %v, prepared %d; want %s0 and 1, -1", tx.ids, tx.prepared, tc.want)
		}
	}
}

// A producer that cannot be created fails the task; what was created is
// closed.
func TestTxnsRefuseABadProducer(t *testing.T) {
	info := dsl.TaskInfo{Topology: "topo", Component: "sink"}
	_, err := newTxns(info, sinkConfig{}, []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1"), kgo.MaxProduceRequestsInflightPerBroker(2)}, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), `creating the producer of transactional id "goshelter/topo/sink/0/0"`) {
		t.Errorf("newTxns with a bad option = %v", err)
	}
}

// What recovery cannot read or reach is an error.
func TestTxnsRecoverFailures(t *testing.T) {
	w := newTxnWorld(t)
	tx := w.open(nil)
	if err := tx.recoverCheckpoint(w.ctx, []byte{9}); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Errorf("recovering unreadable bytes = %v", err)
	}
	w.produce(tx, 1)
	prepared := w.prepare(tx, 1)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	fresh, err := newTxns(w.info, sinkConfig{}, []kgo.Opt{kgo.SeedBrokers(w.seeds...)}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.close()
	if err := fresh.recoverCheckpoint(done, prepared); err == nil || !strings.Contains(err.Error(), "committing the prepared transaction") {
		t.Errorf("recovering with a context that is over = %v", err)
	}
	if err := fresh.recoverCheckpoint(done, nil); err == nil || !strings.Contains(err.Error(), "initialising the producer") {
		t.Errorf("initialising with a context that is over = %v", err)
	}
}

// A transaction that cannot begin is an error of the input that needed it.
func TestTxnsBeginFailure(t *testing.T) {
	w := newTxnWorld(t)
	tx := w.open(nil)
	if err := tx.cls[0].BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tx.producer(); err == nil || !strings.Contains(err.Error(), "beginning a transaction") {
		t.Errorf("producer() with a transaction begun behind its back = %v", err)
	}
	s := &sink[int]{route: route, tx: tx, ctx: w.ctx}
	if err := s.Execute(1, dsl.Tuple{Value: 1}, nil); err == nil {
		t.Error("Execute produced with no transaction")
	}
}

// The checkpoint hooks of a sink under state: the two producers alternate,
// each checkpoint's records committed once the store committed it.
func TestSinkUnderState(t *testing.T) {
	w := newTxnWorld(t)
	posts := make(chan func(dsl.Collector), 16)
	info := w.info
	info.Checkpointed = true
	info.Post = func(fn func(dsl.Collector)) { posts <- fn }
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	s, err := newSink(info.WithContext(ctx), defaults(), w.seeds, func(n int) Record {
		return Record{Topic: "out", Key: fmt.Appendf(nil, "%d", n), Value: fmt.Appendf(nil, "%d", n)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecoverCheckpoint(nil); err != nil {
		t.Fatal(err)
	}
	var out outcomes
	n := 0
	for id := uint64(1); id <= 3; id++ {
		for range 2 {
			if err := s.Execute(n, dsl.Tuple{Value: n}, &out); err != nil {
				t.Fatal(err)
			}
			n++
		}
		for len(out.acked) < n {
			testsupport.Recv(t, posts, 20*time.Second, "the sink's drain")(&out)
		}
		if s.failedTxn(0) || s.failedTxn(1) {
			t.Fatalf("a transaction is marked failed: %v", s.failed)
		}
		b, err := s.PrepareCheckpoint(id)
		if err != nil || b == nil {
			t.Fatalf("PrepareCheckpoint(%d) = %x, %v", id, b, err)
		}
		if err := s.CommitCheckpoint(id); err != nil {
			t.Fatal(err)
		}
	}
	w.exactly(6, w.committed())
}

// Every check of decodePrepared, at its bound.
func TestDecodePreparedBounds(t *testing.T) {
	tail := func(b []byte, pid, epoch int64) []byte {
		return binary.AppendVarint(binary.AppendVarint(b, pid), epoch)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		says string // "" when valid
	}{
		{"version only", []byte{1}, "bad transactional id"},
		{"id longer than the rest", append(make([]byte, 0, 4), 1, 3, 'a', 'b'), "bad transactional id"},
		{"id to the end", []byte{1, 2, 'a', 'b'}, "bad producer id"},
		{"no epoch", binary.AppendVarint([]byte{1, 1, 'a'}, 5), "bad epoch"},
		{"epoch -1", tail([]byte{1, 1, 'a'}, 5, -1), "bad epoch"},
		{"epoch 0", tail([]byte{1, 1, 'a'}, 5, 0), ""},
		{"epoch max", tail([]byte{1, 1, 'a'}, 5, 1<<15-1), ""},
		{"epoch over", tail([]byte{1, 1, 'a'}, 5, 1<<15), "bad epoch"},
		{"empty id", tail([]byte{1, 0}, 5, 1), ""},
	} {
		p, err := decodePrepared(tc.b)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%s: decoded %+v, %v; want an error saying %q", tc.name, p, err, tc.says)
		}
	}
}

// A flush that does not end in time fails the checkpoint, naming the
// transaction.
func TestTxnsPrepareFlushFails(t *testing.T) {
	w := newTxnWorld(t)
	tx := w.open(nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	w.c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		w.c.KeepControl()
		w.c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	cl, _, err := tx.producer()
	if err != nil {
		t.Fatal(err)
	}
	cl.Produce(w.ctx, &kgo.Record{Topic: "out", Value: []byte("held")}, nil)
	ctx, cancel := context.WithTimeout(w.ctx, testsupport.Scaled(300*time.Millisecond))
	defer cancel()
	if _, err := tx.prepareCheckpoint(ctx, 1, func(int) bool { return false }); err == nil ||
		!strings.Contains(err.Error(), `flushing transaction of "goshelter/topo/sink/0/0" for checkpoint 1`) {
		t.Errorf("prepareCheckpoint with a flush that does not end = %v", err)
	}
}
