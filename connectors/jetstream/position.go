package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// In a topology with state (dsl.TaskInfo.Checkpointed) the spout is a
// positioned source: the runtime stores each task's position with every
// checkpoint and rewinds the task there after a restart or a crash, so the
// stateful bolts see every message exactly once.
//
//   - A stream is one sequence, so every task reads the whole stream (the
//     spout's filter subjects applied) and hands out the messages whose
//     stream sequence is its own (sequence mod parallelism = task index),
//     passing over the others. The split needs no coordination and never
//     moves; it costs each task reading the messages of the others.
//   - A task's position is the stream sequence after the last message it
//     handed out or passed over. Rewind makes the task start there.
//   - Each task reads through a durable pull consumer of its own
//     (<durable>-t<index>-<16 hex digits>), with AckAll: the suffix is new
//     every time the task (re)creates it, so a fetch still on its way from a
//     task of a rolled-back incarnation can never take messages from its
//     successor, which deletes the consumers of its predecessors. It is
//     deleted when the task stops (and removed by the server after
//     [positionedInactive] if the delete could not reach it).
//   - The server hears acks only for what a committed checkpoint covers: at
//     checkpoint n+1 (checkpoints run one at a time, and a failed one ends
//     the incarnation, so n committed) the task acks, with AckAll, the last
//     message before position n. The consumer's ack floor thus shows the
//     committed lag. Tree acks and nacks go to no server: a failed tree
//     rolls the topology back, and the rewind replays it.
//   - With no checkpoint yet the task reads the stream from its start.

// positionedInactive is how long the server keeps a task's consumer that no
// one reads, should the task's delete not reach it.
const positionedInactive = 2 * time.Minute

// cursor is a positioned task's place in the stream; touched on the task's
// goroutine only.
type cursor struct {
	next    uint64        // first stream sequence not yet handed out or passed over (0: the stream's start)
	marked  uint64        // the position of the previous checkpoint (0: none in this incarnation)
	last    jetstream.Msg // the last message handed out or passed over
	covered jetstream.Msg // the last message before the previous checkpoint's position
}

// take moves the cursor past m, at stream sequence seq, and tells whether
// it is the task's own.
func (c *cursor) take(m jetstream.Msg, seq uint64, info dsl.TaskInfo) bool {
	c.next, c.last = seq+1, m
	return c.own(seq, info)
}

// own tells whether the message at stream sequence seq is the task's.
func (c *cursor) own(seq uint64, info dsl.TaskInfo) bool {
	return seq%uint64(max(info.Parallelism, 1)) == uint64(info.Index)
}

// Position returns the task's position for the checkpoint being taken: the
// stream sequence it resumes at, 8 bytes big-endian. It first acks to the
// server what the previous checkpoint covered, which has committed.
func (s *source[T]) Position() []byte {
	if s.cur == nil {
		return nil // not checkpointed: the runtime does not ask
	}
	if s.cur.covered != nil {
		if err := s.cur.covered.Ack(); err != nil {
			s.log.Debug("jetstream: ack of the committed position not sent; the consumer's floor lags", zap.Error(err))
		}
	}
	// The previous checkpoint committed: no rewind goes back before it.
	s.poison.prune(s.info.Index, s.info.Parallelism, s.cur.marked)
	s.cur.covered, s.cur.marked = s.cur.last, s.cur.next
	return binary.BigEndian.AppendUint64(nil, s.cur.next)
}

// Rewind sets where the task starts reading: the position of the last
// committed checkpoint. The runtime calls it before the first Next.
func (s *source[T]) Rewind(position []byte) error {
	if s.cur == nil {
		return nil
	}
	if len(position) != 8 {
		return fmt.Errorf("jetstream: spout %q task %d: a position is 8 bytes, got %d", s.info.Component, s.info.Index, len(position))
	}
	if s.start == nil {
		return fmt.Errorf("jetstream: spout %q task %d: rewind after the first Next", s.info.Component, s.info.Index)
	}
	s.cur.next = binary.BigEndian.Uint64(position)
	s.cur.marked = s.cur.next // committed: the first Position prunes below it
	return nil
}

