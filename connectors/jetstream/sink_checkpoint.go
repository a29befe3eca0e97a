package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// In a topology with state (dsl.TaskInfo.Checkpointed) the sink writes
// ahead: JetStream has no transaction another process could commit for a
// crashed one (an atomic batch is abandoned when its publisher dies), so
// the records go through the checkpoint store instead.
//
//  1. Execute keeps the input's record and acks the input at once.
//  2. PrepareCheckpoint(n), at the barrier, gives every record an id
//     (<topology>/<component>/<task>/<n>/<place in n>/<a nonce of n>, or
//     the record's own MsgID) and returns the encoded records: they commit
//     with checkpoint n, atomically with the state and the positions.
//  3. CommitCheckpoint(n), once n is in the store, hands n's records to the
//     task's publisher goroutine, which publishes each with its id as
//     Nats-Msg-Id and retries until the stream acknowledges it.
//  4. RecoverCheckpoint(prepared), after a crash or a rollback, publishes
//     the records of the last committed checkpoint again, with the same
//     ids: the stream stores those it already had once (de-duplication).
//
// Records a later checkpoint finds still unacknowledged are encoded in its
// prepared bytes too, so whatever checkpoint is the last committed one
// holds every record not yet stored. The nonce (random, stored with the
// records) keeps a new store of the same topology from reusing ids within
// the stream's duplicate window.
//
// Costs: a checkpoint's output goes through the store, and reaches the
// stream a checkpoint later than without state (after the commit). The
// stream's Duplicates window must outlast the longest recovery (see
// [WithDuplicateWindow]); what is kept is capped ([WithKeptBytes]).

// kept is one record a checkpointed sink task keeps until the stream
// acknowledged it. Its fields but stored are set before the publisher sees
// it and never change after.
type kept struct {
	id, subject string
	data        []byte
	header      nats.Header
	size        int         // its encoded size
	stored      atomic.Bool // the stream acknowledged it
}

// ahead is a checkpointed sink task's write-ahead of its records. Its fields
// but the publisher's queue are touched on the task's goroutine only.
type ahead struct {
	info      dsl.TaskInfo
	log       *zap.Logger
	cfg       config
	fresh     []*kept // records of the inputs since the last barrier
	open      []*kept // records of prepared checkpoints not known stored, oldest first
	due       []*kept // the records prepared at the last barrier: its commit publishes them
	keptBytes int     // encoded size of fresh and open

	mu      sync.Mutex // mu guards queue
	queue   []*kept    // records handed to the publisher
	more    chan struct{}
	checked map[string]bool // streams whose duplicate window was checked (publisher's own)
	sleep   pauser          // between failed publishes
}

func newAhead(info dsl.TaskInfo, log *zap.Logger, cfg config) *ahead {
	return &ahead{info: info, log: log, cfg: cfg, more: make(chan struct{}, 1), checked: map[string]bool{}}
}

// keep holds r until a checkpoint covers it; an error when the cap is passed.
func (w *ahead) keep(r Record) error {
	k := &kept{id: r.MsgID, subject: r.Subject, data: r.Data, header: r.Header}
	k.size = encodedSize(k)
	if w.keptBytes+k.size > w.cfg.keptMax {
		return fmt.Errorf("jetstream: sink %q task %d keeps %d bytes of records for its checkpoints, over its cap of %d (WithKeptBytes): the stream takes them too slowly, or a checkpoint interval holds too much output; shorten the interval or raise the cap",
			w.info.Component, w.info.Index, w.keptBytes+k.size, w.cfg.keptMax)
	}
	w.fresh = append(w.fresh, k)
	w.keptBytes += k.size
	return nil
}

