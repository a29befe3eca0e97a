// Command jetstream runs a topology from a NATS JetStream stream to another:
// an embedded nats-server (JetStream on file storage in a temporary
// directory) by default, or the server -url names.
//
//	go run ./samples/jetstream -duration 5s -records 20000 -fail-rate 0.1
//	go run ./samples/jetstream -url nats://localhost:4222 -in IN -out OUT
//	go run ./samples/jetstream -crash-every 5000   # work fails its task: supervision restarts the topology
//
// It creates the streams -in (subjects "<in>.>") and -out ("<out>.>") if they
// do not exist, publishes -records records to the input, and runs
//
//	spout (durable consumer "sample") -> work (fails -fail-rate of its inputs) -> sink
//
// The sink publishes each record with the message id "<in>-<stream seq>", so a
// replayed record is stored once. It stops when every record is stored and
// committed or after -duration, whichever comes first, and prints one last line
//
//	summary: produced=N processed=N committed=N stored=N duplicates=N pending=N lost=0 restarts=N rate=R/s
//
// where processed counts work's successful executions (replays included),
// committed is the consumer's ack floor, stored the records in the output
// stream from this run, pending the records not yet committed (left for the
// next run, not lost), and lost the records neither stored nor pending.
// -crash-every N makes work fail its task at every N-th input: supervision
// restarts the topology (at most -max-restarts times in a row) and the
// durable consumer redelivers what was not acked, so nothing is lost. The
// summary comes however the run ends, a failed topology included (past
// -max-restarts: it then exits 1 after the summary, as it does when lost is
// not 0). -status
// 127.0.0.1:8080 serves the status page while it runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/samples/internal/cli"
	"github.com/goshelter/goshelter/supervision"
)

// Out is what work emits to the sink.
type Out struct {
	Seq  uint64
	Data []byte
}

var errUnlucky = errors.New("work: failed on purpose (-fail-rate)")

func main() {
	url := flag.String("url", "", "NATS server URL (default: start an embedded server)")
	in := flag.String("in", "SAMPLE_IN", "input stream")
	out := flag.String("out", "SAMPLE_OUT", "output stream")
	records := flag.Int("records", 20000, "records to publish")
	failRate := flag.Float64("fail-rate", 0.1, "fraction of work's inputs it fails")
	duration := flag.Duration("duration", 10*time.Second, "longest run")
	crashEvery := flag.Int64("crash-every", 0, "make work fail its task at every N-th input (0: never)")
	maxRestarts := flag.Int("max-restarts", 5, "restarts in a row before supervision gives up and the topology fails")
	status := cli.StatusFlag()
	cli.Usage("jetstream", "a topology from one NATS JetStream stream to another")
	flag.Parse()
	if *crashEvery < 0 || *maxRestarts < 0 {
		log.Fatal("-crash-every and -max-restarts must not be negative")
	}
	o := options{records: *records, failRate: *failRate, duration: *duration, crashEvery: *crashEvery, maxRestarts: *maxRestarts, status: *status}
	if err := run(*url, *in, *out, o); err != nil {
		log.Fatal(err)
	}
}

// options are what the flags choose beyond the server and the streams.
type options struct {
	records     int
	failRate    float64
	duration    time.Duration
	crashEvery  int64
	maxRestarts int
	status      string
}

func run(url, in, out string, o options) (err error) {
	records, duration, status := o.records, o.duration, o.status
	if url == "" {
		srv, err := embedded()
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		url = srv.ClientURL()
	}
	nc, err := nats.Connect(url)
	if err != nil {
		return fmt.Errorf("connecting to %q: %w", url, err)
	}
	defer nc.Close()
	j, err := js.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), duration+30*time.Second)
	defer cancel()
	base, err := streams(ctx, j, in, out)
	if err != nil {
		return err
	}
	first, err := produce(ctx, j, in, records)
	if err != nil {
		return err
	}

	var processed atomic.Int64
	topo, err := topology(url, in, out, o.failRate, o.crashEvery, &processed)
	if err != nil {
		return err
	}
	began := time.Now()
	restarts := supervision.WithRestarts(supervision.Restarts{Base: 50 * time.Millisecond, Cap: time.Second, Max: o.maxRestarts})
	if o.maxRestarts == 0 { // Restarts reads a zero Max as the default
		restarts = supervision.WithoutRestarts()
	}
	running, err := supervision.Run(ctx, topo, supervision.WithLogger(zap.NewNop()), restarts)
	if err != nil {
		return err
	}
	stopStatus, err := cli.ServeStatus(status, topo, running)
	if err != nil {
		return errors.Join(err, running.Stop(context.Background()))
	}
	defer func() { err = errors.Join(err, stopStatus()) }()
	deadline := time.After(duration)
	var ended error // why the topology ended by itself (supervision gave up), if it did
	stopped := false
	for !stopped && !finished(ctx, j, in, out, first, base, records) {
		select {
		case <-deadline:
			stopped = true
		case <-running.Done():
			ended, stopped = running.Wait(), true
		case <-time.After(50 * time.Millisecond):
		}
	}
	if ended == nil {
		if err := running.Stop(ctx); err != nil {
			ended = fmt.Errorf("stopping: %w", err)
		}
	}
	elapsed := time.Since(began)
	// After the summary: what the run did is worth seeing either way.
	return errors.Join(summary(ctx, j, in, out, first, records, base, processed.Load(), running.Stats().Restarts, elapsed), ended)
}

