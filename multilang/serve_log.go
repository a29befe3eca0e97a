package multilang

import (
	"fmt"
	"strings"

	"github.com/goshelter/goshelter/multilang/internal/wire"
	"go.uber.org/zap/zapcore"
)

// hostCore is a zap core that sends each entry to the host as a "log" message
// at the matching level, so a served component's logs land in Storm's worker log.
type hostCore struct {
	zapcore.LevelEnabler
	enc zapcore.Encoder
	out *frameWriter
}

func newLogEncoder() zapcore.Encoder {
	return zapcore.NewConsoleEncoder(zapcore.EncoderConfig{
		MessageKey:     "msg",
		NameKey:        "logger",
		LineEnding:     "\n",
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	})
}

func (c *hostCore) With(fields []zapcore.Field) zapcore.Core {
	enc := c.enc.Clone()
	for _, f := range fields {
		f.AddTo(enc)
	}
	return &hostCore{LevelEnabler: c.LevelEnabler, enc: enc, out: c.out}
}

func (c *hostCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *hostCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	buf, err := c.enc.EncodeEntry(e, fields)
	if err != nil {
		return err
	}
	msg := strings.TrimRight(buf.String(), "\n")
	buf.Free()
	if err := c.out.send(&wire.Message{Kind: wire.KindLog, Msg: msg, Level: levelOf(e.Level)}); err != nil {
		return err
	}
	return c.out.flush()
}

func (c *hostCore) Sync() error { return c.out.flush() }

func levelOf(l zapcore.Level) wire.Level {
	switch {
	case l < zapcore.InfoLevel:
		return wire.LevelDebug
	case l == zapcore.InfoLevel:
		return wire.LevelInfo
	case l == zapcore.WarnLevel:
		return wire.LevelWarn
	}
	return wire.LevelError
}

// logLevel reads the level of logLevelKey: a zap level name ("debug", "info",
// "warn", "error"; "trace" is debug), info when unset.
func logLevel(v any) (zapcore.Level, error) {
	s, ok := v.(string)
	switch {
	case v == nil:
		return zapcore.InfoLevel, nil
	case !ok:
		return zapcore.InfoLevel, fmt.Errorf("%v is not a level name", v)
	case strings.EqualFold(s, "trace"):
		return zapcore.DebugLevel, nil
	}
	l, err := zapcore.ParseLevel(s)
	if err != nil {
		return zapcore.InfoLevel, err
	}
	return l, nil
}
