package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// outcomes is a Collector that records the inputs acked and failed.
type outcomes struct {
	acked, failed []int
}

func (o *outcomes) Emit(any)                                 {}
func (o *outcomes) EmitDirect(int, any)                      {}
func (o *outcomes) EmitAnchored([]dsl.Tuple, any)            {}
func (o *outcomes) EmitDirectAnchored(int, []dsl.Tuple, any) {}
func (o *outcomes) Ack(in dsl.Tuple)                         { o.acked = append(o.acked, in.Value.(int)) }
func (o *outcomes) Fail(in dsl.Tuple)                        { o.failed = append(o.failed, in.Value.(int)) }

// sinkWorld is a kfake broker with topic "out" and a sink task on it whose
// posts the test runs on its own goroutine.
type sinkWorld struct {
	t     *testing.T
	c     *kfake.Cluster
	seeds []string
	posts chan func(dsl.Collector)
	ctx   context.Context
	out   outcomes
}

func newSinkWorld(t *testing.T) *sinkWorld {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(30*time.Second))
	t.Cleanup(cancel)
	return &sinkWorld{t: t, c: c, seeds: c.ListenAddrs(), posts: make(chan func(dsl.Collector), 64), ctx: ctx}
}

// info is a task's TaskInfo, with no logger (the sink makes its own); the
// task's context ends with the test.
func (w *sinkWorld) info() dsl.TaskInfo {
	ctx, cancel := context.WithCancel(context.Background())
	w.t.Cleanup(cancel)
	return dsl.TaskInfo{Topology: "topo", Component: "sink", Post: func(fn func(dsl.Collector)) { w.posts <- fn }}.WithContext(ctx)
}

// route sends input n to "out", keyed, with a header and a timestamp.
func route(n int) Record {
	return Record{Topic: "out", Key: fmt.Appendf(nil, "k%d", n), Value: fmt.Appendf(nil, "%d", n),
		Headers:   []Header{{Key: "n", Value: fmt.Appendf(nil, "%d", n)}, {Key: "h", Value: []byte("x")}},
		Timestamp: time.UnixMilli(1_700_000_000_000 + int64(n))}
}

// settle runs the posted drains until n outcomes more than before came.
func (w *sinkWorld) settle(n int) {
	w.t.Helper()
	want := len(w.out.acked) + len(w.out.failed) + n
	for len(w.out.acked)+len(w.out.failed) < want {
		testsupport.Recv(w.t, w.posts, 20*time.Second, "the sink's drain")(&w.out)
	}
}

// read returns the records of "out", in order, until it has n.
func (w *sinkWorld) read(n int) []*kgo.Record {
	w.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.seeds...), kgo.ConsumeTopics("out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		w.t.Fatal(err)
	}
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(w.ctx)
		if w.ctx.Err() != nil {
			w.t.Fatalf("read %d records of %d", len(got), n)
		}
		got = append(got, fs.Records()...)
	}
	return got
}

