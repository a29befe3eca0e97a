// Command guaranteed runs the README's reliable topology: an in-memory queue spout
// that replays nacked items -> addOne (parallelism 2) -> logOdd / logEven. It
// shows at-least-once processing surviving bolt failures and topology restarts.
//
//	go run ./samples/guaranteed -duration 5s -fail-rate 0.1
//	go run ./samples/guaranteed -duration 8s -crash-every 5000
//
// -fail-rate makes addOne fail that fraction of its inputs (by returning an
// error), so their trees are nacked and the queue replays them. -crash-every makes
// the spout's Next panic every N tuples: the task fails, supervision stops the
// incarnation (its open trees are nacked back to the queue) and starts a new one
// after a short back-off; the queue outlives incarnations. -progress prints a
// progress line a second (the default when stdout is a terminal).
// -max-restarts bounds the restarts: past it supervision gives up and the
// topology fails (with -crash-every 100 -max-restarts 0, at its first crash).
// -status 127.0.0.1:8080 serves the status page while it runs.
//
// After -duration it stops (draining what is in flight), then prints the odd and
// even counts and a last line
//
//	summary: emitted=N acked=N failed=N replayed=N pending=N lost=N restarts=N rate=R/s
//
// where pending counts items back in the queue, waiting to be replayed, and lost
// counts items neither acked nor pending: it must be 0. The sink bolts count
// their inputs instead of printing each one. The summary comes however the run
// ends, a failed topology included; the sample exits 1 after it when the
// topology failed or lost=0 does not hold.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/samples/internal/term"
	"github.com/goshelter/goshelter/supervision"
)

// Original, Odd and Even are the topology's streams.
type Original struct{ X int }
type Odd struct{ X int }
type Even struct{ X int }

// errUnlucky is what addOne returns for the inputs it fails on purpose.
var errUnlucky = errors.New("addOne: failed on purpose (-fail-rate)")

// queue is an in-memory work queue of integer items. Items are created on
// demand; a nacked item goes back to the queue and is handed out again before any
// new one; an acked item is done. It lives outside the topology, so it outlives
// incarnations.
type queue struct {
	mu         sync.Mutex // mu guards every field below
	created    int        // items ever created: ids 1..created
	ready      []int      // nacked items waiting to be replayed
	inFlight   map[int]bool
	emitted    int64 // items handed out, replays included
	acked      int64
	failed     int64 // nacks received
	replayed   int64 // nacked items handed out again
	strays     int64 // acks or nacks of items not in flight: must stay 0
	crashEvery int64 // Next panics after every crashEvery items (0: never)
	crashedAt  int64 // the emitted count of the last crash, so each count crashes once
}

func newQueue(crashEvery int64) *queue {
	return &queue{inFlight: map[int]bool{}, crashEvery: crashEvery}
}

// Next hands out the oldest nacked item, or a new one. Every crashEvery items it
// panics before taking one, so the crash loses nothing by itself.
func (q *queue) Next() (int, Original, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.crashEvery > 0 && q.emitted > 0 && q.emitted%q.crashEvery == 0 && q.crashedAt != q.emitted {
		q.crashedAt = q.emitted
		panic(fmt.Sprintf("queue: crashing after %d tuples (-crash-every)", q.emitted))
	}
	var id int
	if len(q.ready) > 0 {
		id = q.ready[0]
		q.ready = q.ready[1:]
		q.replayed++
	} else {
		q.created++
		id = q.created
	}
	q.inFlight[id] = true
	q.emitted++
	return id, Original{X: id}, true
}

// Ack forgets a processed item.
func (q *queue) Ack(id int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.inFlight[id] {
		q.strays++
		return
	}
	delete(q.inFlight, id)
	q.acked++
}

// Nack puts a failed or timed-out item back for replay.
func (q *queue) Nack(id int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.inFlight[id] {
		q.strays++
		return
	}
	delete(q.inFlight, id)
	q.ready = append(q.ready, id)
	q.failed++
}

// summary is the queue's account once the topology has stopped.
type summary struct {
	emitted, acked, failed, replayed, pending, lost, strays int64
}

func (q *queue) summary() summary {
	q.mu.Lock()
	defer q.mu.Unlock()
	pending := int64(len(q.ready))
	return summary{
		emitted: q.emitted, acked: q.acked, failed: q.failed, replayed: q.replayed, pending: pending,
		lost: int64(q.created) - q.acked - pending, strays: q.strays,
	}
}

// counts are what the sink bolts saw.
type counts struct{ odd, even atomic.Int64 }

