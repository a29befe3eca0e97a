package main

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// The limit: the same pipelines written by hand with goroutines and buffered
// channels, carrying typed batches of 64 tuples and recycling them, with the
// same ring size as goshelter's data mailboxes. The acked variant tracks trees
// with the same XOR scheme (one acker goroutine, Storm's single combined ack per
// bolt execution) and honours the same max pending.

// slots is the number of batches a link holds, goshelter's receive buffer size.
const slots = 256

// tracked is a tuple of the acked pipelines: the value, its tree and its edge.
type tracked struct {
	v          Event
	root, edge uint64
}

type batch[T any] struct{ t []T }

// link carries batches from one goroutine to the next. Batches circulate:
// the producer takes an empty one from free (parking when all are in flight)
// and the consumer gives it back, so the steady state allocates nothing.
type link[T any] struct {
	data chan *batch[T]
	free chan *batch[T]
}

func newLink[T any]() *link[T] {
	l := &link[T]{data: make(chan *batch[T], slots), free: make(chan *batch[T], slots)}
	for range slots {
		l.free <- &batch[T]{t: make([]T, 0, batchSize)}
	}
	return l
}

// writer batches tuples onto a link.
type writer[T any] struct {
	l   *link[T]
	cur *batch[T]
}

func (w *writer[T]) put(t T) {
	if w.cur == nil {
		w.cur = <-w.l.free
	}
	w.cur.t = append(w.cur.t, t)
	if len(w.cur.t) == batchSize {
		w.flush()
	}
}

func (w *writer[T]) flush() {
	if w.cur != nil && len(w.cur.t) > 0 {
		w.l.data <- w.cur
		w.cur = nil
	}
}

func (l *link[T]) recycle(b *batch[T]) {
	clear(b.t)
	b.t = b.t[:0]
	l.free <- b
}

// op is an acker operation: XOR val into the tree root.
type op struct{ root, val uint64 }

type opBatch struct{ ops []op }

type rootBatch struct{ roots []uint64 }

// pool hands out reusable values, making new ones only when none is free.
type pool[T any] struct {
	free chan *T
	make func() *T
}

func newPool[T any](n int, mk func() *T) *pool[T] { return &pool[T]{free: make(chan *T, n), make: mk} }

func (p *pool[T]) get() *T {
	select {
	case v := <-p.free:
		return v
	default:
		return p.make()
	}
}

func (p *pool[T]) put(v *T) {
	select {
	case p.free <- v:
	default:
	}
}

// ackLane batches a goroutine's acker operations.
type ackLane struct {
	to   chan *opBatch
	pool *pool[opBatch]
	cur  *opBatch
}

func (a *ackLane) add(o op) {
	if a.cur == nil {
		a.cur = a.pool.get()
	}
	a.cur.ops = append(a.cur.ops, o)
	if len(a.cur.ops) == batchSize {
		a.flush()
	}
}

func (a *ackLane) flush() {
	if a.cur != nil && len(a.cur.ops) > 0 {
		a.to <- a.cur
		a.cur = nil
	}
}

// chanPipe is a running channel pipeline.
type chanPipe struct {
	stop    atomic.Bool
	stopped chan struct{} // closed when the spout has drained and exited
	wg      sync.WaitGroup
	err     error // set by the spout before stopped closes
}

func (c *chanPipe) Stop() error {
	c.stop.Store(true)
	<-c.stopped
	c.wg.Wait()
	return c.err
}

func startChan(s setup) (pipeline, error) {
	c := &chanPipe{stopped: make(chan struct{})}
	switch {
	case s.shape == wordCount:
		c.wordCount(s)
	case s.acked:
		c.acked(s)
	default:
		c.unacked(s)
	}
	return c, nil
}

// unacked: spout -> [relay ->] sink, typed batches, no tracking.
func (c *chanPipe) unacked(s setup) {
	first := newLink[Event]()
	last := first
	if s.shape == twoHop {
		last = newLink[Event]()
		c.goRun(func() { relay(first, last) })
	}
	t := s.probe.tally()
	c.goRun(func() { sink(last, t) })
	go func() {
		defer close(c.stopped)
		lim := newLimiter(s.rate)
		for !c.stop.Load() {
			b := <-first.free
			if lim == nil {
				for range batchSize {
					b.t = append(b.t, Event{Body: body})
				}
			}
			for len(b.t) < batchSize && lim.take() {
				b.t = append(b.t, Event{Body: body})
			}
			if len(b.t) == 0 {
				first.free <- b
				time.Sleep(s.spoutWait)
				continue
			}
			first.data <- b
		}
		close(first.data)
	}()
}

