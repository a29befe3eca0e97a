package jetstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

func TestKeptRecordsRoundTrip(t *testing.T) {
	in := []*kept{
		{id: "t/sink/0/7/0/ab", subject: "out.a", data: []byte("one"), header: nats.Header{"K": {"v1", "v2"}, "E": {""}}},
		{id: "mine", subject: "out.b", data: nil},
		{id: "t/sink/0/7/2/ab", subject: "out.c", data: make([]byte, 300)},
	}
	b := encodeKept(in)
	out, err := decodeKept(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("decoded %d records, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].id != in[i].id || out[i].subject != in[i].subject || string(out[i].data) != string(in[i].data) {
			t.Errorf("record %d: got %q %q %q, want %q %q %q", i, out[i].id, out[i].subject, out[i].data, in[i].id, in[i].subject, in[i].data)
		}
		if len(out[i].header) != len(in[i].header) {
			t.Errorf("record %d: header %v, want %v", i, out[i].header, in[i].header)
		}
		for k, vs := range in[i].header {
			if got := out[i].header.Values(k); len(got) != len(vs) || (len(vs) > 0 && got[0] != vs[0]) {
				t.Errorf("record %d: header %q = %v, want %v", i, k, got, vs)
			}
		}
		if out[i].size < len(out[i].data) {
			t.Errorf("record %d: size %d under its data", i, out[i].size)
		}
	}
	b[len(b)-1] ^= 0xff
	for _, bad := range [][]byte{nil, {9}, b[:len(b)-10], append(encodeKept(in), 0)} {
		if _, err := decodeKept(bad); !errors.Is(err, errKeptFormat) {
			t.Errorf("decodeKept(%x...) = %v, want errKeptFormat", bad[:min(len(bad), 4)], err)
		}
	}
}

// encodedSize counts, for each string, its bytes and room for a length:
// 5 bytes for each of the id, subject and data, then the header's keys
// (10 bytes each: the key's and its value count's) and values (5 each).
func TestEncodedSize(t *testing.T) {
	k := &kept{id: "ab", subject: "s", data: []byte("xyz"), header: nats.Header{"K": {"v1", "v22"}, "LL": {}}}
	want := 15 + 2 + 1 + 3 + (10 + 1) + (5 + 2) + (5 + 3) + (10 + 2)
	if got := encodedSize(k); got != want {
		t.Fatalf("encodedSize = %d, want %d", got, want)
	}
	if got := len(encodeKept([]*kept{k})); got > want {
		t.Fatalf("the encoding takes %d bytes, more than its size %d", got, want)
	}
}