// The sink produces what route says, headers and timestamp included, and acks
// each input once the broker has its record; the produced structs are reused.
func TestSinkProducesWhatRouteSays(t *testing.T) {
	w := newSinkWorld(t)
	s, err := newSink(w.info(), defaults(), w.seeds, route)
	if err != nil {
		t.Fatal(err)
	}
	if s.log == nil {
		t.Fatal("no logger in the TaskInfo: the sink has none either")
	}
	for n := range 3 {
		if err := s.Execute(n, dsl.Tuple{Value: n}, &w.out); err != nil {
			t.Fatal(err)
		}
	}
	w.settle(3)
	if len(s.free) != 3 || s.spare == nil {
		t.Fatalf("after 3 outcomes: %d free, spare %v; want 3 and the batch's slice", len(s.free), s.spare)
	}
	for _, p := range s.free {
		if p.txn != -1 || p.input.Value != nil || p.rec.Topic != "" || p.err != nil {
			t.Errorf("a free produced holds %+v", p)
		}
	}
	reused := map[*produced]bool{}
	for _, p := range s.free {
		reused[p] = true
	}
	for n := 3; n < 6; n++ {
		if err := s.Execute(n, dsl.Tuple{Value: n}, &w.out); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.free) != 0 {
		t.Errorf("%d free after 3 more inputs, want 0", len(s.free))
	}
	w.settle(3)
	if fmt.Sprint(sorted(w.out.acked)) != "[0 1 2 3 4 5]" || len(w.out.failed) != 0 {
		t.Fatalf("acked %v, failed %v", w.out.acked, w.out.failed)
	}
	for _, p := range s.free {
		delete(reused, p)
	}
	if len(reused) != 0 {
		t.Errorf("%d produced of the first inputs not reused", len(reused))
	}
	got := w.read(6)
	seen := map[string]bool{}
	for _, r := range got {
		n := string(r.Value)
		seen[n] = true
		var i int64
		fmt.Sscan(n, &i)
		if string(r.Key) != "k"+n || len(r.Headers) != 2 || r.Headers[0].Key != "n" || string(r.Headers[0].Value) != n ||
			r.Headers[1].Key != "h" || string(r.Headers[1].Value) != "x" || r.Timestamp.UnixMilli() != 1_700_000_000_000+i {
			t.Errorf("record %s: key %s, headers %v, timestamp %v", n, r.Key, r.Headers, r.Timestamp)
		}
	}
	if len(seen) != 6 {
		t.Errorf("read %v, want 0..5", seen)
	}
	// At-least-once: no checkpoint hooks at work.
	if err := s.RecoverCheckpoint([]byte("x")); err != nil {
		t.Error(err)
	}
	if b, err := s.PrepareCheckpoint(1); b != nil || err != nil {
		t.Errorf("PrepareCheckpoint = %x, %v", b, err)
	}
	if err := s.CommitCheckpoint(1); err != nil {
		t.Error(err)
	}
}

