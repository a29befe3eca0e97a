package supervision

import (
	"time"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/clock"
	"github.com/goshelter/goshelter/routing"
	"go.uber.org/zap"
)

// Option configures Run.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	logger       *zap.Logger
	clock        clock.Clock
	base, cap    time.Duration
	maxRestarts  int
	stable       time.Duration
	restarts     bool
	events       func(Event)
	trace        func(actors.Event)
	ids          func(task int) routing.IDs
	drainTimeout time.Duration
}

func defaults() options {
	return options{
		logger:      zap.NewNop(),
		clock:       clock.Real(),
		base:        time.Second,
		cap:         30 * time.Second,
		maxRestarts: 5,
		stable:      time.Minute,
		restarts:    true,
	}
}

// WithLogger logs lifecycle events and task logs to l (default: no logs).
// protoactor-go's own logs go to it too.
func WithLogger(l *zap.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithClock sets the clock for back-off, stable periods, timeouts and ticks.
func WithClock(c clock.Clock) Option { return optionFunc(func(o *options) { o.clock = c }) }

// WithBackoff sets the restart back-off: min(base·2^n, cap) after the n-th failure.
func WithBackoff(base, cap time.Duration) Option {
	return optionFunc(func(o *options) { o.base, o.cap = base, cap })
}

// WithMaxRestarts sets how many consecutive restarts are tried before giving up.
func WithMaxRestarts(n int) Option { return optionFunc(func(o *options) { o.maxRestarts = n }) }

// WithStablePeriod sets how long an incarnation must run without failing before
// the restart count goes back to zero (default 1 minute).
func WithStablePeriod(d time.Duration) Option { return optionFunc(func(o *options) { o.stable = d }) }

// WithoutRestarts makes the first task failure stop the topology and end Wait
// with that error.
func WithoutRestarts() Option { return optionFunc(func(o *options) { o.restarts = false }) }

// WithEvents calls fn for every lifecycle event, on the supervisor's goroutine;
// fn must not block.
func WithEvents(fn func(Event)) Option { return optionFunc(func(o *options) { o.events = fn }) }

// WithTrace calls fn for every message of every task (slow: for tests and debugging).
func WithTrace(fn func(actors.Event)) Option { return optionFunc(func(o *options) { o.trace = fn }) }

// WithIDs sets each task's tuple id source (for reproducible runs).
func WithIDs(fn func(task int) routing.IDs) Option {
	return optionFunc(func(o *options) { o.ids = fn })
}

// WithDrainTimeout bounds the drain on Stop (default: the message timeout).
func WithDrainTimeout(d time.Duration) Option {
	return optionFunc(func(o *options) { o.drainTimeout = d })
}
