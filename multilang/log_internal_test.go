package multilang

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

type line struct{ Text string }

// A shell component's child logs through its task's logger: a log command
// from the child reaches the logger the runtime gave the task, at the level
// it asked for.
func TestAChildLogsThroughItsTasksLogger(t *testing.T) {
	script := handshakeSh + `printf '{"command":"log","msg":"hello from the child","level":3}\nend\n'; cat >/dev/null`
	for _, spout := range []bool{false, true} {
		entries := make(chan zapcore.Entry, 8)
		log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(nopWriter{}), zap.DebugLevel),
			zap.Hooks(func(e zapcore.Entry) error { entries <- e; return nil }))
		b := dsl.New("logs", nil)
		b.Streams(line{})
		cmd := Command{Path: "sh", Args: []string{"-c", script}, Outputs: map[string]any{"default": line{}}}
		if spout {
			b.Spout("shell", Spout[line](cmd))
		} else {
			src := b.Spout("lines", dsl.Unreliable(func() (line, bool) { return line{}, false }))
			b.Unanchored(src, b.Bolt("shell", Bolt(cmd)), dsl.Shuffle[line]())
		}
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		info := dsl.TaskInfo{Component: "shell", Task: 1, Model: topo, Logger: log, Settings: topo.Settings,
			Fail: func(err error) { t.Errorf("spout %v: the task failed: %v", spout, err) }, Post: func(func(dsl.Collector)) {}}
		d := newDef(cmd, spout)
		var task interface{ Close() error }
		if spout {
			task = newShellSpout(d, info).(interface{ Close() error })
		} else {
			task = newShellBolt(d, info).(interface{ Close() error })
		}
		for {
			e := testsupport.Recv(t, entries, 10*time.Second, "the child's log line")
			if strings.Contains(e.Message, "hello from the child") {
				if e.Level != zapcore.WarnLevel {
					t.Errorf("spout %v: logged at %v, want warn", spout, e.Level)
				}
				break
			}
		}
		if err := task.Close(); err != nil {
			t.Errorf("spout %v: Close: %v", spout, err)
		}
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
