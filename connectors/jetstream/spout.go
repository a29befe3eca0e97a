package jetstream

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// Spout defines a reliable spout reading stream through the durable pull
// consumer named durable, which every task shares: the spout creates it, or
// updates it to explicit acks, the AckWait of [WithAckWait], unlimited
// deliveries and a MaxAckPending of Parallelism x (max spout pending +
// [WithBuffer]), so the server never hands out more than the topology holds.
//
// translate turns each message into the spout's tuple; nil is allowed when T
// is [Message]. A message translate rejects is terminated (the server never
// redelivers it), logged, and counted in the task's "jetstream.terminated"
// metric. An acked tree acks its message; a failed one nacks it with a delay
// (see [WithNackBackoff]), or gives it up after [WithMaxDeliver] failures.
//
// In a topology with state the spout is a positioned source instead: each
// task reads through a consumer of its own named after durable, its
// position is stored with the checkpoints, and the server's acks follow the
// committed checkpoints (see the package doc). durable must then name one
// spout only: the tasks of two spouts with the same durable would replace
// each other's consumers.
func Spout[T any](url, stream, durable string, translate func(Message) (T, error), opts ...Option) *dsl.SpoutSpec {
	cfg := newConfig(opts)
	if translate == nil {
		translate = identity[T](&cfg)
	}
	switch {
	case stream == "":
		cfg.bad("Spout: empty stream name")
	case durable == "":
		cfg.bad("Spout: empty durable consumer name for stream %q", stream)
	}
	// Failures outlive the tasks' incarnations (poison.go).
	sick := newPoison()
	// The constructor returns the concrete source, so Build sees its
	// Position and Rewind hooks.
	return dsl.ReliableFrom(func(info dsl.TaskInfo) *source[T] {
		return newSource(info, url, stream, durable, translate, cfg, sick)
	})
}

// identity is the translator of a Spout[Message], and records a bad option
// for any other T.
func identity[T any](cfg *config) func(Message) (T, error) {
	if reflect.TypeFor[T]() != reflect.TypeFor[Message]() {
		cfg.bad("Spout[%v]: a nil translate function needs T = jetstream.Message", reflect.TypeFor[T]())
	}
	return func(m Message) (T, error) {
		t, _ := any(m).(T)
		return t, nil
	}
}

// entry is a message handed out by Next, until its Ack or Nack: the spout's
// message id. Its fields are touched on the task's goroutine only.
type entry struct {
	msg       jetstream.Msg
	seq       uint64    // stream sequence
	delivered uint64    // deliveries so far
	beat      time.Time // last time the server's AckWait restarted for it
}

// source is one spout task's state. Next, Ack, Nack and the Posted
// heartbeats run on the task's goroutine; the fetcher and keeper goroutines
// (fetch.go) share only buf, inflight and the signal channels with it.
type source[T any] struct {
	info       dsl.TaskInfo
	log        *zap.Logger
	cfg        config
	translate  func(Message) (T, error)
	buf        *buffer
	open       tracker       // messages handed out and not yet acked or nacked
	inflight   atomic.Int64  // len(open), for the keeper
	space      chan struct{} // Next took from a full buffer
	settled    chan struct{} // inflight reached 0
	period     atomic.Int64  // in-progress period in ns, set by the keeper
	terminated int64
	poison     *poison // the failures of the spout's messages, shared by its tasks and their incarnations
	// cur is the task's place in the stream when the runtime checkpoints it
	// (dsl.TaskInfo.Checkpointed, position.go); nil otherwise.
	cur *cursor
	// start runs the positioned keeper on the first Next, once Rewind had
	// its chance to set where it starts; nil when it runs or no keeper is due.
	start func()
}

