package pebble

import (
	"fmt"

	"go.uber.org/zap"
)

// Option configures [Open].
type Option func(*options)

type options struct {
	logger *zap.Logger
}

// WithLogger sends Pebble's own messages (background errors, notes on
// recovery) to l. Without it they are dropped: the store is embedded in an
// application whose output is not Pebble's to fill.
func WithLogger(l *zap.Logger) Option { return func(o *options) { o.logger = l } }

// logger adapts Pebble's printf-style Logger to zap. A nil zap logger drops
// messages.
type logger struct{ z *zap.Logger }

func (l logger) Infof(format string, args ...any) {
	if l.z != nil {
		l.z.Sugar().Infof(format, args...)
	}
}

func (l logger) Errorf(format string, args ...any) {
	if l.z != nil {
		l.z.Sugar().Errorf(format, args...)
	}
}

// Fatalf panics rather than exiting as Pebble's default does: the process is
// the application's, and a panic can at least be seen and recovered by it.
// Pebble calls it only on a broken invariant, after which it must not go on.
func (l logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l.z != nil {
		l.z.Error(msg)
	}
	panic("state/pebble: " + msg)
}
