package kafka

import (
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Guarantee is a spout's processing guarantee, as Storm's
// KafkaSpoutConfig.ProcessingGuarantee.
type Guarantee int

const (
	// AtLeastOnce tracks every record: a partition's offset is committed, every
	// commit period, only up to its first record not yet acked (or given up
	// after its retries), and failed records are retried. The default.
	AtLeastOnce Guarantee = iota
	// AtMostOnce commits the offsets of each poll before emitting its records,
	// untracked: a crash loses what was polled and not yet processed, and a
	// failed record is never retried.
	AtMostOnce
	// NoGuarantee emits records untracked and commits the polled offsets every
	// commit period, whatever became of the records.
	NoGuarantee
)

func (g Guarantee) String() string {
	switch g {
	case AtLeastOnce:
		return "AT_LEAST_ONCE"
	case AtMostOnce:
		return "AT_MOST_ONCE"
	case NoGuarantee:
		return "NO_GUARANTEE"
	}
	return fmt.Sprintf("Guarantee(%d)", int(g))
}

// FirstPoll is where a spout starts reading a partition, as Storm's
// FirstPollOffsetStrategy.
type FirstPoll int

const (
	// UncommittedEarliest resumes from the group's committed offset, or from
	// the start of the partition when the group has none. The default.
	UncommittedEarliest FirstPoll = iota
	// UncommittedLatest resumes from the committed offset, or from the end of
	// the partition (records produced from then on) when there is none.
	UncommittedLatest
	// Earliest starts from the start of the partition, ignoring the committed
	// offset, the first time this spout definition is assigned the partition
	// (Storm: on deployment); later assignments (a rebalance, a restart of the
	// topology by supervision) resume from the committed offset.
	Earliest
	// Latest is Earliest from the end of the partition.
	Latest
)

func (f FirstPoll) String() string {
	switch f {
	case UncommittedEarliest:
		return "UNCOMMITTED_EARLIEST"
	case UncommittedLatest:
		return "UNCOMMITTED_LATEST"
	case Earliest:
		return "EARLIEST"
	case Latest:
		return "LATEST"
	}
	return fmt.Sprintf("FirstPoll(%d)", int(f))
}

// Option configures a spout or a sink. Options that concern only one of them
// say so and are ignored by the other.
type Option func(*config)

type config struct {
	guarantee      Guarantee
	firstPoll      FirstPoll
	maxUncommitted int
	commitPeriod   time.Duration
	maxPoll        int
	retry          backoff
	giveUp         func(Record)
	client         []kgo.Opt
	closeTimeout   time.Duration
	discovery      time.Duration
	share          share
	sink           sinkConfig // the sink's own options
}

// share is this process's part of the tasks reading a spout's topics.
type share struct{ index, count int }

// Storm's KafkaSpoutConfig defaults.
func defaults() config {
	return config{
		guarantee:      AtLeastOnce,
		firstPoll:      UncommittedEarliest,
		maxUncommitted: 10_000_000,
		commitPeriod:   30 * time.Second,
		maxPoll:        500,
		retry:          backoff{initial: 0, period: 2 * time.Millisecond, max: 10 * time.Second, retries: math.MaxInt},
		closeTimeout:   5 * time.Second,
		discovery:      10 * time.Second,
		share:          share{index: 0, count: 1},
	}
}

// WithGuarantee sets the spout's processing guarantee (default [AtLeastOnce]).
func WithGuarantee(g Guarantee) Option { return func(c *config) { c.guarantee = g } }

// WithFirstPoll sets where the spout starts reading a partition (default
// [UncommittedEarliest]).
func WithFirstPoll(f FirstPoll) Option { return func(c *config) { c.firstPoll = f } }

// WithMaxUncommitted bounds the records a spout task holds per partition
// between the last committed offset and the last polled one (Storm's
// maxUncommittedOffsets, default 10,000,000): at the bound the partition is
// paused, and it resumes once a commit brings it below. Retries of failed
// records are not held back by it. The positioned mode (a topology with
// state) ignores it: the topology's max spout pending bounds its open records.
func WithMaxUncommitted(n int) Option { return func(c *config) { c.maxUncommitted = n } }

// WithCommitPeriod sets how often the spout commits offsets (Storm's
// offsetCommitPeriodMs, default 30 s). Under [AtMostOnce] offsets are
// committed at each poll instead.
func WithCommitPeriod(d time.Duration) Option { return func(c *config) { c.commitPeriod = d } }

// WithMaxPollRecords bounds the records a spout task takes from the client at
// once (Kafka's max.poll.records, default 500).
func WithMaxPollRecords(n int) Option { return func(c *config) { c.maxPoll = n } }

// WithRetry sets how the spout retries a failed record under [AtLeastOnce], as
// Storm's KafkaSpoutRetryExponentialBackoff: the first retry waits initial,
// the n-th (n >= 2) period * 2^(n-1), never more than maxDelay; after
// maxRetries retries the record is given up: committed past, logged at error
// level, counted in the task's metric "kafka-gave-up" and passed to the
// [WithGiveUp] function. Defaults: 0, 2 ms, 10 s and no limit (Storm's). In
// a topology with state each failure rolls the topology back, and the retry
// comes after the rewind, once its back-off is over; a record given up is
// skipped (see "Exactly once" in the package doc).
func WithRetry(initial, period, maxDelay time.Duration, maxRetries int) Option {
	return func(c *config) {
		c.retry = backoff{initial: initial, period: period, max: maxDelay, retries: maxRetries}
	}
}

// WithGiveUp sets a function called with each record the spout gives up after
// its retries (see [WithRetry]). It runs on the spout task's goroutine and
// must not block.
func WithGiveUp(fn func(Record)) Option { return func(c *config) { c.giveUp = fn } }

// WithClientOptions adds franz-go client options (TLS, SASL, client id,
// timeouts, ...). The connector sets the seeds, the group, the topics, the
// offset reset, the rebalance callbacks and, for a sink, acks=all with the
// idempotent producer; options that change these break its guarantee.
func WithClientOptions(opts ...kgo.Opt) Option {
	return func(c *config) { c.client = append(c.client, opts...) }
}

// WithPartitionDiscovery sets how often a checkpointed spout task (see
// "Exactly once" in the package doc) lists the partitions of its topics to
// find those created since (default 10 s); it reads the new ones of its share
// from their earliest offset. A consumer-group spout finds them through the
// group and ignores it.
func WithPartitionDiscovery(d time.Duration) Option { return func(c *config) { c.discovery = d } }

// WithProcessShare makes this process's checkpointed spout one of count
// processes reading the same topics exactly-once, the index-th (0-based):
// with parallelism P, its task i is task index*P+i of count*P, and reads the
// partitions that fall to that task (see "Several processes" in the package
// doc). Every process must run the same spout definition with the same
// parallelism, its own index, the same count and a store of its own; the
// default, 0 of 1, reads every partition. A consumer-group spout ignores it.
func WithProcessShare(index, count int) Option {
	return func(c *config) { c.share = share{index: index, count: count} }
}

func (c *config) validate(what string) error {
	switch {
	case c.guarantee < AtLeastOnce || c.guarantee > NoGuarantee:
		return fmt.Errorf("kafka: %s: unknown guarantee %v", what, c.guarantee)
	case c.firstPoll < UncommittedEarliest || c.firstPoll > Latest:
		return fmt.Errorf("kafka: %s: unknown first-poll strategy %v", what, c.firstPoll)
	case c.maxUncommitted < 1:
		return fmt.Errorf("kafka: %s: max uncommitted offsets %d is not positive", what, c.maxUncommitted)
	case c.commitPeriod <= 0:
		return fmt.Errorf("kafka: %s: commit period %v is not positive", what, c.commitPeriod)
	case c.maxPoll < 1:
		return fmt.Errorf("kafka: %s: max poll records %d is not positive", what, c.maxPoll)
	case c.retry.initial < 0 || c.retry.period < 0 || c.retry.max < 0 || c.retry.retries < 0:
		return fmt.Errorf("kafka: %s: retry settings %+v have a negative value", what, c.retry)
	case c.discovery <= 0:
		return fmt.Errorf("kafka: %s: partition discovery period %v is not positive", what, c.discovery)
	case c.share.count < 1 || c.share.index < 0 || c.share.index >= c.share.count:
		return fmt.Errorf("kafka: %s: process share %d of %d is not one of 0..count-1 with count >= 1", what, c.share.index, c.share.count)
	}
	return nil
}

// backoff is Storm's KafkaSpoutRetryExponentialBackoff.
type backoff struct {
	initial, period, max time.Duration
	retries              int
}

// delay is the wait before the retry that follows a record's fails-th fail.
func (b backoff) delay(fails int) time.Duration {
	if fails <= 1 {
		return min(b.initial, b.max)
	}
	d := b.period
	for i := 1; i < fails; i++ {
		if d >= b.max {
			return b.max
		}
		d *= 2
	}
	return min(d, b.max)
}