// A round trip keeps each record as it was: a record without a header has
// none, and a string that ends the bytes exactly is read whole.
func TestKeptRecordsRoundTripExactly(t *testing.T) {
	in := []*kept{
		{id: "a", subject: "s.a", data: []byte("1")},
		{id: "b", subject: "s.b", data: []byte("2"), header: nats.Header{"K": {"v"}}},
	}
	out, err := decodeKept(encodeKept(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].header != nil || len(out[1].header) != 1 || out[1].header.Get("K") != "v" || string(out[1].data) != "2" {
		t.Fatalf("decoded %+v %+v", out[0], out[1])
	}
	if out[0].size != encodedSize(in[0]) || out[1].size != encodedSize(in[1]) {
		t.Fatalf("sizes %d %d, want %d %d", out[0].size, out[1].size, encodedSize(in[0]), encodedSize(in[1]))
	}
	// One record announced and nothing after: truncated.
	if _, err := decodeKept([]byte{keptVersion, 1}); !errors.Is(err, errKeptFormat) {
		t.Fatalf("decodeKept of a count alone = %v, want errKeptFormat", err)
	}
	if recs, err := decodeKept([]byte{keptVersion, 0}); err != nil || len(recs) != 0 {
		t.Fatalf("decodeKept of no records = %v, %v", recs, err)
	}
}

// handSink is a checkpointed sink task with no connection: what it hands to
// its publisher stays in the queue.
func handSink(cfg config) (*sink[string], *taskLog) {
	var l taskLog
	info := l.info(2, 3)
	info.Topology, info.Component, info.Checkpointed = "topo", "out", true
	s := &sink[string]{info: info, log: info.Logger, record: func(v string) (Record, error) {
		if v == "" {
			return Record{}, errors.New("empty")
		}
		r := Record{Subject: "s." + v[:1], Data: []byte(v)}
		if v == "own" {
			r.MsgID = "my-id"
		}
		return r, nil
	}}
	s.w = newAhead(info, info.Logger, cfg)
	return s, &l
}

// acks is a Collector that records the inputs acked and failed.
type acks struct {
	dsl.Collector
	acked, failed []dsl.Tuple
}

func (a *acks) Ack(t dsl.Tuple)  { a.acked = append(a.acked, t) }
func (a *acks) Fail(t dsl.Tuple) { a.failed = append(a.failed, t) }

// A checkpointed sink keeps each input's record and acks the input at once,
// up to WithKeptBytes exactly; one byte over fails the task with the sum.
func TestSinkKeepsUpToTheCap(t *testing.T) {
	s, l := handSink(newConfig([]Option{WithKeptBytes(1024)}))
	// 15 + len(subject "s.x") + data: two records of 512 fill the cap.
	data := strings.Repeat("x", 512-15-3)
	var c acks
	for i := range 2 {
		if err := s.Execute(data, dsl.Tuple{Task: i}, &c); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if len(c.acked) != 2 || s.w.keptBytes != 1024 {
		t.Fatalf("acked %d, kept %d bytes; want 2 and 1024", len(c.acked), s.w.keptBytes)
	}
	// The record "s.x" = 15+3+1 = 19 bytes: 1043 is over the cap.
	err := s.Execute("x", dsl.Tuple{}, &c)
	if err == nil || !strings.Contains(err.Error(), "keeps 1043 bytes") || len(l.failed) != 1 || len(c.acked) != 2 {
		t.Fatalf("over the cap: %v, task failed %v, acked %d", err, l.failed, len(c.acked))
	}
	if err := s.Execute("", dsl.Tuple{}, &c); err == nil || !strings.Contains(err.Error(), "making the record") {
		t.Fatalf("a record function error: %v", err)
	}
}

// PrepareCheckpoint names the fresh records after the checkpoint (a record's
// own MsgID stays), returns every record not known stored, oldest first, and
// counts only those as kept; CommitCheckpoint hands the checkpoint's fresh
// records to the publisher; RecoverCheckpoint hands the prepared ones again.
func TestSinkCheckpointHooks(t *testing.T) {
	s, _ := handSink(newConfig(nil))
	var c acks
	if b, err := s.PrepareCheckpoint(6); b != nil || err != nil {
		t.Fatalf("an empty checkpoint prepared %x, %v", b, err)
	}
	for _, v := range []string{"a", "own", "b"} {
		if err := s.Execute(v, dsl.Tuple{}, &c); err != nil {
			t.Fatal(err)
		}
	}
	b, err := s.PrepareCheckpoint(7)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := decodeKept(b)
	if err != nil || len(recs) != 3 {
		t.Fatalf("prepared %d records, %v", len(recs), err)
	}
	for i, want := range []string{"topo/out/2/7/0/", "my-id", "topo/out/2/7/2/"} {
		if !strings.HasPrefix(recs[i].id, want) || (want != "my-id" && len(recs[i].id) != len(want)+8) {
			t.Errorf("record %d id %q, want %q and a nonce of 8 hex digits", i, recs[i].id, want)
		}
	}
	if recs[0].id[len(recs[0].id)-8:] != recs[2].id[len(recs[2].id)-8:] {
		t.Errorf("ids %q and %q of one checkpoint with different nonces", recs[0].id, recs[2].id)
	}
	if s.w.keptBytes != recs[0].size+recs[1].size+recs[2].size {
		t.Fatalf("kept %d bytes, want the sum of the prepared records' sizes", s.w.keptBytes)
	}
	if q := s.w.take(); len(q) != 0 {
		t.Fatalf("handed %d records before the commit", len(q))
	}
	if err := s.CommitCheckpoint(7); err != nil {
		t.Fatal(err)
	}
	testsupport.Recv(t, s.w.more, time.Second, "the publisher told of records")
	q := s.w.take()
	if len(q) != 3 || q[0].id != recs[0].id || len(s.w.due) != 0 {
		t.Fatalf("the commit handed %d records", len(q))
	}
	// The stream acknowledged the first; the next checkpoint keeps the two others and its own.
	q[0].stored.Store(true)
	if err := s.Execute("c", dsl.Tuple{}, &c); err != nil {
		t.Fatal(err)
	}
	b, _ = s.PrepareCheckpoint(8)
	recs, _ = decodeKept(b)
	if len(recs) != 3 || recs[0].id != "my-id" || !strings.HasPrefix(recs[2].id, "topo/out/2/8/0/") {
		t.Fatalf("checkpoint 8 prepared %d records, first %q", len(recs), recs[0].id)
	}
	if s.w.keptBytes != recs[0].size+recs[1].size+recs[2].size {
		t.Fatalf("kept %d bytes, want the sum of the unstored records' sizes", s.w.keptBytes)
	}
	// Everything stored: nothing to prepare.
	for _, k := range s.w.open {
		k.stored.Store(true)
	}
	if b, _ := s.PrepareCheckpoint(9); b != nil || s.w.keptBytes != 0 {
		t.Fatalf("prepared %x, kept %d, with every record stored", b, s.w.keptBytes)
	}
	s.w.take()
	// A recovery hands the last committed checkpoint's records again.
	r, _ := handSink(newConfig(nil))
	if err := r.RecoverCheckpoint(nil); err != nil || len(r.w.take()) != 0 {
		t.Fatalf("recovering no checkpoint: %v", err)
	}
	if err := r.RecoverCheckpoint([]byte{9}); err == nil || !strings.Contains(err.Error(), "reading the records of the last checkpoint") {
		t.Fatalf("recovering bad bytes: %v", err)
	}
	if err := r.RecoverCheckpoint(b8(t)); err != nil {
		t.Fatal(err)
	}
	if q := r.w.take(); len(q) != 2 || len(r.w.open) != 2 || r.w.keptBytes != q[0].size+q[1].size {
		t.Fatalf("recovered %d records, %d open, %d bytes kept", len(q), len(r.w.open), r.w.keptBytes)
	}
	// Without state the hooks do nothing.
	n := &sink[string]{}
	if b, err := n.PrepareCheckpoint(1); b != nil || err != nil || n.CommitCheckpoint(1) != nil || n.RecoverCheckpoint([]byte{9}) != nil {
		t.Fatal("the hooks of a sink without state did something")
	}
}

// b8 is two records as a checkpoint prepares them.
func b8(t *testing.T) []byte {
	t.Helper()
	return encodeKept([]*kept{{id: "x/1", subject: "s.x", data: []byte("1")}, {id: "x/2", subject: "s.x", data: []byte("2")}})
}

// The publisher publishes what it is handed with each record's id, marks
// what the stream acknowledged stored (and skips it when handed again),
// retries what no stream takes until one does, after 50 ms and then twice as
// long each time, and fails the task, once,
// naming the stream, when a stream's duplicate window is shorter than the
// sink needs.
func TestSinkPublisher(t *testing.T) {
	srv := startServer(t)
	srv.stream(t, "S", "s", 0, func(c *jetstream.StreamConfig) { c.Duplicates = time.Minute })
	srv.stream(t, "SHORT", "short", 0, func(c *jetstream.StreamConfig) { c.Duplicates = 10 * time.Second })
	failed := make(chan error, 4)
	info := dsl.TaskInfo{Component: "out", Fail: func(err error) { failed <- err }}
	core, logs := observer.New(zapcore.DebugLevel)
	w := newAhead(info, zap.New(core), newConfig(nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.publish(ctx, srv.nc, srv.js)
	}()
	defer func() { cancel(); testsupport.Recv(t, done, 5*time.Second, "the publisher's end") }()
	count := func(stream string) uint64 {
		st, err := srv.js.Stream(ctxFor(t), stream)
		if err != nil {
			t.Fatal(err)
		}
		i, err := st.Info(ctxFor(t))
		if err != nil {
			t.Fatal(err)
		}
		return i.State.Msgs
	}
	// A core subscriber sees every publish, also one the stream's
	// duplicate window drops, which the stream's count would not show.
	published, err := srv.nc.SubscribeSync("s.>")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = published.Unsubscribe() }()
	recs := []*kept{{id: "1", subject: "s.a", data: []byte("a")}, {id: "2", subject: "s.a", data: []byte("b")}}
	w.hand(recs)
	testsupport.WaitUntil(t, 5*time.Second, "both stored", func() bool { return recs[0].stored.Load() && recs[1].stored.Load() })
	w.hand(recs)
	lateCfg := jetstream.StreamConfig{Name: "LATE", Subjects: []string{"late.>"}, Storage: jetstream.MemoryStorage, Duplicates: time.Minute, MaxMsgs: 1, Discard: jetstream.DiscardNew}
	if _, err := srv.js.CreateStream(ctxFor(t), lateCfg); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.js.Publish(ctxFor(t), "late.a", []byte("first")); err != nil {
		t.Fatal(err)
	}
	late := []*kept{{id: "3", subject: "late.a", data: []byte("c")}}
	// A full stream refuses at once: the waits between attempts set their pace.
	began := time.Now()
	w.hand(late)
	testsupport.WaitUntil(t, 5*time.Second, "the late record refused thrice", func() bool {
		return logs.FilterMessageSnippet("retrying").Len() >= 3
	})
	if d := time.Since(began); d < 150*time.Millisecond {
		t.Fatalf("three attempts in %v, want at least the waits between them, 50+100 ms (TestSinkPublisherBackoffStartsAnewAfterASuccess checks that they start anew)", d)
	}
	lateCfg.MaxMsgs = -1
	if _, err := srv.js.UpdateStream(ctxFor(t), lateCfg); err != nil {
		t.Fatal(err)
	}
	testsupport.WaitUntil(t, 10*time.Second, "the late record stored", late[0].stored.Load)
	if n := count("S"); n != 2 {
		t.Fatalf("S holds %d messages, want 2", n)
	}
	// The publisher handles what it is handed in order: the late record is
	// stored, so the second hand of recs is done; the flush delivers what
	// it published to the subscriber, on the same connection.
	if err := srv.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, _, err := published.Pending(); err != nil || n != 2 {
		t.Fatalf("%d publishes on s.> (%v), want 2: a stored record handed again is not published", n, err)
	}
	select {
	case err := <-failed:
		t.Fatalf("failed with windows long enough: %v", err)
	default:
	}
	short := []*kept{{id: "4", subject: "short.a", data: []byte("d")}, {id: "5", subject: "short.a", data: []byte("e")}}
	w.hand(short)
	err = testsupport.Recv(t, failed, 5*time.Second, "the short window refused")
	if !strings.Contains(err.Error(), `stream "SHORT" remembers message ids for 10s`) {
		t.Fatalf("err = %v", err)
	}
	testsupport.WaitUntil(t, 5*time.Second, "the short records stored", func() bool { return short[1].stored.Load() })
	select {
	case err := <-failed:
		t.Fatalf("failed twice for one stream: %v", err)
	default:
	}
}

// A publisher whose first record is refused waits 50 ms, then twice as long
// each time, from the start.
func TestSinkPublisherBacksOffFromItsFirstRecord(t *testing.T) {
	srv := startServer(t)
	full := jetstream.StreamConfig{Name: "FULL", Subjects: []string{"full.>"}, Storage: jetstream.MemoryStorage, MaxMsgs: 1, Discard: jetstream.DiscardNew}
	if _, err := srv.js.CreateStream(ctxFor(t), full); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.js.Publish(ctxFor(t), "full.a", []byte("first")); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	w := newAhead(dsl.TaskInfo{Component: "out", Fail: func(error) {}}, zap.New(core), newConfig(nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.publish(ctx, srv.nc, srv.js)
	}()
	defer func() { cancel(); testsupport.Recv(t, done, 5*time.Second, "the publisher's end") }()
	began := time.Now()
	w.hand([]*kept{{id: "1", subject: "full.a", data: []byte("x")}})
	testsupport.WaitUntil(t, 5*time.Second, "four refusals", func() bool { return logs.FilterMessageSnippet("retrying").Len() >= 4 })
	if d := time.Since(began); d < 350*time.Millisecond {
		t.Fatalf("four attempts in %v, want at least the waits between them, 50+100+200 ms", d)
	}
}

// The publisher's back-off between failed publishes doubles from 50 ms, and
// a publish that succeeds starts it anew: stepped through its sleep, without
// a clock.
func TestSinkPublisherBackoffStartsAnewAfterASuccess(t *testing.T) {
	srv := startServer(t)
	// A stream of one message that discards new ones refuses every publish
	// until its bound is raised.
	cfg := jetstream.StreamConfig{Name: "FULL", Subjects: []string{"full.>"}, Storage: jetstream.MemoryStorage,
		Duplicates: time.Minute, MaxMsgs: 1, Discard: jetstream.DiscardNew}
	bound := func(n int64) {
		cfg.MaxMsgs = n
		if _, err := srv.js.CreateOrUpdateStream(ctxFor(t), cfg); err != nil {
			t.Fatal(err)
		}
	}
	bound(1)
	if _, err := srv.js.Publish(ctxFor(t), "full.a", []byte("first")); err != nil {
		t.Fatal(err)
	}
	w := newAhead(dsl.TaskInfo{Component: "out", Fail: func(err error) { t.Errorf("the task failed: %v", err) }}, zap.NewNop(), newConfig(nil))
	st := newSteppedSleep()
	w.sleep = st.sleep
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.publish(ctx, srv.nc, srv.js)
	}()
	first := []*kept{{id: "1", subject: "full.a", data: []byte("a")}}
	w.hand(first)
	for _, want := range []time.Duration{50, 100, 200} {
		if got := st.next(t, "a failed publish's wait"); got != want*time.Millisecond {
			t.Fatalf("waited %v, want %v ms", got, want)
		}
		if want == 200 {
			bound(2) // the next publish succeeds, and fills the stream again
		}
		st.resume <- struct{}{}
	}
	testsupport.WaitUntil(t, 5*time.Second, "the record stored", first[0].stored.Load)
	w.hand([]*kept{{id: "2", subject: "full.a", data: []byte("b")}})
	if got := st.next(t, "the wait after the success"); got != 50*time.Millisecond {
		t.Fatalf("waited %v after a publish that succeeded, want 50ms again", got)
	}
	cancel()
	testsupport.Recv(t, done, 5*time.Second, "the publisher's end")
}
