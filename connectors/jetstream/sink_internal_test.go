package jetstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

// outcome is an input's ack or fail, as the sink posts it.
type outcome struct {
	input dsl.Tuple
	acked bool
}

// postedCollector runs what a task posts with a Collector that sends each
// ack and fail to out.
type postedCollector struct {
	dsl.Collector
	out chan<- outcome
}

func (c postedCollector) Ack(t dsl.Tuple)  { c.out <- outcome{t, true} }
func (c postedCollector) Fail(t dsl.Tuple) { c.out <- outcome{t, false} }

// A sink without state publishes each input's record with its Nats-Msg-Id
// (the record's, or one derived from its subject and data), acks the input
// on the stream's acknowledgement and fails it on a refusal, in order.
func TestSinkWithoutState(t *testing.T) {
	srv := startServer(t)
	st := srv.stream(t, "O", "o", 0)
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	info := l.info(0, 1).WithContext(ctx)
	info.Component = "out"
	out := make(chan outcome, 8)
	var mu sync.Mutex // the posts run one at a time, as on a task's goroutine
	info.Post = func(fn func(dsl.Collector)) { mu.Lock(); defer mu.Unlock(); fn(postedCollector{out: out}) }
	rec := func(v string) (Record, error) {
		switch v {
		case "":
			return Record{}, errors.New("empty")
		case "own":
			return Record{Subject: "o.a", Data: []byte(v), MsgID: "my-id"}, nil
		case "lost":
			return Record{Subject: "nowhere", Data: []byte(v)}, nil
		}
		return Record{Subject: "o.a", Data: []byte(v), Header: nats.Header{"K": {v}}}, nil
	}
	s := newSink(info, srv.url, rec, newConfig([]Option{WithPublishTimeout(time.Second)}))
	defer func() {
		cancel()
		testsupport.WaitUntil(t, 5*time.Second, "the sink's connection closed", func() bool { return s.js.Conn().IsClosed() })
	}()
	if len(l.failed) != 0 || s.w != nil {
		t.Fatalf("failed %v, checkpointed %v", l.failed, s.w != nil)
	}
	for i, v := range []string{"x", "own", "lost", "y"} {
		if err := s.Execute(v, dsl.Tuple{Task: i}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, acked := range []bool{true, true, false, true} {
		o := testsupport.Recv(t, out, 5*time.Second, "an outcome")
		if o.input.Task != i || o.acked != acked {
			t.Fatalf("outcome %d: input %d, acked %v; want acked %v", i, o.input.Task, o.acked, acked)
		}
	}
	if w := l.logged(zapcore.WarnLevel); len(w) != 1 || !strings.HasPrefix(w[0], "jetstream: publish failed; failing the input") {
		t.Fatalf("warnings %q", w)
	}
	for seq, want := range map[uint64]string{1: msgID(Record{Subject: "o.a", Data: []byte("x")}), 2: "my-id"} {
		m, err := st.GetMsg(ctxFor(t), seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Header.Get(jetstream.MsgIDHeader); got != want {
			t.Errorf("message %d has id %q, want %q", seq, got, want)
		}
		if seq == 1 && m.Header.Get("K") != "x" {
			t.Errorf("message 1 lost its header: %v", m.Header)
		}
	}
	if err := s.Execute("", dsl.Tuple{}, nil); err == nil || !strings.Contains(err.Error(), `sink "out": making the record`) {
		t.Fatalf("a record function error: %v", err)
	}
}

// The default id depends on the subject and the data, and on where one ends.
func TestMsgID(t *testing.T) {
	a := msgID(Record{Subject: "ab", Data: []byte("c")})
	if a == msgID(Record{Subject: "a", Data: []byte("bc")}) || a == msgID(Record{Subject: "ab", Data: []byte("d")}) || a != msgID(Record{Subject: "ab", Data: []byte("c"), Header: nats.Header{"K": {"v"}}}) || len(a) != 32 {
		t.Fatalf("msgID %q", a)
	}
}

// The sink's constructor fails its task with a bad option, a nil record
// function or a connection that cannot be opened, and every input with it;
// a task without a logger gets a silent one; a checkpointed task publishes
// through its write-ahead.
func TestNewSink(t *testing.T) {
	srv := startServer(t)
	rec := func(string) (Record, error) { return Record{Subject: "o.a"}, nil }
	for _, c := range []struct {
		name string
		spec *dsl.BoltSpec
		want string
	}{
		{"bad option", Sink(srv.url, rec, WithKeptBytes(1)), `sink "out": jetstream: WithKeptBytes(1)`},
		{"nil record", Sink[string](srv.url, nil), `sink "out": jetstream: Sink: nil record function`},
		{"no connection", Sink(srv.url, rec, WithNATSOptions(nats.RootCAs(t.TempDir()+"/none.pem"))), `sink "out": jetstream: connecting to`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l taskLog
			info := l.info(0, 1)
			info.Component, info.Logger = "out", nil
			b := c.spec.Typed(info)
			if len(l.failed) != 1 || !strings.HasPrefix(l.failed[0].Error(), c.want) {
				t.Fatalf("failed %v, want %q", l.failed, c.want)
			}
			if _, err := b.Execute(&dsl.Tuple{Value: "v"}, nil); err != l.failed[0] {
				t.Fatalf("Execute = %v, want the task's error", err)
			}
		})
	}
	var l taskLog
	ctx, cancel := context.WithCancel(context.Background())
	info := l.info(0, 1).WithContext(ctx)
	info.Logger, info.Checkpointed = nil, true
	s := newSink(info, srv.url, rec, newConfig(nil))
	if s.log == nil || s.w == nil || len(l.failed) != 0 {
		t.Fatalf("log %v, write-ahead %v, failed %v", s.log, s.w, l.failed)
	}
	var c acks
	if err := s.Execute("v", dsl.Tuple{}, &c); err != nil || len(c.acked) != 1 || len(s.w.fresh) != 1 {
		t.Fatalf("a checkpointed Execute: %v, acked %d, kept %d", err, len(c.acked), len(s.w.fresh))
	}
	cancel()
	testsupport.WaitUntil(t, 5*time.Second, "the publisher's connection closed", func() bool { return s.js.Conn().IsClosed() })
}
