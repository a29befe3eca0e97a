package jetstream

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Poison messages in a topology with state. A failed tree rolls the whole
// topology back, and every task of the new incarnation is made anew: what a
// task learnt of a message's failures would die with it, and a message that
// always fails would roll the topology back until the supervisor's restart
// limit stops it. So the spout definition keeps the failures of its
// messages (poison), shared by its tasks and their incarnations in this
// process: the task that hands a message out again after the rewind waits
// for its back-off ([WithNackBackoff]) first, and once it failed
// [WithMaxDeliver] times skips it (its position moves past it) and reports
// it once.

// poison is a spout definition's account of failed messages, by stream
// sequence. Each sequence belongs to one task index (sequence mod
// parallelism), so tasks never compete for an entry; mu is for the hand-over
// between incarnations, whose goroutines differ.
type poison struct {
	mu       sync.Mutex         // mu guards every field below
	failures map[uint64]*failed // by stream sequence
	gaveUp   map[int]int64      // messages given up, by task index

	// failing is len(failures), read without mu: while no message failed,
	// the check of each message handed out costs an atomic load.
	failing atomic.Int64
}

// failed is a message's account of failures.
type failed struct {
	fails    uint64
	last     time.Time // of the last failure
	gaveUp   bool      // failed max deliver times: skipped from now on
	reported bool      // its give-up was logged and reported
}

func newPoison() *poison {
	return &poison{failures: map[uint64]*failed{}, gaveUp: map[int]int64{}}
}

// fail counts a failure of the message at stream sequence seq.
func (p *poison) fail(seq uint64, now time.Time, c *config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.failures[seq]
	if f == nil {
		f = &failed{}
		p.failures[seq] = f
		p.failing.Add(1)
	}
	f.fails++
	f.last = now
	f.gaveUp = f.gaveUp || (c.maxDeliver > 0 && f.fails >= uint64(c.maxDeliver))
}

// verdict says what to do with the message at seq now: skip it (given up;
// report is true the first time, with its failures), hold it until due (a
// retry waiting for its back-off), or hand it out (due zero).
func (p *poison) verdict(seq uint64, now time.Time, c *config) (skip, report bool, fails uint64, due time.Time) {
	if p.failing.Load() == 0 {
		return false, false, 0, time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.failures[seq]
	switch {
	case f == nil:
		return false, false, 0, time.Time{}
	case f.gaveUp:
		report, f.reported = !f.reported, true
		return true, report, f.fails, time.Time{}
	}
	if at := f.last.Add(backoff(c.nackBase, c.nackMax, f.fails)); at.After(now) {
		return false, false, f.fails, at
	}
	return false, false, f.fails, time.Time{}
}

// prune forgets the failures of task index's messages (of parallelism
// tasks) below stream sequence below: a checkpoint past them committed, so
// no rewind goes back there.
func (p *poison) prune(index, parallelism int, below uint64) {
	if p.failing.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for seq := range p.failures {
		if seq < below && seq%uint64(max(parallelism, 1)) == uint64(index) {
			delete(p.failures, seq)
			p.failing.Add(-1)
		}
	}
}

// gaveUpOne counts a message given up by task index and returns the task's
// total, which outlives the task's incarnations.
func (p *poison) gaveUpOne(index int) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gaveUp[index]++
	return p.gaveUp[index]
}

// reportGiveUp logs m, given up after fails failures, counts it in the
// task's metric "jetstream.gave-up" and passes it to the [WithGiveUp]
// function. How the message is dropped (skipped in the checkpoint, or
// terminated on the server) is told by how.
func (s *source[T]) reportGiveUp(m Message, fails uint64, total int64, how string) {
	s.log.Error("jetstream: message failed max deliver times; "+how,
		zap.String("stream", m.Stream), zap.Uint64("seq", m.StreamSeq), zap.String("subject", m.Subject),
		zap.Uint64("fails", fails), zap.Int("maxDeliver", s.cfg.maxDeliver))
	s.info.Metric("jetstream.gave-up", total)
	if s.cfg.giveUp != nil {
		s.cfg.giveUp(m)
	}
}
