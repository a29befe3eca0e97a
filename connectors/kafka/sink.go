package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/goshelter/goshelter/dsl"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// Sink defines a bolt that produces a record for each input to the brokers at
// seeds: route chooses the record's topic, key, value, headers and timestamp
// (its Partition and Offset are ignored; the client's partitioner places it
// by key). The input is acked only when the broker acknowledged the record
// (acks=all, idempotent producer) and failed if producing it failed, so the
// tree's spout hears of the outcome. route runs on the task's goroutine; a
// panic in it, or an empty topic, fails the input.
//
// Inputs are produced in order per partition; a full produce buffer (the
// client's MaxBufferedRecords) makes the task wait, which is the sink's
// back-pressure. The client produces without a linger (franz-go's default is
// 10 ms) unless [WithClientOptions] sets kgo.ProducerLinger: the spouts' max
// pending bounds the inputs in flight, so a linger would hold each window of
// them for its length. The record's Key, Value and header values are handed
// to the client as they are, not copied: they must not change (a tuple is
// immutable). Sink panics when seeds is empty or route is nil.
//
// In a topology with state the sink is exactly-once: its records for each
// checkpoint go in a Kafka transaction that commits only after the store
// committed the checkpoint (see the package doc, "Exactly-once"), unless
// [WithoutTransactions] makes it at-least-once.
func Sink[In any](seeds []string, route func(In) Record, opts ...Option) *dsl.BoltSpec {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case len(seeds) == 0:
		panic(errors.New("kafka: sink: no seed broker"))
	case route == nil:
		panic(errors.New("kafka: sink: the route function is nil"))
	}
	// The constructor's result is the concrete type, so that Build sees the
	// checkpoint hooks.
	return dsl.Manual(func(info dsl.TaskInfo) *sink[In] {
		s, err := newSink(info, cfg, seeds, route)
		if err != nil {
			info.Fail(err)
		}
		return s
	})
}

// sink is one task's producer. Execute runs on the task's goroutine; the
// client calls the promise on its own goroutines, which queues the outcomes
// and posts one drain to the task at a time, so acks and fails happen on the
// task's goroutine in batches (one Post per batch, not per record).
//
// Nothing is allocated per record once the sink is warm: each input travels
// in a [produced] taken from the task's free list, whose kgo.Record is the one
// handed to the client, and comes back to the free list once its outcome is
// applied. One promise function serves every record.
type sink[In any] struct {
	route   func(In) Record
	cl      *kgo.Client // nil if it could not be created (the task failed) or under state
	tx      *txns       // the transactional producers under state, else nil
	ctx     context.Context
	post    func(func(dsl.Collector))
	log     *zap.Logger
	promise func(*kgo.Record, error) // s.done, bound once
	drainFn func(dsl.Collector)      // s.drain, bound once
	free    []*produced              // task goroutine only

	mu       sync.Mutex // mu guards outcomes and posted
	outcomes []*produced
	spare    []*produced // the drained batch's slice, reused for the next one
	posted   bool
	failed   [2]bool // a record of the transaction on tx.cls[i] failed
}

// produced is an input in flight: the record produced for it and, once the
// promise ran, the outcome. The record's Context is the produced itself, so
// the promise finds its input without a closure or a map: franz-go documents
// Record.Context as the caller's ("used for enriching records"), keeps it
// with the record and only reads its Done channel, which is nil here (the
// Produce ctx is still the task's, for cancellation).
type produced struct {
	context.Context // context.Background(): never done, no values
	rec             kgo.Record
	input           dsl.Tuple
	err             error
	txn             int // the index in txns.cls of its producer, -1 outside transactions
}

func newSink[In any](info dsl.TaskInfo, cfg config, seeds []string, route func(In) Record) (*sink[In], error) {
	s := &sink[In]{route: route, ctx: info.Context(), post: info.Post, log: info.Logger}
	s.promise, s.drainFn = s.done, s.drain
	if s.log == nil {
		s.log = zap.NewNop()
	}
	// No linger by default (franz-go's is 10 ms): the sink's inputs are
	// bounded by the spouts' max pending, so once a window of them waits in
	// the client nothing more comes until the linger ends, and every window
	// would wait for it. Batches still form while requests are in flight. A
	// ProducerLinger in WithClientOptions overrides this.
	opts := append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ProducerLinger(0)}, cfg.client...)
	// Last, so no user option undoes the guarantee.
	opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	if info.Checkpointed && !cfg.sink.atLeastOnce {
		tx, err := newTxns(info, cfg.sink, opts, s.log)
		if err != nil {
			return s, err
		}
		s.tx = tx
		// No flush at the end: a prepared transaction was flushed, and
		// what the open one holds is past the last checkpoint, to be
		// aborted and replayed.
		context.AfterFunc(s.ctx, tx.close)
		return s, nil
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return s, fmt.Errorf("kafka: creating the sink's client: %w", err)
	}
	s.cl = cl
	// The task's context ends when the bolts are deactivated, after the
	// topology drained: what is still buffered gets a bounded flush.
	timeout := cfg.closeTimeout
	context.AfterFunc(s.ctx, func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := cl.Flush(ctx); err != nil {
			s.log.Warn("kafka: sink flush at stop", zap.Error(err))
		}
		cl.Close()
	})
	return s, nil
}

