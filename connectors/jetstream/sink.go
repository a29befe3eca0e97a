package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// Sink defines a bolt that publishes a [Record] for each input to JetStream
// and acks the input only when the stream acknowledged the record; a publish
// error, a refusal or no acknowledgement within [WithPublishTimeout] fails
// it, and so does an error from record. Each record carries a Nats-Msg-Id
// (Record.MsgID, or by default a hash of its subject and data), so a replayed
// input is stored once within the stream's duplicate window; set MsgID when
// two inputs with the same subject and data are distinct events.
//
// In a topology with state the sink is exactly-once instead: it acks each
// input when it kept its record, and publishes the records after the
// checkpoint that covers them committed, with ids derived from the
// checkpoint (Record.MsgID, when set, is used as is); see the package doc,
// [WithKeptBytes] and [WithDuplicateWindow].
func Sink[In any](url string, record func(In) (Record, error), opts ...Option) *dsl.BoltSpec {
	cfg := newConfig(opts)
	if record == nil {
		cfg.bad("Sink: nil record function")
	}
	// The constructor returns the concrete sink, so Build sees its
	// checkpoint hooks (sink_checkpoint.go).
	return dsl.Manual(func(info dsl.TaskInfo) *sink[In] {
		return newSink(info, url, record, cfg)
	})
}

// sink is one sink task. Execute runs on the task's goroutine; the waiter
// goroutine takes publishes from queue in order and posts each outcome back.
type sink[In any] struct {
	info   dsl.TaskInfo
	log    *zap.Logger
	record func(In) (Record, error)
	js     jetstream.JetStream
	err    error // set when the task could not start; every input fails with it

	mu    sync.Mutex // mu guards queue
	queue []published
	more  chan struct{} // queue grew

	// w keeps the output for the checkpoints when the task is checkpointed
	// (dsl.TaskInfo.Checkpointed); nil otherwise.
	w *ahead
}

// published is a record waiting for its acknowledgement.
type published struct {
	ack   jetstream.PubAckFuture
	input dsl.Tuple
}

func newSink[In any](info dsl.TaskInfo, url string, record func(In) (Record, error), cfg config) *sink[In] {
	s := &sink[In]{info: info, log: info.Logger, record: record, more: make(chan struct{}, 1), err: cfg.err}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if info.Checkpointed {
		s.w = newAhead(info, s.log, cfg)
	}
	if s.err == nil {
		s.err = s.open(url, cfg)
	}
	if s.err != nil {
		s.err = fmt.Errorf("sink %q: %w", info.Component, s.err)
		info.Fail(s.err)
	}
	return s
}

func (s *sink[In]) open(url string, cfg config) error {
	nc, err := cfg.connect(url, fmt.Sprintf("goshelter %s/%s[%d]", s.info.Topology, s.info.Component, s.info.Task))
	if err != nil {
		return err
	}
	s.js, err = jetstream.New(nc, jetstream.WithPublishAsyncTimeout(cfg.pubTimeout))
	if err != nil {
		nc.Close()
		return fmt.Errorf("opening JetStream: %w", err)
	}
	if s.w != nil {
		go s.w.publish(s.info.Context(), nc, s.js)
		return nil
	}
	go s.wait(s.info.Context(), nc)
	return nil
}

// Execute publishes the input's record; its ack or fail comes later, from
// the acknowledgement.
func (s *sink[In]) Execute(in In, input dsl.Tuple, c dsl.Collector) error {
	if s.err != nil {
		return s.err
	}
	r, err := s.record(in)
	if err != nil {
		return fmt.Errorf("sink %q: making the record: %w", s.info.Component, err)
	}
	if s.w != nil {
		if err := s.w.keep(r); err != nil {
			s.info.Fail(err)
			return err
		}
		c.Ack(input) // kept: the checkpoint that covers it publishes it
		return nil
	}
	id := r.MsgID
	if id == "" {
		id = msgID(r)
	}
	f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: r.Subject, Data: r.Data, Header: r.Header}, jetstream.WithMsgID(id))
	if err != nil {
		return fmt.Errorf("sink %q: publishing to %q: %w", s.info.Component, r.Subject, err)
	}
	s.mu.Lock()
	s.queue = append(s.queue, published{f, input})
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
	return nil
}

// msgID derives a record's default Nats-Msg-Id from its subject and data.
func msgID(r Record) string {
	h := sha256.New()
	h.Write([]byte(r.Subject))
	h.Write([]byte{0})
	h.Write(r.Data)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// wait resolves the queued publishes in order until ctx ends (the task is
// deactivated or stops), then closes the connection. Every future resolves:
// the client fails it after the publish timeout.
func (s *sink[In]) wait(ctx context.Context, nc *nats.Conn) {
	defer nc.Close()
	for {
		s.mu.Lock()
		var p published
		ok := len(s.queue) > 0
		if ok {
			p = s.queue[0]
			s.queue[0] = published{}
			s.queue = s.queue[1:]
		}
		s.mu.Unlock()
		if !ok {
			select {
			case <-s.more:
				continue
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-p.ack.Ok():
			s.info.Post(func(c dsl.Collector) { c.Ack(p.input) })
		case err := <-p.ack.Err():
			s.log.Warn("jetstream: publish failed; failing the input", zap.String("subject", p.ack.Msg().Subject), zap.Error(err))
			s.info.Post(func(c dsl.Collector) { c.Fail(p.input) })
		case <-ctx.Done():
			return // its tree times out or is nacked by the stop: replayed, stored once
		}
	}
}