// embedded starts a nats-server with JetStream in a temporary directory.
func embedded() (*server.Server, error) {
	dir, err := os.MkdirTemp("", "goshelter-jetstream-sample")
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		return nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		return nil, errors.New("embedded nats-server not ready")
	}
	return srv, nil
}

// streams creates the streams if needed and returns how many records the
// output held before this run.
func streams(ctx context.Context, j js.JetStream, in, out string) (uint64, error) {
	for _, name := range []string{in, out} {
		cfg := js.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: js.FileStorage, Duplicates: 10 * time.Minute}
		if _, err := j.CreateOrUpdateStream(ctx, cfg); err != nil {
			return 0, fmt.Errorf("creating stream %q: %w", name, err)
		}
	}
	return stored(ctx, j, out), nil
}

// produce publishes n records and returns the stream sequence of the first.
func produce(ctx context.Context, j js.JetStream, in string, n int) (uint64, error) {
	futures := make([]js.PubAckFuture, 0, n)
	for i := range n {
		f, err := j.PublishAsync(in+".records", fmt.Appendf(nil, "record %d", i))
		if err != nil {
			return 0, fmt.Errorf("producing: %w", err)
		}
		futures = append(futures, f)
	}
	first := uint64(0)
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if i == 0 {
				first = ack.Sequence
			}
		case err := <-f.Err():
			return 0, fmt.Errorf("producing: %w", err)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return first, nil
}

func topology(url, in, out string, failRate float64, crashEvery int64, processed *atomic.Int64) (*dsl.Topology, error) {
	var executed atomic.Int64
	b := dsl.New("jetstream-sample", dsl.Conf{dsl.MaxSpoutPending: 256})
	b.Streams(jetstream.Message{}, Out{})
	// The ack wait bounds how soon the messages a failed incarnation held
	// come back (-crash-every): 2 s rather than the default 30 s.
	spout := b.Spout("in", jetstream.Spout[jetstream.Message](url, in, "sample", nil,
		jetstream.WithNackBackoff(time.Millisecond, 100*time.Millisecond), jetstream.WithAckWait(2*time.Second)))
	work := b.Bolt("work", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[jetstream.Message] {
		return handler(func(m jetstream.Message, e dsl.Emitter) error {
			if n := executed.Add(1); crashEvery > 0 && n%crashEvery == 0 {
				// A failed input is only redelivered; a failed task fails the topology.
				err := fmt.Errorf("work: crashing at input %d (-crash-every)", n)
				info.Fail(err)
				return err
			}
			// A fixed pseudo-random choice per delivery: replays are tried anew.
			if float64((m.StreamSeq*2654435761+m.Delivered*40503)%1000) < failRate*1000 {
				return errUnlucky
			}
			processed.Add(1)
			e.Emit(Out{Seq: m.StreamSeq, Data: m.Data})
			return nil
		})
	}), dsl.Parallelism(2))
	sink := b.Bolt("out", jetstream.Sink(url, func(o Out) (jetstream.Record, error) {
		return jetstream.Record{Subject: out + ".records", Data: o.Data, MsgID: fmt.Sprintf("%s-%d", in, o.Seq)}, nil
	}))
	b.Anchored(spout, work, dsl.Shuffle[jetstream.Message]())
	b.Anchored(work, sink, dsl.Shuffle[Out]())
	return b.Build()
}

// handler adapts a function to dsl.Handler.
type handler func(jetstream.Message, dsl.Emitter) error

func (h handler) Execute(m jetstream.Message, out dsl.Emitter) error { return h(m, out) }

func stored(ctx context.Context, j js.JetStream, name string) uint64 {
	s, err := j.Stream(ctx, name)
	if err != nil {
		return 0
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.Msgs
}

// committedOf returns how many records from the stream sequence first the
// consumer has acked without a gap: its ack floor.
func committedOf(ctx context.Context, j js.JetStream, in string, first uint64) (int64, error) {
	c, err := j.Consumer(ctx, in, "sample")
	if err != nil {
		return 0, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, err
	}
	if floor := info.AckFloor.Stream; floor >= first {
		return int64(floor - first + 1), nil
	}
	return 0, nil
}

// finished reports whether every record is stored and committed. Stored alone
// is not enough: a record stored by an incarnation that crashed before its
// ack is committed only once it is redelivered and acked again.
func finished(ctx context.Context, j js.JetStream, in, out string, first, base uint64, records int) bool {
	if stored(ctx, j, out)-base < uint64(records) {
		return false
	}
	committed, err := committedOf(ctx, j, in, first)
	return err == nil && committed >= int64(records)
}

func summary(ctx context.Context, j js.JetStream, in, out string, first uint64, records int, base uint64, processed int64, restarts int, elapsed time.Duration) error {
	committed, err := committedOf(ctx, j, in, first)
	if err != nil {
		return err
	}
	storedNow := int64(stored(ctx, j, out) - base)
	pending := int64(records) - committed
	lost := int64(records) - storedNow - pending
	if lost < 0 {
		lost = 0 // acked past, stored: more was stored than committed
	}
	fmt.Printf("summary: produced=%d processed=%d committed=%d stored=%d duplicates=%d pending=%d lost=%d restarts=%d rate=%.0f/s\n",
		records, processed, committed, storedNow, processed-storedNow, pending, lost, restarts, float64(storedNow)/elapsed.Seconds())
	if lost != 0 {
		return fmt.Errorf("%d records lost", lost)
	}
	return nil
}
