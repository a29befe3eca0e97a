package main

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// The framework floor: the unacked pipelines as bare protoactor-go actors with
// default mailboxes, one message per batch of 64 tuples, and no topology logic.
// Flow control is a credit window: the sink sends each batch back to the spout,
// which only emits while it holds empty batches (slots of them, goshelter's
// ring size).

// floorBatch travels from its owner (the spout, or the relay when relay is set)
// to the next actor, and back to its owner as a credit.
type floorBatch struct {
	t     []Event
	relay bool
}

// pump asks the spout for another burst.
type pump struct{}

type floorSpout struct {
	next     *actor.PID
	free     []*floorBatch
	queued   bool // a pump is on its way
	stopping *atomic.Bool
	drained  chan struct{}
	once     sync.Once
}

// burst is how many batches the spout sends before yielding its mailbox.
const burst = 16

func (s *floorSpout) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case pump:
		s.queued = false
		s.emit(c)
	case *floorBatch:
		m.t = m.t[:0]
		s.free = append(s.free, m)
		if !s.queued {
			s.emit(c)
		}
	}
}

func (s *floorSpout) emit(c actor.Context) {
	if s.stopping.Load() {
		if len(s.free) == slots {
			s.once.Do(func() { close(s.drained) })
		}
		return
	}
	for i := 0; i < burst && len(s.free) > 0; i++ {
		b := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		for range batchSize {
			b.t = append(b.t, Event{Body: body})
		}
		c.Send(s.next, b)
	}
	if len(s.free) > 0 {
		s.queued = true
		c.Send(c.Self(), pump{})
	}
}

// floorRelay copies each input batch into one of its own batches for the sink
// (the per-tuple work of a bolt that emits), and returns the input to the spout.
// Its credit window is its own batches, which the sink sends back.
type floorRelay struct {
	spout, sink *actor.PID
	free        []*floorBatch
	backlog     []*floorBatch // inputs waiting for a free batch, from head on
	head        int
}

func (r *floorRelay) Receive(c actor.Context) {
	b, ok := c.Message().(*floorBatch)
	if !ok {
		return
	}
	if b.relay {
		b.t = b.t[:0]
		r.free = append(r.free, b)
	} else {
		r.backlog = append(r.backlog, b)
	}
	for r.head < len(r.backlog) && len(r.free) > 0 {
		in, out := r.backlog[r.head], r.free[len(r.free)-1]
		r.backlog[r.head], r.head, r.free = nil, r.head+1, r.free[:len(r.free)-1]
		out.t = append(out.t, in.t...)
		c.Send(r.sink, out)
		c.Send(r.spout, in)
	}
	if r.head == len(r.backlog) {
		r.backlog, r.head = r.backlog[:0], 0
	}
}

// floorSink counts every tuple and returns the batch to its sender.
type floorSink struct {
	spout, relay *actor.PID
	t            *tally
}

func (s *floorSink) Receive(c actor.Context) {
	if b, ok := c.Message().(*floorBatch); ok {
		for _, e := range b.t {
			if e.Body != nil {
				s.t.inc()
			}
		}
		if b.relay {
			c.Send(s.relay, b)
		} else {
			c.Send(s.spout, b)
		}
	}
}

type floorPipe struct {
	system   *actor.ActorSystem
	pids     []*actor.PID
	stopping *atomic.Bool
	drained  chan struct{}
}

func startFloor(s setup) (pipeline, error) {
	if s.acked || s.shape == wordCount {
		return nil, errors.New("the protoactor floor has the unacked pipelines only")
	}
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	p := &floorPipe{system: system, stopping: &atomic.Bool{}, drained: make(chan struct{})}
	spout := &floorSpout{stopping: p.stopping, drained: p.drained}
	for range slots {
		spout.free = append(spout.free, &floorBatch{t: make([]Event, 0, batchSize)})
	}
	spoutPID := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return spout }))
	sink := &floorSink{spout: spoutPID, t: s.probe.tally()}
	sinkPID := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return sink }))
	first := sinkPID
	p.pids = []*actor.PID{spoutPID, sinkPID}
	if s.shape == twoHop {
		relay := &floorRelay{spout: spoutPID, sink: sinkPID}
		for range slots {
			relay.free = append(relay.free, &floorBatch{t: make([]Event, 0, batchSize), relay: true})
		}
		first = system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return relay }))
		sink.relay = first // set before the first pump: read only in Receive
		p.pids = append(p.pids, first)
	}
	spout.next = first // set before the first pump: the spout reads it only in Receive
	system.Root.Send(spoutPID, pump{})
	return p, nil
}

func (p *floorPipe) Stop() error {
	p.stopping.Store(true)
	p.system.Root.Send(p.pids[0], pump{})
	var err error
	select {
	case <-p.drained:
	case <-time.After(10 * time.Second):
		err = errors.New("protoactor floor: batches still in flight 10 s after stop")
	}
	for _, pid := range p.pids {
		_ = p.system.Root.StopFuture(pid).Wait()
	}
	p.system.Shutdown()
	return err
}
