package jetstream

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Option configures a [Spout] or a [Sink]. An option that does not apply to
// the component it is given to is ignored (the spout has no publish timeout).
type Option func(*config)

// config is the resolved options of one spout or sink, shared by its tasks.
type config struct {
	natsOpts   []nats.Option
	filters    []string
	ackWait    time.Duration
	nackBase   time.Duration
	nackMax    time.Duration
	maxDeliver int           // a message is handed out at most this often; -1: no bound
	giveUp     func(Message) // called with each message given up after maxDeliver failures
	buffer     int
	pubTimeout time.Duration
	keptMax    int           // checkpointed sink: bytes of records it keeps
	dupWindow  time.Duration // checkpointed sink: the least Duplicates window of a stream it writes to
	err        error         // the first bad option: the tasks fail with it at start
}

func newConfig(opts []Option) config {
	c := config{
		ackWait:    30 * time.Second, // JetStream's own default
		nackBase:   500 * time.Millisecond,
		nackMax:    30 * time.Second,
		maxDeliver: -1, // JetStream's default, and no message dropped unless asked
		buffer:     512,
		pubTimeout: 5 * time.Second,
		keptMax:    8 << 20,
		dupWindow:  time.Minute,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func (c *config) bad(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("jetstream: "+format, args...)
	}
}

// WithNATSOptions adds options to the connection each task opens (name,
// credentials, TLS, reconnect policy, ...). Tasks always retry a failed first
// connect and reconnect forever unless these options say otherwise.
func WithNATSOptions(opts ...nats.Option) Option {
	return func(c *config) { c.natsOpts = append(c.natsOpts, opts...) }
}

// WithFilterSubjects makes the spout's consumer deliver only messages on
// these subjects (wildcards allowed); by default it takes the whole stream.
func WithFilterSubjects(subjects ...string) Option {
	return func(c *config) { c.filters = append(c.filters, subjects...) }
}

// WithAckWait sets the spout consumer's AckWait (default 30 s): how long the
// server waits for an ack before redelivering. Open trees are kept alive with
// in-progress signals every third of it, so it may be shorter than the
// topology's message timeout; it bounds how soon messages held by a crashed
// process are redelivered.
func WithAckWait(d time.Duration) Option {
	return func(c *config) {
		if d < 30*time.Millisecond {
			c.bad("WithAckWait(%v): want at least 30ms (in-progress signals go every third of it)", d)
			return
		}
		c.ackWait = d
	}
}

// WithNackBackoff sets the redelivery delay of a nacked message: base for its
// first delivery, doubled for each delivery after, at most max (defaults
// 500 ms and 30 s).
func WithNackBackoff(base, max time.Duration) Option {
	return func(c *config) {
		if base <= 0 || max < base {
			c.bad("WithNackBackoff(%v, %v): want 0 < base <= max", base, max)
			return
		}
		c.nackBase, c.nackMax = base, max
	}
}

// WithMaxDeliver bounds how often a message whose tree fails is delivered
// to the topology: after its n-th failure it is given up, logged at error
// level with its stream and sequence, counted in the task's metric
// "jetstream.gave-up" and passed to the [WithGiveUp] function. -1, the
// default (JetStream's own), sets no bound: no message is dropped unless
// the user asks for it.
//
// In a topology with state each failure rolls the topology back, so without
// a bound a message that always fails stops the topology at the
// supervisor's restart limit; with one, the spout counts the failures across
// the rollbacks, hands the message out again only after the back-off of
// [WithNackBackoff], and after n failures skips it (the position moves past
// it) while the rest flows. Without state the spout terminates the message
// on the server when a tree fails on its n-th delivery (the server's count,
// redeliveries after an AckWait included), instead of nacking it.
func WithMaxDeliver(n int) Option {
	return func(c *config) {
		if n < 1 && n != -1 {
			c.bad("WithMaxDeliver(%d): want at least 1, or -1 for no bound", n)
			return
		}
		c.maxDeliver = n
	}
}

// WithGiveUp sets a function called with each message the spout gives up
// after [WithMaxDeliver] failures (once per message in a topology with
// state, whatever the rollbacks). It runs on the spout task's goroutine and
// must not block.
func WithGiveUp(fn func(Message)) Option { return func(c *config) { c.giveUp = fn } }

// WithBuffer sets how many fetched messages each spout task holds ready for
// Next (default 512); it is also the largest fetch. A buffer that
// holds more than the topology takes in one spout wait
// (topology.sleep.spout.wait.strategy.time.ms, 100 ms by default) keeps Next
// from running dry while the stream has messages.
func WithBuffer(n int) Option {
	return func(c *config) {
		if n < 1 || n > 1<<16 {
			c.bad("WithBuffer(%d): want 1..65536", n)
			return
		}
		c.buffer = n
	}
}

// WithPublishTimeout sets how long the sink waits for a publish
// acknowledgement before it fails the input (default 5 s).
func WithPublishTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.bad("WithPublishTimeout(%v): want a positive duration", d)
			return
		}
		c.pubTimeout = d
	}
}

// WithKeptBytes caps what a checkpointed sink task keeps (default 8 MiB): the
// records of its inputs since the last checkpoint plus those of committed
// checkpoints the stream has not acknowledged yet, counted as their encoded
// size. They are written to the store with each checkpoint. Over the cap the
// task fails with an error naming it (a rollback; it does not stall, since a
// checkpoint cannot wait for a sink that holds back its acks): shorten the
// checkpoint interval or raise the cap. Without state the sink keeps nothing.
func WithKeptBytes(n int) Option {
	return func(c *config) {
		if n < 1<<10 {
			c.bad("WithKeptBytes(%d): want at least 1024", n)
			return
		}
		c.keptMax = n
	}
}

// WithDuplicateWindow sets the least Duplicates window (how long the stream
// remembers message ids) that a checkpointed sink needs of each stream it
// writes to (default 1 minute; JetStream's own default window is 2 minutes).
// After a crash the sink publishes the last committed checkpoint's records
// again with the same ids: the window must outlast the longest recovery (the
// restart, the store's opening and the publish). A stream with a shorter
// window fails the task with an error naming the stream.
func WithDuplicateWindow(d time.Duration) Option {
	return func(c *config) {
		if d < 100*time.Millisecond {
			c.bad("WithDuplicateWindow(%v): want at least 100ms (JetStream's least window)", d)
			return
		}
		c.dupWindow = d
	}
}

// connect opens a task's connection. It returns at once even when the server
// is away (RetryOnFailedConnect): the client keeps trying in the background.
func (c *config) connect(url, name string) (*nats.Conn, error) {
	opts := append([]nats.Option{
		nats.Name(name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
	}, c.natsOpts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("jetstream: connecting to %q: %w", url, err)
	}
	return nc, nil
}
