package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// fetchWait is the longest one fetch waits for messages. It bounds nothing
// the task sees (Next never waits); it only sets how often an idle fetcher
// asks again.
const fetchWait = time.Second

// buffered is a fetched message waiting for Next.
type buffered struct {
	msg  jetstream.Msg
	beat time.Time // fetched, or last in-progress signal
}

// buffer is the bounded queue between a task's fetcher and its Next.
type buffer struct {
	mu    sync.Mutex // mu guards items
	items []buffered
	size  int
}

func newBuffer(size int) *buffer { return &buffer{size: size, items: make([]buffered, 0, size)} }

func (b *buffer) free() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size - len(b.items)
}

func (b *buffer) push(m jetstream.Msg, now time.Time) {
	b.mu.Lock()
	b.items = append(b.items, buffered{m, now})
	b.mu.Unlock()
}

// peek returns the first message without taking it.
func (b *buffer) peek() (buffered, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) == 0 {
		return buffered{}, false
	}
	return b.items[0], true
}

func (b *buffer) pop() (buffered, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) == 0 {
		return buffered{}, false
	}
	first := b.items[0]
	b.items[0] = buffered{}
	b.items = b.items[1:]
	return first, true
}

// heartbeat keeps buffered messages alive as [source.heartbeat] does open ones.
func (b *buffer) heartbeat(now time.Time, period time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.items {
		if now.Sub(b.items[i].beat) >= period && b.items[i].msg.InProgress() == nil {
			b.items[i].beat = now
		}
	}
}

// takeAll empties the buffer.
func (b *buffer) takeAll() []buffered {
	b.mu.Lock()
	defer b.mu.Unlock()
	all := b.items
	b.items = nil
	b.size = 0 // nothing more goes in
	return all
}

// keeper owns a spout task's connection and goroutines: it connects, sets up
// the consumer, runs the fetcher, posts heartbeats, and when the task's
// Context ends (deactivation or stop) it hands buffered messages back, waits
// until every handed-out message is settled (the drain acks them, the stop
// nacks the rest), or a message timeout and an AckWait passed, and closes the
// connection. Nothing it
// starts outlives that.
type keeper[T any] struct {
	src                  *source[T]
	url, stream, durable string
	sleep                pauser // between failed fetches
}

func (k *keeper[T]) run(ctx context.Context) {
	s := k.src
	nc, err := s.cfg.connect(k.url, fmt.Sprintf("goshelter %s/%s[%d]", s.info.Topology, s.info.Component, s.info.Task))
	if err != nil {
		s.info.Fail(err)
		return
	}
	defer nc.Close() // flushes the acks and naks sent last
	cons, ackWait, err := k.consumer(ctx, nc)
	if err != nil {
		if ctx.Err() == nil {
			s.info.Fail(fmt.Errorf("spout %q: %w", s.info.Component, err))
		}
		return
	}
	period := ackWait / 3
	s.period.Store(int64(period))
	if mt := s.info.Settings.MessageTimeout; ackWait < mt {
		s.log.Info("jetstream: AckWait is shorter than the message timeout; in-progress signals keep open trees alive",
			zap.Duration("ackWait", ackWait), zap.Duration("messageTimeout", mt), zap.Duration("every", period))
	}
	fetched := make(chan struct{})
	go func() {
		defer close(fetched)
		k.fetch(ctx, cons)
	}()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-tick.C:
			k.postHeartbeat()
		case <-fetched:
			done = true
		}
	}
	// The task no longer takes messages: what is buffered goes back at once.
	for _, b := range s.buf.takeAll() {
		_ = b.msg.Nak()
	}
	// A stop drains for at most about the message timeout, then nacks what is
	// open; past that and an AckWait, nothing is left to keep.
	bound := time.NewTimer(s.info.Settings.MessageTimeout + ackWait)
	defer bound.Stop()
	for s.inflight.Load() > 0 {
		select {
		case <-s.settled:
		case <-tick.C:
			k.postHeartbeat()
		case <-bound.C:
			return // the server redelivers what is still open
		}
	}
}

func (k *keeper[T]) postHeartbeat() {
	s := k.src
	s.info.Post(func(_ dsl.Collector) { s.heartbeat(time.Now()) })
}

// consumer creates or updates the durable consumer, retrying while the server
// is away; an answer from the server that refuses it is final.
func (k *keeper[T]) consumer(ctx context.Context, nc *nats.Conn) (jetstream.Consumer, time.Duration, error) {
	s := k.src
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, 0, fmt.Errorf("opening JetStream: %w", err)
	}
	cfg := jetstream.ConsumerConfig{
		Durable:        k.durable,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        s.cfg.ackWait,
		MaxDeliver:     -1,
		MaxAckPending:  s.info.Parallelism * (s.info.Settings.MaxSpoutPending + s.cfg.buffer),
		FilterSubjects: s.cfg.filters,
	}
	if len(cfg.FilterSubjects) == 1 {
		cfg.FilterSubject, cfg.FilterSubjects = cfg.FilterSubjects[0], nil
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err := js.CreateOrUpdateConsumer(actx, k.stream, cfg)
		cancel()
		if err == nil {
			ackWait := cons.CachedInfo().Config.AckWait
			if ackWait <= 0 { // not reported: the server applies what was asked
				ackWait = s.cfg.ackWait
			}
			return cons, ackWait, nil
		}
		if final(err) {
			return nil, 0, fmt.Errorf("setting up consumer %q on stream %q: %w", k.durable, k.stream, err)
		}
		s.log.Debug("jetstream: consumer not set up yet; retrying", zap.Error(err))
		if !sleep(ctx, wait) {
			return nil, 0, ctx.Err()
		}
	}
}

// final tells a refusal by the server (no such stream, a bad config) from a
// server that is away or busy.
func final(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code != 503 && api.Code != 408
	}
	return errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrInvalidConsumerName) ||
		errors.Is(err, jetstream.ErrInvalidStreamName)
}

// fetch fills the buffer until ctx ends: each fetch asks for what the buffer
// has room for and waits at most fetchWait.
func (k *keeper[T]) fetch(ctx context.Context, cons jetstream.Consumer) {
	s := k.src
	for wait := 50 * time.Millisecond; ctx.Err() == nil; {
		free := s.buf.free()
		if free <= 0 {
			select {
			case <-s.space:
			case <-ctx.Done():
			}
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, fetchWait)
		batch, err := cons.Fetch(free, jetstream.FetchContext(fctx))
		if err == nil {
			for m := range batch.Messages() {
				s.buf.push(m, time.Now())
			}
			err = batch.Error()
		}
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			wait = 50 * time.Millisecond
			continue
		}
		// The server is away or refuses for now: ask again later.
		s.log.Debug("jetstream: fetch failed; retrying", zap.Error(err))
		k.sleep.pause(ctx, wait)
		wait = min(2*wait, time.Second)
	}
}

// pauser is the wait of a back-off between failed attempts: nil is the real
// one (sleep); a test steps its own to see the waits without a clock.
type pauser func(ctx context.Context, d time.Duration) bool

// pause waits d, or until ctx ends; it reports whether d passed.
func (p pauser) pause(ctx context.Context, d time.Duration) bool {
	if p != nil {
		return p(ctx, d)
	}
	return sleep(ctx, d)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
