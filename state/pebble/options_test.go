package pebble

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestLoggerLevels checks the adapter Pebble logs through: levels map to
// zap's, no logger drops messages, and Fatalf panics with or without one
// instead of exiting the application's process.
func TestLoggerLevels(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	l := logger{zap.New(core)}
	l.Infof("info %d", 1)
	l.Errorf("error %d", 2)
	mustPanic(t, "state/pebble: fatal 3", func() { l.Fatalf("fatal %d", 3) })
	var got []string
	for _, e := range logs.All() {
		got = append(got, e.Level.String()+" "+e.Message)
	}
	want := []string{
		zapcore.InfoLevel.String() + " info 1",
		zapcore.ErrorLevel.String() + " error 2",
		zapcore.ErrorLevel.String() + " fatal 3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	quiet := logger{}
	quiet.Infof("dropped")
	quiet.Errorf("dropped")
	mustPanic(t, "state/pebble: fatal 4", func() { quiet.Fatalf("fatal %d", 4) })
}

func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if got := recover(); got != want {
			t.Errorf("panic %v, want %q", got, want)
		}
	}()
	fn()
}