func topology(q *queue, c *counts, failRate float64) (*dsl.Topology, error) {
	b := dsl.New("guaranteed", dsl.Conf{dsl.MaxSpoutPending: 1024})
	b.Streams(Odd{}, Even{})
	numbers := b.Spout("numbers", dsl.Reliable(q.Next, q.Ack, q.Nack))
	addOne := b.Bolt("addOne", dsl.AutoAck(func(in Original, out dsl.Emitter) error {
		if failRate > 0 && rand.Float64() < failRate {
			return errUnlucky
		}
		if in.X%2 == 0 {
			out.Emit(Odd{in.X + 1})
		} else {
			out.Emit(Even{in.X + 1})
		}
		return nil
	}), dsl.Parallelism(2))
	// The sinks ack: addOne's input edge is anchored, so its emits join the
	// trees on both edges out of it (their anchoring plays no part).
	logOdd := b.Bolt("logOdd", dsl.AutoAck(func(Odd, dsl.Emitter) error { c.odd.Add(1); return nil }))
	logEven := b.Bolt("logEven", dsl.AutoAck(func(Even, dsl.Emitter) error { c.even.Add(1); return nil }))
	b.Anchored(numbers, addOne, dsl.Shuffle[Original]())
	b.Anchored(addOne, logOdd, dsl.Fields(func(o Odd) int { return o.X % 10 }, "X"))
	b.Unanchored(addOne, logEven, dsl.Shuffle[Even]())
	return b.Build()
}

// logger writes warnings and errors to stderr, sampled to the first three of
// each message per 10 s: failing on purpose logs an error per failed input, and
// crashing a restart per crash, far too many to print.
func logger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zap.WarnLevel)
	return zap.New(zapcore.NewSamplerWithOptions(core, 10*time.Second, 3, 1_000_000))
}

func main() {
	duration := flag.Duration("duration", 10*time.Second, "how long to run before stopping")
	failRate := flag.Float64("fail-rate", 0, "fraction of tuples addOne fails on purpose (0..1)")
	crashEvery := flag.Int64("crash-every", 0, "make the spout's Next panic every N tuples (0: never)")
	maxRestarts := flag.Int("max-restarts", 1000, "restarts before supervision gives up and the topology fails")
	progress := flag.Bool("progress", term.IsTerminal(os.Stdout), "print a progress line every second (default: when stdout is a terminal)")
	status := cli.StatusFlag()
	cli.Usage("guaranteed", "at-least-once processing through bolt failures and restarts")
	flag.Parse()
	if *failRate < 0 || *failRate > 1 || *crashEvery < 0 || *maxRestarts < 0 {
		log.Fatal("-fail-rate must be within 0..1, and -crash-every and -max-restarts must not be negative")
	}
	s, err := run(*duration, *failRate, *crashEvery, *maxRestarts, *progress, *status)
	if err != nil {
		log.Fatal(err)
	}
	if s.lost != 0 || s.strays != 0 {
		log.Fatalf("at-least-once broken: lost=%d stray callbacks=%d", s.lost, s.strays)
	}
}

func run(duration time.Duration, failRate float64, crashEvery int64, maxRestarts int, progress bool, status string) (_ summary, err error) {
	q, c := newQueue(crashEvery), &counts{}
	topo, err := topology(q, c, failRate)
	if err != nil {
		return summary{}, err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	start := time.Now()
	restarts := supervision.WithRestarts(supervision.Restarts{Base: 50 * time.Millisecond, Cap: time.Second, Max: maxRestarts, StablePeriod: 2 * time.Second})
	if maxRestarts == 0 { // Restarts reads a zero Max as the default
		restarts = supervision.WithoutRestarts()
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(logger()), restarts, supervision.WithDrainTimeout(5*time.Second))
	if err != nil {
		return summary{}, err
	}
	stopProgress := func() {}
	if progress {
		stopProgress = observe.Progress(os.Stdout, running, time.Second)
		defer stopProgress()
	}
	stopStatus, err := cli.ServeStatus(status, topo, running)
	if err != nil {
		return q.summary(), errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	// ended is why the topology ended by itself (supervision gave up), if it did.
	ended := cli.Await(ctx, running, duration, nil)
	stopProgress() // the summary is the last line
	elapsed := time.Since(start)
	if ended == nil {
		ended = cli.Stop(running, 30*time.Second)
	}
	s := q.summary()
	fmt.Printf("odd=%d even=%d\n", c.odd.Load(), c.even.Load())
	fmt.Printf("summary: emitted=%d acked=%d failed=%d replayed=%d pending=%d lost=%d restarts=%d rate=%.0f/s\n",
		s.emitted, s.acked, s.failed, s.replayed, s.pending, s.lost, running.Stats().Restarts, float64(s.acked)/elapsed.Seconds())
	return s, ended // after the summary: what the run did is worth seeing either way
}