// Execute produces the input's record; its promise acks or fails the input.
func (s *sink[In]) Execute(in In, input dsl.Tuple, c dsl.Collector) error {
	if s.cl == nil && s.tx == nil {
		return errors.New("kafka: sink has no client")
	}
	r := s.route(in)
	if r.Topic == "" {
		return fmt.Errorf("kafka: sink: route gave a record with no topic for %T", in)
	}
	cl, txn := s.cl, -1
	if s.tx != nil {
		if !s.tx.begun {
			s.mu.Lock()
			s.failed[s.tx.cur] = false // a new transaction
			s.mu.Unlock()
		}
		var err error
		if cl, txn, err = s.tx.producer(); err != nil {
			return err
		}
	}
	p := s.take()
	p.input, p.txn = input, txn
	r.fill(&p.rec)
	p.rec.Context = p
	cl.Produce(s.ctx, &p.rec, s.promise)
	return nil
}

// RecoverCheckpoint commits the transaction the last committed checkpoint
// prepared and fences every other (see [txns.recoverCheckpoint]). The
// runtime calls it, under state only, before the first input.
func (s *sink[In]) RecoverCheckpoint(prepared []byte) error {
	if s.tx == nil {
		return nil // at-least-once: nothing to recover
	}
	return s.tx.recoverCheckpoint(s.ctx, prepared)
}

// PrepareCheckpoint flushes the transaction of the inputs before the
// barrier of checkpoint id and returns what identifies it; the checkpoint
// stores it. Every input before the barrier was acked or failed already:
// their records' promises all ran.
func (s *sink[In]) PrepareCheckpoint(id uint64) ([]byte, error) {
	if s.tx == nil {
		return nil, nil // at-least-once: the checkpoint waited for the acks
	}
	return s.tx.prepareCheckpoint(s.ctx, id, s.failedTxn)
}

// failedTxn reports whether a record of the transaction on tx.cls[i] failed.
func (s *sink[In]) failedTxn(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[i]
}

// CommitCheckpoint commits the transaction prepared for checkpoint id, which
// the store committed.
func (s *sink[In]) CommitCheckpoint(id uint64) error {
	if s.tx == nil {
		return nil
	}
	return s.tx.commitCheckpoint(s.ctx, id)
}

// take returns a produced from the free list, or a new one.
func (s *sink[In]) take() *produced {
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		return p
	}
	return &produced{Context: context.Background(), txn: -1}
}

// done is the promise of every record: it queues the outcome and posts a
// drain unless one is posted already.
func (s *sink[In]) done(r *kgo.Record, err error) {
	p := r.Context.(*produced)
	p.err = err
	s.mu.Lock()
	if err != nil && p.txn >= 0 {
		s.failed[p.txn] = true
	}
	s.outcomes = append(s.outcomes, p)
	first := !s.posted
	s.posted = true
	s.mu.Unlock()
	if first {
		s.post(s.drainFn)
	}
}

func (s *sink[In]) drain(c dsl.Collector) {
	s.mu.Lock()
	batch := s.outcomes
	s.outcomes, s.spare = s.spare[:0], nil
	s.posted = false
	s.mu.Unlock()
	for i, p := range batch {
		if p.err != nil {
			s.log.Warn("kafka: produce failed; failing the input", zap.Error(p.err))
			c.Fail(p.input)
		} else {
			c.Ack(p.input)
		}
		// The client is done with the record once its promise ran.
		p.rec, p.input, p.err, p.txn = kgo.Record{}, dsl.Tuple{}, nil, -1
		s.free = append(s.free, p)
		batch[i] = nil
	}
	s.mu.Lock()
	if s.spare == nil {
		s.spare = batch[:0]
	}
	s.mu.Unlock()
}