// runPositioned fetches the stream from sequence start into the task's
// buffer until ctx ends, then deletes the task's consumer and closes the
// connection.
func (k *keeper[T]) runPositioned(ctx context.Context, start uint64) {
	s := k.src
	nc, err := s.cfg.connect(k.url, fmt.Sprintf("goshelter %s/%s[%d]", s.info.Topology, s.info.Component, s.info.Task))
	if err != nil {
		s.info.Fail(err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		s.info.Fail(fmt.Errorf("spout %q: opening JetStream: %w", s.info.Component, err))
		return
	}
	var name string
	defer func() {
		// The task's context is over: the delete gets a short time of its
		// own, so the goroutine ends soon after the stop even when the server
		// goes away mid-delete (the server removes what it misses once inactive).
		dctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		k.deleteConsumers(dctx, js, "")
	}()
	for next, wait := max(start, 1), 50*time.Millisecond; ctx.Err() == nil; {
		cons, n, err := k.positionedConsumer(ctx, js, next, name)
		if err != nil {
			if ctx.Err() == nil {
				s.info.Fail(fmt.Errorf("spout %q task %d: %w", s.info.Component, s.info.Index, err))
			}
			return
		}
		name = n
		var gap bool
		next, gap = k.fetchFrom(ctx, cons, next)
		if gap {
			wait = 50 * time.Millisecond
			continue
		}
		if !sleep(ctx, wait) { // the server is away or refused: try again later
			return
		}
		wait = min(2*wait, time.Second)
	}
}

// consumerPrefix is the name of the task's consumers without their suffix.
func (k *keeper[T]) consumerPrefix() string {
	return k.durable + "-t" + strconv.Itoa(k.src.info.Index) + "-"
}

// ownConsumer tells whether name is one of the task's consumers.
func (k *keeper[T]) ownConsumer(name string) bool {
	rest, ok := strings.CutPrefix(name, k.consumerPrefix())
	if !ok || len(rest) != 16 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// positionedConsumer creates a new consumer of the task's that starts at
// stream sequence next, and deletes every other one of the task's (those of
// earlier incarnations, or prev). It retries while the server is away; a
// refusal by the server is final.
func (k *keeper[T]) positionedConsumer(ctx context.Context, js jetstream.JetStream, next uint64, prev string) (jetstream.Consumer, string, error) {
	s := k.src
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	name := k.consumerPrefix() + hex.EncodeToString(suffix)
	cfg := jetstream.ConsumerConfig{
		Durable:           name,
		AckPolicy:         jetstream.AckAllPolicy,
		AckWait:           s.cfg.ackWait,
		MaxDeliver:        -1,
		MaxAckPending:     -1, // acks come once a checkpoint; fetches bound what is delivered
		InactiveThreshold: positionedInactive,
		FilterSubjects:    s.cfg.filters,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       next,
	}
	if len(cfg.FilterSubjects) == 1 {
		cfg.FilterSubject, cfg.FilterSubjects = cfg.FilterSubjects[0], nil
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		k.deleteConsumers(ctx, js, name)
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err := js.CreateConsumer(actx, k.stream, cfg)
		cancel()
		if err == nil {
			s.log.Debug("jetstream: reading the stream", zap.String("consumer", name), zap.Uint64("from", next), zap.String("replaces", prev))
			return cons, name, nil
		}
		if final(err) {
			return nil, "", fmt.Errorf("creating consumer %q on stream %q at sequence %d: %w", name, k.stream, next, err)
		}
		s.log.Debug("jetstream: consumer not created yet; retrying", zap.Error(err))
		if !sleep(ctx, wait) {
			return nil, "", ctx.Err()
		}
	}
}

// deleteConsumers deletes the task's consumers but keep, as far as the
// server answers before ctx ends. One the delete misses is removed by the
// server once inactive.
func (k *keeper[T]) deleteConsumers(ctx context.Context, js jetstream.JetStream, keep string) {
	if !js.Conn().IsConnected() {
		return // the server is away: it removes them once inactive
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := js.Stream(ctx, k.stream)
	if err != nil {
		return // the server is away: the server removes them once inactive
	}
	names := st.ConsumerNames(ctx)
	var own []string
	for n := range names.Name() {
		if n != keep && k.ownConsumer(n) {
			own = append(own, n)
		}
	}
	for _, n := range own {
		if err := js.DeleteConsumer(ctx, k.stream, n); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			k.src.log.Debug("jetstream: consumer not deleted; the server removes it once inactive", zap.String("consumer", n), zap.Error(err))
		}
	}
}

// fetchFrom fills the buffer from cons, whose next message is at stream
// sequence next or later, until ctx ends or the consumer can no longer be
// trusted to deliver every message in order: then it returns the sequence
// to start a new consumer at, and gap=true when that can happen at once.
//
// Deliveries of one consumer carry consecutive delivery sequences. A jump
// means deliveries were lost (sent while the connection was down): the
// stream sequences after them cannot be handed out, or the position would
// pass over messages never seen. A message below next is a redelivery
// (AckWait passed before the checkpoint acked it) and is dropped.
func (k *keeper[T]) fetchFrom(ctx context.Context, cons jetstream.Consumer, next uint64) (uint64, bool) {
	s := k.src
	var delivered uint64
	for ctx.Err() == nil {
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
				meta, merr := m.Metadata()
				if merr != nil {
					cancel()
					s.log.Warn("jetstream: a message without metadata; reading again from the position", zap.Uint64("seq", next), zap.Error(merr))
					return next, true
				}
				switch d := meta.Sequence.Consumer; {
				case d <= delivered:
					continue // a redelivery numbered as its first delivery
				case d > delivered+1:
					cancel()
					s.log.Debug("jetstream: deliveries lost on the way; reading again from the position",
						zap.Uint64("seq", next), zap.Uint64("delivery", d), zap.Uint64("expected", delivered+1))
					return next, true
				default:
					delivered = d
				}
				if meta.Sequence.Stream < next {
					continue // a redelivery
				}
				s.buf.push(m, time.Now())
				next = meta.Sequence.Stream + 1
			}
			err = batch.Error()
		}
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			continue
		}
		s.log.Debug("jetstream: fetch failed; reading again from the position", zap.Uint64("seq", next), zap.Error(err))
		return next, false
	}
	return next, false
}
