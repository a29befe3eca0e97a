package supervision

import (
	"fmt"
	"github.com/goshelter/goshelter/state"
	"os"
	"time"

	"github.com/goshelter/goshelter/internal/clock"
	"github.com/goshelter/goshelter/internal/hops"
	"go.uber.org/zap"
)

// Option configures Run.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	logger       *zap.Logger
	clock        clock.Clock
	restarts     Restarts
	restartsOff  bool
	events       func(Event)
	trace        func(TraceEvent)
	ids          func(task int) func() uint64
	drainTimeout time.Duration
	store        state.Store
	hops         *hops.Probe // the bench's probe, from Run's ctx (hops.NewContext)
}

// The restart defaults: FsShelter's, with Storm-like limits.
const (
	defaultBase   = time.Second
	defaultCap    = 30 * time.Second
	defaultMax    = 5
	defaultStable = time.Minute
)

func defaults() options {
	return options{
		clock:    clock.Real(),
		restarts: Restarts{Base: defaultBase, Cap: defaultCap, Max: defaultMax, StablePeriod: defaultStable},
	}
}

// defaultLogger logs warnings and errors to stderr as JSON (zap's production
// configuration), so panics, failed inputs and refused trees are visible
// without any setup.
func defaultLogger() *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.WarnLevel)
	l, err := cfg.Build()
	if err != nil { // stderr cannot be opened: nothing else could log either
		fmt.Fprintln(os.Stderr, "supervision: cannot build the default logger:", err)
		return zap.NewNop()
	}
	return l
}

// WithLogger logs lifecycle events, task failures and the runtime's own
// warnings to l. Without it, warnings and errors go to stderr (zap's production
// configuration at warn); WithLogger(zap.NewNop()) silences everything.
func WithLogger(l *zap.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// Clock is the time a running topology reads: tuple timeouts (the ackers'
// rotation), spout waits, tick tuples, processing-time windows, restart
// back-offs and stable periods, and dsl.TaskInfo.Now. Latencies and the batch
// flush interval stay wall-clock time. The host calls it from its own
// goroutines and the tasks'; an implementation must be safe for concurrent
// use. sheltertest.Clock provides one that moves only when a test says so.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once, on a goroutine of the clock's, after d. The
	// host's callbacks only post messages: they never block.
	AfterFunc(d time.Duration, f func()) Timer
	// Every calls f every d until stopped, on a goroutine of the clock's.
	// beats is how many periods the call stands for: 1, unless the clock
	// passed several at once (a test clock moved by an hour); the host counts
	// them, as the ackers count missed rotations.
	Every(d time.Duration, f func(beats int)) Timer
}

// Timer is a scheduled callback. After Stop returns, its callback is not
// running and will not run again.
type Timer = interface{ Stop() }

// WithClock makes the topology read c instead of the wall clock (see
// [Clock]), as zap's WithClock does for a logger. A nil c keeps the wall clock.
func WithClock(c Clock) Option {
	return optionFunc(func(o *options) {
		if c != nil {
			o.clock = c
		}
	})
}

// Restarts is the restart policy: after the n-th consecutive failure the host
// waits min(Base·2^n, Cap) before starting a fresh incarnation, at most Max
// times in a row; the count goes back to zero once an incarnation has run for
// StablePeriod without failing. Zero fields take the defaults: Base 1 s (so the
// first wait is 2 s), Cap 30 s, Max 5, StablePeriod 1 minute.
type Restarts struct {
	Base, Cap    time.Duration
	Max          int
	StablePeriod time.Duration
}

// WithRestarts sets the restart policy; see [Restarts] for the defaults.
func WithRestarts(p Restarts) Option {
	return optionFunc(func(o *options) {
		if p.Base > 0 {
			o.restarts.Base = p.Base
		}
		if p.Cap > 0 {
			o.restarts.Cap = p.Cap
		}
		if p.Max > 0 {
			o.restarts.Max = p.Max
		}
		if p.StablePeriod > 0 {
			o.restarts.StablePeriod = p.StablePeriod
		}
		o.restartsOff = false
	})
}

// WithoutRestarts makes the first task failure stop the topology and end Wait
// with that error, for an outer supervisor such as systemd or Kubernetes.
func WithoutRestarts() Option { return optionFunc(func(o *options) { o.restartsOff = true }) }

// WithEvents calls fn for every lifecycle event, in order, on a goroutine of
// its own, so the host never waits for it. fn should return quickly. It may
// call Stop (which then starts the stop and returns [ErrStopping]) and Stats,
// but not Wait: Wait returns once every event was delivered. A panic in fn is
// logged and otherwise ignored.
func WithEvents(fn func(Event)) Option { return optionFunc(func(o *options) { o.events = fn }) }

// WithTrace calls fn for every message of every task, from the tasks'
// goroutines (concurrently): slow, for tests and debugging.
func WithTrace(fn func(TraceEvent)) Option { return optionFunc(func(o *options) { o.trace = fn }) }

// WithIDs sets each task's tuple id generator, for reproducible runs: fn is
// called once per task and incarnation, and its generator only from that task.
// Zeros it returns are skipped. The tables of open trees place an id by its
// low bits: ids that share them (a stride of 256, say) crowd into a few
// slots, which is correct but slow once many trees are open; counting by one
// from any start, per task, is as fast as the runtime's own ids.
func WithIDs(fn func(task int) func() uint64) Option {
	return optionFunc(func(o *options) { o.ids = fn })
}

// WithDrainTimeout bounds the drain on Stop (default: the message timeout).
func WithDrainTimeout(d time.Duration) Option {
	return optionFunc(func(o *options) { o.drainTimeout = d })
}

// WithStore gives a topology with stateful bolts (dsl.Stateful) the store it
// checkpoints to: every incarnation restores the last committed checkpoint
// from it and rewinds the sources to the positions stored with it. Such a
// topology does not start without one. Use pebble.Open (package
// state/pebble) for a directory that survives the process, state.NewMemory
// in tests. Run does not close the store: its owner does, after Stop.
func WithStore(s state.Store) Option { return optionFunc(func(o *options) { o.store = s }) }