func newSource[T any](info dsl.TaskInfo, url, stream, durable string, translate func(Message) (T, error), cfg config, sick *poison) *source[T] {
	s := &source[T]{
		info: info, log: info.Logger, cfg: cfg, translate: translate, poison: sick,
		buf: newBuffer(cfg.buffer), open: tracker{}, space: make(chan struct{}, 1), settled: make(chan struct{}, 1),
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if cfg.err != nil {
		info.Fail(fmt.Errorf("spout %q: %w", info.Component, cfg.err))
		return s
	}
	k := &keeper[T]{src: s, url: url, stream: stream, durable: durable}
	if info.Checkpointed {
		s.cur = &cursor{}
		s.start = func() { go k.runPositioned(info.Context(), s.cur.next) }
		return s
	}
	go k.run(info.Context())
	return s
}

// Next hands out a buffered message, or ok=false at once when none is ready:
// it never waits for the server.
func (s *source[T]) Next() (*entry, T, bool) {
	var zero T
	if s.start != nil {
		s.start()
		s.start = nil
	}
	// Bounded: a run of rejected messages must not hold the task. Passing
	// over another task's message costs little and does not count: the
	// buffer bounds it.
	for rejected := 0; rejected < 16; {
		b, ok := s.buf.peek()
		if !ok {
			return nil, zero, false
		}
		m, err := toMessage(b.msg)
		if err == nil && s.cur != nil && s.cur.own(m.StreamSeq, s.info) {
			skip, report, fails, due := s.poison.verdict(m.StreamSeq, time.Now(), &s.cfg)
			if !due.IsZero() {
				// A retry waits for its back-off, and the task's messages
				// after it with it: the position must not pass it.
				return nil, zero, false
			}
			if skip {
				s.pop()
				s.cur.take(b.msg, m.StreamSeq, s.info) // the position moves past it
				if report {
					m.Delivered = fails
					s.reportGiveUp(m, fails, s.poison.gaveUpOne(s.info.Index), "skipping it")
				}
				continue
			}
		}
		s.pop()
		if err == nil && s.cur != nil && !s.cur.take(b.msg, m.StreamSeq, s.info) {
			continue // another task's message
		}
		var t T
		if err == nil {
			t, err = s.translate(m)
		}
		if err != nil {
			s.reject(b.msg, err)
			rejected++
			continue
		}
		e := &entry{msg: b.msg, seq: m.StreamSeq, delivered: m.Delivered, beat: b.beat}
		s.open.add(e)
		s.inflight.Add(1)
		return e, t, true
	}
	return nil, zero, false
}

// pop drops the buffer's first message, which Next peeked at, and tells the
// fetcher there is room.
func (s *source[T]) pop() {
	s.buf.pop()
	select {
	case s.space <- struct{}{}:
	default:
	}
}

func (s *source[T]) reject(m jetstream.Msg, err error) {
	s.terminated++
	s.info.Metric("jetstream.terminated", s.terminated)
	if s.cur != nil {
		// In the checkpoint the message is skipped: the position moves past
		// it, and the server's acks follow the positions.
		s.log.Error("jetstream: skipping a message the translator rejected", zap.String("subject", m.Subject()), zap.Error(err))
		return
	}
	s.log.Error("jetstream: terminating a message the translator rejected", zap.String("subject", m.Subject()), zap.Error(err))
	if terr := m.TermWithReason(err.Error()); terr != nil {
		s.log.Warn("jetstream: terminating a message failed; it will be redelivered", zap.Error(terr))
	}
}

// Ack acks the message: its tree completed.
func (s *source[T]) Ack(e *entry) {
	if s.cur != nil { // the server hears of it with the checkpoints (Position)
		s.close(e)
		return
	}
	if err := e.msg.Ack(); err != nil {
		// The server redelivers it after AckWait: a duplicate, never a loss.
		s.log.Debug("jetstream: ack not sent", zap.Uint64("seq", e.seq), zap.Error(err))
	}
	s.close(e)
}

// Nack asks the server to redeliver the message after the back-off delay of
// its delivery count, or terminates it on the server once it failed on its
// last delivery ([WithMaxDeliver]). In a topology with state it counts the
// failure (poison.go) instead: the topology rolls back and the rewind
// replays the message. A Nack after the task's Context ended is no failure
// but a message abandoned with its incarnation, which the rewind replays.
func (s *source[T]) Nack(e *entry) {
	if s.cur != nil {
		if s.info.Context().Err() == nil {
			s.poison.fail(e.seq, time.Now(), &s.cfg)
		}
		s.close(e)
		return
	}
	if s.cfg.maxDeliver > 0 && e.delivered >= uint64(s.cfg.maxDeliver) {
		s.giveUp(e)
		s.close(e)
		return
	}
	if err := e.msg.NakWithDelay(backoff(s.cfg.nackBase, s.cfg.nackMax, e.delivered)); err != nil {
		s.log.Debug("jetstream: nak not sent; redelivery after AckWait", zap.Uint64("seq", e.seq), zap.Error(err))
	}
	s.close(e)
}

// giveUp terminates e's message on the server, which never redelivers it,
// and reports it: it failed on its last delivery.
func (s *source[T]) giveUp(e *entry) {
	m, err := toMessage(e.msg)
	if err != nil { // it was read once (Next): cannot happen
		m = Message{Subject: e.msg.Subject(), StreamSeq: e.seq, Delivered: e.delivered}
	}
	s.reportGiveUp(m, e.delivered, s.poison.gaveUpOne(s.info.Index), "terminating it")
	if err := e.msg.TermWithReason("goshelter: failed max deliver times"); err != nil {
		s.log.Warn("jetstream: terminating a message given up failed; it will be redelivered", zap.Uint64("seq", e.seq), zap.Error(err))
	}
}

func (s *source[T]) close(e *entry) {
	s.open.remove(e)
	if s.inflight.Add(-1) == 0 {
		select {
		case s.settled <- struct{}{}:
		default:
		}
	}
}

// heartbeat sends an in-progress signal for every message, handed out or
// still buffered, whose AckWait last restarted a period or more ago, so the
// server does not redeliver a message whose tree is still open. Posted by
// the keeper every period; runs on the task's goroutine.
func (s *source[T]) heartbeat(now time.Time) {
	period := time.Duration(s.period.Load())
	for e := range s.open {
		if now.Sub(e.beat) >= period {
			if err := e.msg.InProgress(); err == nil {
				e.beat = now
			}
		}
	}
	s.buf.heartbeat(now, period)
}

// backoff is the nack delay of a message delivered n times: base·2^(n-1),
// at most max.
func backoff(base, max time.Duration, n uint64) time.Duration {
	d := base
	for i := uint64(1); i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// tracker holds the messages a task handed out and has not settled (each
// knows its stream sequence): the one place that knows the spout's open
// positions.
type tracker map[*entry]struct{}

func (t tracker) add(e *entry)    { t[e] = struct{}{} }
func (t tracker) remove(e *entry) { delete(t, e) }