func (c *chanPipe) goRun(fn func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

// relay forwards every tuple to out, batching its emits.
func relay(in, out *link[Event]) {
	w := &writer[Event]{l: out}
	for b := range in.data {
		for _, t := range b.t {
			w.put(t)
		}
		in.recycle(b)
		if len(in.data) == 0 {
			w.flush()
		}
	}
	w.flush()
	close(out.data)
}

// relayAcked forwards every tuple on a new edge of its tree and acks the input
// with that edge in one op, as Storm's bolts do.
func relayAcked(in, out *link[tracked], acks *ackLane) {
	w := &writer[tracked]{l: out}
	ids := newIDs()
	for b := range in.data {
		for _, t := range b.t {
			o := tracked{v: t.v, root: t.root, edge: ids.next()}
			acks.add(op{root: t.root, val: t.edge ^ o.edge})
			w.put(o)
		}
		in.recycle(b)
		if len(in.data) == 0 {
			acks.flush()
			w.flush()
		}
	}
	acks.flush()
	w.flush()
	close(out.data)
}

// sink counts every tuple.
func sink(in *link[Event], t *tally) {
	for b := range in.data {
		for _, e := range b.t {
			if e.Body != nil {
				t.inc()
			}
		}
		in.recycle(b)
	}
}

// sinkAcked counts and acks every tuple.
func sinkAcked(in *link[tracked], t *tally, acks *ackLane) {
	for b := range in.data {
		for _, x := range b.t {
			acks.add(op{root: x.root, val: x.edge})
			t.inc()
		}
		in.recycle(b)
		if len(in.data) == 0 {
			acks.flush()
		}
	}
	acks.flush()
}

// ids are random non-zero tuple and tree ids, as goshelter's.
type ids struct{ r *rand.PCG }

func newIDs() ids { return ids{rand.NewPCG(rand.Uint64(), rand.Uint64())} }

func (i ids) next() uint64 {
	for {
		if v := i.r.Uint64(); v != 0 {
			return v
		}
	}
}

// acked: spout -> [relay ->] sink with an acker goroutine. The feedback channel
// holds max pending batches, so the acker never blocks and the cycle
// spout -> bolts -> acker -> spout cannot deadlock.
func (c *chanPipe) acked(s setup) {
	first := newLink[tracked]()
	last := first
	opPool := newPool(1024, func() *opBatch { return &opBatch{ops: make([]op, 0, batchSize)} })
	rootPool := newPool(1024, func() *rootBatch { return &rootBatch{roots: make([]uint64, 0, batchSize)} })
	toAcker := make(chan *opBatch, slots)
	feedback := make(chan *rootBatch, s.pending+1)
	var senders sync.WaitGroup
	lane := func() *ackLane { return &ackLane{to: toAcker, pool: opPool} }
	goSender := func(fn func()) {
		senders.Add(1)
		c.goRun(func() {
			defer senders.Done()
			fn()
		})
	}
	if s.shape == twoHop {
		last = newLink[tracked]()
		mid, l := first, lane()
		goSender(func() { relayAcked(mid, last, l) })
	}
	t, l := s.probe.tally(), lane()
	goSender(func() { sinkAcked(last, t, l) })
	c.goRun(func() { acker(toAcker, feedback, opPool, rootPool) })
	sp := &chanSpout{s: s, out: &writer[tracked]{l: first}, acks: lane(), feedback: feedback, roots: rootPool,
		pending: make(map[uint64]int64, s.pending), ids: newIDs(), lim: newLimiter(s.rate)}
	senders.Add(1)
	go func() {
		defer close(c.stopped)
		c.err = sp.run(&c.stop)
		close(first.data)
		senders.Done()
	}()
	c.goRun(func() {
		senders.Wait()
		close(toAcker)
	})
}

// acker XORs operations into trees and reports completed roots to the spout.
func acker(in chan *opBatch, feedback chan *rootBatch, ops *pool[opBatch], roots *pool[rootBatch]) {
	trees := make(map[uint64]uint64)
	var out *rootBatch
	flush := func() {
		if out != nil {
			select {
			case feedback <- out:
			default: // the spout has gone (only at the end)
			}
			out = nil
		}
	}
	for b := range in {
		for _, o := range b.ops {
			v := trees[o.root] ^ o.val
			if v != 0 {
				trees[o.root] = v
				continue
			}
			delete(trees, o.root)
			if out == nil {
				out = roots.get()
			}
			out.roots = append(out.roots, o.root)
			if len(out.roots) == batchSize {
				flush()
			}
		}
		b.ops = b.ops[:0]
		ops.put(b)
		if len(in) == 0 {
			flush()
		}
	}
	flush()
}

// chanSpout is the acked spout: it starts a tree per tuple (root and first edge
// in one op to the acker) and keeps at most s.pending trees open.
type chanSpout struct {
	s        setup
	out      *writer[tracked]
	acks     *ackLane
	feedback chan *rootBatch
	roots    *pool[rootBatch]
	pending  map[uint64]int64 // root -> emit stamp of sampled tuples, else 0
	ids      ids
	lim      *limiter
	seq      uint64
	timer    *time.Timer
}

func (c *chanSpout) run(stop *atomic.Bool) error {
	c.timer = time.NewTimer(time.Hour)
	defer c.timer.Stop()
	for !stop.Load() {
		c.poll()
		switch {
		case len(c.pending) >= c.s.pending:
			c.flush()
			c.settle(<-c.feedback)
		case !c.lim.take():
			c.flush()
			c.timer.Reset(c.s.spoutWait)
			select {
			case b := <-c.feedback:
				c.settle(b)
			case <-c.timer.C:
			}
		default:
			c.emit()
		}
	}
	c.flush()
	deadline := time.Now().Add(10 * time.Second)
	for len(c.pending) > 0 {
		if time.Now().After(deadline) {
			return errors.New("chan spout: trees still open 10 s after stop")
		}
		c.timer.Reset(10 * time.Millisecond)
		select {
		case b := <-c.feedback:
			c.settle(b)
		case <-c.timer.C:
		}
	}
	return nil
}

func (c *chanSpout) emit() {
	c.seq++
	var at int64
	if c.seq%sampleEvery == 0 {
		at = stamp()
	}
	root, edge := c.ids.next(), c.ids.next()
	c.pending[root] = at
	// The op batch and the data batch fill in step, so a tree's start leaves just
	// before its tuples (XOR makes the order irrelevant to correctness anyway).
	c.acks.add(op{root: root, val: edge})
	c.out.put(tracked{v: Event{Body: body}, root: root, edge: edge})
}

func (c *chanSpout) flush() {
	c.acks.flush()
	c.out.flush()
}

// poll settles whatever feedback is waiting, without blocking.
func (c *chanSpout) poll() {
	for {
		select {
		case b := <-c.feedback:
			c.settle(b)
		default:
			return
		}
	}
}

func (c *chanSpout) settle(b *rootBatch) {
	for _, root := range b.roots {
		if at, ok := c.pending[root]; ok {
			delete(c.pending, root)
			if at != 0 {
				c.s.probe.lat.record(time.Duration(stamp() - at))
			}
		}
	}
	b.roots = b.roots[:0]
	c.roots.put(b)
}

// sentenceValue and wordValue are the word count's tuples on typed channels:
// strings by value, nothing boxed (the limit).
type (
	sentenceValue struct{ Text string }
	wordValue     struct{ Text string }
)

// wordCount: sentences -> split -> count x2 by a hash of the word, unacked.
func (c *chanPipe) wordCount(s setup) {
	in := newLink[sentenceValue]()
	counts := []*link[wordValue]{newLink[wordValue](), newLink[wordValue]()}
	for _, l := range counts {
		t := s.probe.tally()
		c.goRun(func() { countWords(l, t) })
	}
	c.goRun(func() { split(in, counts) })
	go func() {
		defer close(c.stopped)
		w := &writer[sentenceValue]{l: in}
		for i := 0; !c.stop.Load(); i++ {
			w.put(sentenceValue{sentences[i%len(sentences)]})
		}
		w.flush()
		close(in.data)
	}()
}

func split(in *link[sentenceValue], out []*link[wordValue]) {
	ws := make([]*writer[wordValue], len(out))
	for i, l := range out {
		ws[i] = &writer[wordValue]{l: l}
	}
	emit := func(w string) {
		ws[hashString(w)%uint64(len(ws))].put(wordValue{w})
	}
	for b := range in.data {
		for _, t := range b.t {
			eachWord(t.Text, emit)
		}
		in.recycle(b)
		if len(in.data) == 0 {
			for _, w := range ws {
				w.flush()
			}
		}
	}
	for i, w := range ws {
		w.flush()
		close(out[i].data)
	}
}

func countWords(in *link[wordValue], t *tally) {
	counts := map[string]int{}
	for b := range in.data {
		for _, x := range b.t {
			counts[x.Text]++
			t.inc()
		}
		in.recycle(b)
	}
}

// hashString is FNV-1a, the hash goshelter's fields grouping uses for string
// keys, so the hand-written split spreads words over the counters as the
// topology does and pays the same per word.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
