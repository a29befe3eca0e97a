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
// back-pressure. Sink panics when seeds is empty or route is nil.
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
	return dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[In] {
		s, err := newSink(info, cfg, seeds, route)
		if err != nil {
			info.Fail(err)
		}
		return s
	})
}

// sink is one task's producer. Execute runs on the task's goroutine; the
// client calls the promises on its own goroutines, which queue the outcomes
// and post one drain to the task at a time, so acks and fails happen on the
// task's goroutine in batches.
type sink[In any] struct {
	route func(In) Record
	cl    *kgo.Client // nil if it could not be created (the task failed)
	ctx   context.Context
	post  func(func(dsl.Collector))
	log   *zap.Logger

	mu       sync.Mutex // mu guards outcomes and posted
	outcomes []outcome
	posted   bool
}

type outcome struct {
	input dsl.Tuple
	err   error
}

func newSink[In any](info dsl.TaskInfo, cfg config, seeds []string, route func(In) Record) (*sink[In], error) {
	s := &sink[In]{route: route, ctx: info.Context(), post: info.Post, log: info.Logger}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, cfg.client...)
	// Last, so no user option undoes the guarantee.
	opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
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
	if s.cl == nil {
		return errors.New("kafka: sink has no client")
	}
	r := s.route(in)
	if r.Topic == "" {
		return fmt.Errorf("kafka: sink: route gave a record with no topic for %T", in)
	}
	s.cl.Produce(s.ctx, r.toKgo(), func(_ *kgo.Record, err error) { s.done(input, err) })
	return nil
}

func (s *sink[In]) done(input dsl.Tuple, err error) {
	s.mu.Lock()
	s.outcomes = append(s.outcomes, outcome{input, err})
	first := !s.posted
	s.posted = true
	s.mu.Unlock()
	if first {
		s.post(s.drain)
	}
}

func (s *sink[In]) drain(c dsl.Collector) {
	s.mu.Lock()
	batch := s.outcomes
	s.outcomes, s.posted = nil, false
	s.mu.Unlock()
	for _, o := range batch {
		if o.err != nil {
			s.log.Warn("kafka: produce failed; failing the input", zap.Error(o.err))
			c.Fail(o.input)
		} else {
			c.Ack(o.input)
		}
	}
}