// RecoverCheckpoint publishes again the records the last committed
// checkpoint prepared (nil: none); the stream de-duplicates those it has.
func (s *sink[In]) RecoverCheckpoint(prepared []byte) error {
	if s.w == nil || prepared == nil {
		return nil
	}
	recs, err := decodeKept(prepared)
	if err != nil {
		return fmt.Errorf("jetstream: sink %q task %d: reading the records of the last checkpoint: %w", s.info.Component, s.info.Index, err)
	}
	s.w.open = recs
	for _, k := range recs {
		s.w.keptBytes += k.size
	}
	s.w.hand(recs)
	return nil
}

// PrepareCheckpoint names the records kept since the last barrier and
// returns every record not known stored, encoded: they commit with
// checkpoint id.
func (s *sink[In]) PrepareCheckpoint(id uint64) ([]byte, error) {
	w := s.w
	if w == nil {
		return nil, nil
	}
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	prefix := fmt.Sprintf("%s/%s/%d/%d/", s.info.Topology, s.info.Component, s.info.Index, id)
	for i, k := range w.fresh {
		if k.id == "" {
			k.id = prefix + fmt.Sprintf("%d/%x", i, nonce)
			k.size = encodedSize(k)
		}
	}
	open := w.open[:0]
	for _, k := range w.open {
		if !k.stored.Load() {
			open = append(open, k)
		}
	}
	clear(w.open[len(open):])
	w.open = append(open, w.fresh...)
	w.due, w.fresh = w.fresh, nil
	w.keptBytes = 0
	for _, k := range w.open {
		w.keptBytes += k.size
	}
	if len(w.open) == 0 {
		return nil, nil
	}
	return encodeKept(w.open), nil
}

// CommitCheckpoint publishes the records prepared for checkpoint id, which
// the store now holds.
func (s *sink[In]) CommitCheckpoint(id uint64) error {
	if s.w == nil {
		return nil
	}
	s.w.hand(s.w.due)
	s.w.due = nil
	return nil
}

// hand gives records to the publisher.
func (w *ahead) hand(recs []*kept) {
	if len(recs) == 0 {
		return
	}
	w.mu.Lock()
	w.queue = append(w.queue, recs...)
	w.mu.Unlock()
	select {
	case w.more <- struct{}{}:
	default:
	}
}