func sorted(xs []int) []int {
	out := append([]int(nil), xs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// An input whose record failed is failed, and logged.
func TestSinkFailsWhatTheBrokerRefused(t *testing.T) {
	w := newSinkWorld(t)
	cfg := defaults()
	WithClientOptions(kgo.UnknownTopicRetries(0))(&cfg)
	s, err := newSink(w.info(), cfg, w.seeds, func(n int) Record { return Record{Topic: "no-such-topic", Value: []byte("x")} })
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.WarnLevel)
	s.log = zap.New(core)
	if err := s.Execute(7, dsl.Tuple{Value: 7}, &w.out); err != nil {
		t.Fatal(err)
	}
	w.settle(1)
	if len(w.out.failed) != 1 || w.out.failed[0] != 7 || logs.FilterMessage("kafka: produce failed; failing the input").Len() != 1 {
		t.Errorf("failed %v, acked %v, logs %v", w.out.failed, w.out.acked, logs.All())
	}
	if s.failed != [2]bool{} {
		t.Errorf("outside transactions a failure marked %v", s.failed)
	}
}

// Outcomes are queued and drained in batches: one post per batch, and the
// drained batch's slice takes the next outcomes.
func TestSinkDrainsInBatches(t *testing.T) {
	var posts []func(dsl.Collector)
	s := &sink[int]{post: func(fn func(dsl.Collector)) { posts = append(posts, fn) }, log: zap.NewNop()}
	s.promise, s.drainFn = s.done, s.drain
	var out outcomes
	boom := errors.New("boom")
	for n := range 3 {
		p := s.take()
		p.input, p.txn = dsl.Tuple{Value: n}, -1
		p.rec.Context = p
		var err error
		if n == 1 {
			err = boom
		}
		s.done(&p.rec, err)
	}
	if len(posts) != 1 {
		t.Fatalf("%d posts for one batch, want 1", len(posts))
	}
	posts[0](&out)
	if fmt.Sprint(out.acked, out.failed) != "[0 2] [1]" {
		t.Errorf("acked %v, failed %v", out.acked, out.failed)
	}
	if s.posted || cap(s.spare) < 3 || len(s.spare) != 0 {
		t.Errorf("after the drain: posted %v, spare len %d cap %d", s.posted, len(s.spare), cap(s.spare))
	}
	p := s.take()
	p.input, p.txn = dsl.Tuple{Value: 9}, -1
	p.rec.Context = p
	s.done(&p.rec, nil)
	if len(posts) != 2 {
		t.Fatalf("%d posts, want a second for the next batch", len(posts))
	}
	posts[1](&out)
	if cap(s.outcomes) < 3 {
		t.Errorf("outcomes cap %d after the second drain: the first batch's slice is not reused", cap(s.outcomes))
	}
}

// In a transaction a failed record marks its producer's transaction, which
// the checkpoint then refuses; a record that succeeded marks nothing.
func TestSinkMarksTheTransactionOfAFailedRecord(t *testing.T) {
	for _, txn := range []int{0, 1} {
		s := &sink[int]{post: func(func(dsl.Collector)) {}, log: zap.NewNop()}
		s.promise, s.drainFn = s.done, s.drain
		ok := s.take()
		ok.txn = txn
		ok.rec.Context = ok
		s.done(&ok.rec, nil)
		if s.failedTxn(0) || s.failedTxn(1) {
			t.Fatalf("producer %d: a record that succeeded marked %v", txn, s.failed)
		}
		bad := s.take()
		bad.txn = txn
		bad.rec.Context = bad
		s.done(&bad.rec, errors.New("boom"))
		if !s.failedTxn(txn) || s.failedTxn(1-txn) {
			t.Errorf("producer %d: failed %v", txn, s.failed)
		}
	}
}

func TestSinkRefusesWhatItCannotProduce(t *testing.T) {
	w := newSinkWorld(t)
	s, err := newSink(w.info(), defaults(), w.seeds, func(n int) Record { return Record{Value: []byte("x")} })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Execute(1, dsl.Tuple{Value: 1}, &w.out); err == nil || !strings.Contains(err.Error(), "route gave a record with no topic for int") {
		t.Errorf("Execute of a record with no topic = %v", err)
	}
	none := &sink[int]{route: route}
	if err := none.Execute(1, dsl.Tuple{Value: 1}, &w.out); err == nil || err.Error() != "kafka: sink has no client" {
		t.Errorf("Execute with no client = %v", err)
	}
}

// A client that cannot be created fails the task.
func TestSinkWithNoClient(t *testing.T) {
	w := newSinkWorld(t)
	cfg := defaults()
	WithClientOptions(kgo.MaxProduceRequestsInflightPerBroker(2))(&cfg) // refused with idempotency
	if _, err := newSink(w.info(), cfg, w.seeds, route); err == nil || !strings.Contains(err.Error(), "creating the sink's client") {
		t.Errorf("newSink = %v, want the client's error", err)
	}
	info := w.info()
	info.Checkpointed = true
	info.Settings.CheckpointInterval = time.Second
	if _, err := newSink(info, cfg, w.seeds, route); err == nil || !strings.Contains(err.Error(), "transactional id") {
		t.Errorf("newSink under state = %v, want the producer's error", err)
	}
	// Through the definition, the error fails the task.
	for _, bad := range []bool{false, true} {
		var failed []error
		info := w.info()
		info.Fail = func(err error) { failed = append(failed, err) }
		opts := []Option{}
		if bad {
			opts = append(opts, WithClientOptions(kgo.MaxProduceRequestsInflightPerBroker(2)))
		}
		Sink(w.seeds, route, opts...).Typed(info)
		if (len(failed) == 1) != bad {
			t.Errorf("a sink with a bad client option %v failed the task with %v", bad, failed)
		}
	}
}

// At the stop, what is buffered gets a bounded flush, and a flush cut short
// is logged.
func TestSinkFlushesAtTheStop(t *testing.T) {
	w := newSinkWorld(t)
	held, release := make(chan struct{}, 1), make(chan struct{})
	w.c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		w.c.KeepControl()
		select {
		case held <- struct{}{}:
		default:
		}
		w.c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := defaults()
	cfg.closeTimeout = 10 * time.Millisecond
	core, logs := observer.New(zap.WarnLevel)
	info := dsl.TaskInfo{Logger: zap.New(core), Post: func(fn func(dsl.Collector)) { w.posts <- fn }}.WithContext(ctx)
	s, err := newSink(info, cfg, w.seeds, route)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Execute(1, dsl.Tuple{Value: 1}, &w.out); err != nil {
		t.Fatal(err)
	}
	testsupport.Recv(t, held, 20*time.Second, "the produce request")
	cancel() // the record is in flight: it cannot be taken back
	testsupport.WaitUntil(t, 20*time.Second, "the flush's warning", func() bool {
		return logs.FilterMessage("kafka: sink flush at stop").Len() == 1
	})
}