func (w *ahead) take() []*kept {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// publish publishes the records handed to it until ctx ends (the task is
// deactivated, stops or is rolled back), then closes the connection. A
// record the stream refuses or does not acknowledge in time is published
// again after a back-off, with its id: the stream stores it once.
func (w *ahead) publish(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) {
	defer nc.Close()
	wait := 50 * time.Millisecond
	for {
		recs := w.take()
		if len(recs) == 0 {
			select {
			case <-w.more:
				continue
			case <-ctx.Done():
				return
			}
		}
		failed := w.publishAll(ctx, js, recs)
		if ctx.Err() != nil {
			return
		}
		if len(failed) == 0 {
			wait = 50 * time.Millisecond
			continue
		}
		w.mu.Lock()
		w.queue = append(failed, w.queue...)
		w.mu.Unlock()
		if !w.sleep.pause(ctx, wait) {
			return
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// publishAll publishes recs and waits for their acknowledgements; it returns
// those not stored.
func (w *ahead) publishAll(ctx context.Context, js jetstream.JetStream, recs []*kept) []*kept {
	type sent struct {
		k   *kept
		ack jetstream.PubAckFuture
	}
	var (
		out    []sent
		failed []*kept
	)
	for _, k := range recs {
		if k.stored.Load() {
			continue
		}
		f, err := js.PublishMsgAsync(&nats.Msg{Subject: k.subject, Data: k.data, Header: k.header}, jetstream.WithMsgID(k.id))
		if err != nil {
			w.log.Debug("jetstream: publish not sent; retrying", zap.String("subject", k.subject), zap.String("id", k.id), zap.Error(err))
			failed = append(failed, k)
			continue
		}
		out = append(out, sent{k, f})
	}
	var first error
	for _, p := range out {
		select {
		case a := <-p.ack.Ok():
			p.k.stored.Store(true)
			w.checkWindow(ctx, js, a.Stream)
		case err := <-p.ack.Err():
			if first == nil {
				first = err
				w.log.Warn("jetstream: publish of a committed record failed; retrying", zap.String("subject", p.k.subject), zap.String("id", p.k.id), zap.Error(err))
			}
			failed = append(failed, p.k)
		case <-ctx.Done():
			return nil
		}
	}
	return failed
}

// checkWindow fails the task if stream (checked once) remembers message ids
// for less than the sink needs to de-duplicate what it publishes again
// after a crash.
func (w *ahead) checkWindow(ctx context.Context, js jetstream.JetStream, stream string) {
	if stream == "" || w.checked[stream] {
		return
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := js.Stream(actx, stream)
	if err != nil {
		return // checked at the next acknowledgement
	}
	w.checked[stream] = true
	if d := st.CachedInfo().Config.Duplicates; d > 0 && d < w.cfg.dupWindow {
		w.info.Fail(fmt.Errorf("jetstream: sink %q: stream %q remembers message ids for %v (its Duplicates window), less than the %v this sink needs (WithDuplicateWindow) to store once the records it publishes again after a crash: raise the stream's duplicate window",
			w.info.Component, stream, d, w.cfg.dupWindow))
	}
}

// encodedSize is k's size in encodeKept's format, about.
func encodedSize(k *kept) int {
	n := 3*binary.MaxVarintLen32 + len(k.id) + len(k.subject) + len(k.data)
	for key, vs := range k.header {
		n += 2*binary.MaxVarintLen32 + len(key)
		for _, v := range vs {
			n += binary.MaxVarintLen32 + len(v)
		}
	}
	return n
}

// keptVersion heads the prepared bytes, so a later format is told apart.
const keptVersion = 1

// encodeKept encodes records: a version byte, their count, then each one's
// id, subject, data and header, every string length-prefixed.
func encodeKept(recs []*kept) []byte {
	b := []byte{keptVersion}
	b = binary.AppendUvarint(b, uint64(len(recs)))
	str := func(s []byte) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	for _, k := range recs {
		str([]byte(k.id))
		str([]byte(k.subject))
		str(k.data)
		b = binary.AppendUvarint(b, uint64(len(k.header)))
		for key, vs := range k.header {
			str([]byte(key))
			b = binary.AppendUvarint(b, uint64(len(vs)))
			for _, v := range vs {
				str([]byte(v))
			}
		}
	}
	return b
}

var errKeptFormat = errors.New("not records written by this sink")

// decodeKept reads what encodeKept wrote.
func decodeKept(b []byte) ([]*kept, error) {
	if len(b) == 0 || b[0] != keptVersion {
		return nil, fmt.Errorf("%w (version %x)", errKeptFormat, b[:min(len(b), 1)])
	}
	b = append([]byte(nil), b[1:]...) // the records keep slices of it
	bad := false
	num := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	str := func() []byte {
		n := num()
		if bad || n > uint64(len(b)) {
			bad = true
			return nil
		}
		s := b[:n:n]
		b = b[n:]
		return s
	}
	count := num()
	var recs []*kept
	for i := uint64(0); i < count && !bad; i++ {
		k := &kept{id: string(str()), subject: string(str()), data: str()}
		if nh := num(); nh > 0 && !bad {
			k.header = nats.Header{}
			for j := uint64(0); j < nh && !bad; j++ {
				key := string(str())
				for nv, v := num(), uint64(0); v < nv && !bad; v++ {
					k.header[key] = append(k.header[key], string(str()))
				}
			}
		}
		k.size = encodedSize(k)
		recs = append(recs, k)
	}
	if bad || len(b) != 0 {
		return nil, fmt.Errorf("%w: truncated or malformed (%d records read)", errKeptFormat, len(recs))
	}
	return recs, nil
}
