package multilang

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
)

type word struct{ Text string }

// recording is the Collector of a test that plays the task's goroutine.
type recording struct {
	emits []any
	acks  []dsl.Tuple
	fails []dsl.Tuple
}

func (r *recording) Emit(tuple any)                        { r.emits = append(r.emits, tuple) }
func (r *recording) EmitDirect(_ int, tuple any)           { r.emits = append(r.emits, tuple) }
func (r *recording) EmitAnchored(_ []dsl.Tuple, tuple any) { r.emits = append(r.emits, tuple) }
func (r *recording) EmitDirectAnchored(_ int, _ []dsl.Tuple, tuple any) {
	r.emits = append(r.emits, tuple)
}

// EmitTasks is the runtime's emit that names the tasks it sent to (component.TaskEmitter): none here.
func (r *recording) EmitTasks(_ []dsl.Tuple, _ int, tuple any, tasks []int) []int {
	r.emits = append(r.emits, tuple)
	return tasks
}
func (r *recording) Ack(in dsl.Tuple)  { r.acks = append(r.acks, in) }
func (r *recording) Fail(in dsl.Tuple) { r.fails = append(r.fails, in) }

// A shell bolt hands its child's emit and ack of an input to its task as soon
// as the child has said nothing more: it does not wait for a full batch.
func TestShellBoltAppliesWhatItsChildSaidOnceItPauses(t *testing.T) {
	script := handshakeSh + `read line; read e
id=$(printf '%s' "$line" | sed 's/.*"id":"\([^"]*\)".*/\1/')
printf '{"command":"emit","anchors":["%s"],"tuple":["hello"],"need_task_ids":false}\nend\n{"command":"ack","id":"%s"}\nend\n' "$id" "$id"
printf '{"command":"emit","tuple":["who"]}\nend\n'
read ids; read e
printf '{"command":"emit","tuple":["tasks %s"],"need_task_ids":false}\nend\n' "$ids"
cat >/dev/null`
	cmd := Command{Path: "sh", Args: []string{"-c", script}, Outputs: map[string]any{"default": word{}}}
	b := dsl.New("words", nil)
	b.Streams(word{})
	src := b.Spout("lines", dsl.Unreliable(func() (line, bool) { return line{}, false }))
	b.Anchored(src, b.Bolt("shell", Bolt(cmd)), dsl.Shuffle[line]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	posts := make(chan func(dsl.Collector), 8)
	info := dsl.TaskInfo{Component: "shell", Task: topo.Component("shell").Tasks[0], Model: topo, Logger: zap.NewNop(), Settings: topo.Settings,
		Fail: func(err error) { t.Errorf("the task failed: %v", err) }, Post: func(f func(dsl.Collector)) { posts <- f }}
	task := newShellBolt(newDef(cmd, false), info)
	defer task.(interface{ Close() error }).Close()
	c := &recording{}
	in := dsl.Tuple{Value: line{Text: "hello"}, Source: "lines", Stream: topo.Streams[0], ID: dsl.TupleID{Root: 7, Edge: 7}}
	for _, s := range topo.Streams {
		if s.Type == reflect.TypeFor[line]() {
			in.Stream = s
		}
	}
	if err := task.Execute(&in, c); err != nil {
		t.Fatal(err)
	}
	// The child's emit and ack of the input, then an emit that asks for its
	// task ids (Storm's default) and one that says what it got: none, as the
	// recording Collector sends nowhere.
	for len(c.emits) < 3 {
		testsupport.Recv(t, posts, 10*time.Second, "the child's emits")(c)
	}
	if len(c.acks) != 1 || c.acks[0].ID.Root != 7 || len(c.fails) != 0 {
		t.Errorf("acks %v, fails %v; want the input's ack", c.acks, c.fails)
	}
	if c.emits[0] != (word{Text: "hello"}) || c.emits[1] != (word{Text: "who"}) || c.emits[2] != (word{Text: "tasks []"}) {
		t.Errorf("emits %v, want hello, who, then the task ids the child read: []", c.emits)
	}
}

// awaitLogOfIdleTask runs a shell bolt task whose child runs script, with a
// task that never runs what the bolt posts (it takes none of the child's
// emits), and waits for the child's log line msg.
func awaitLogOfIdleTask(t *testing.T, script, msg string) {
	t.Helper()
	cmd := Command{Path: "sh", Args: []string{"-c", handshakeSh + script}, Outputs: map[string]any{"default": word{}}}
	b := dsl.New("idle", nil)
	b.Streams(word{})
	src := b.Spout("lines", dsl.Unreliable(func() (line, bool) { return line{}, false }))
	b.Unanchored(src, b.Bolt("shell", Bolt(cmd)), dsl.Shuffle[line]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	said := make(chan struct{}, 1)
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(nopWriter{}), zap.DebugLevel),
		zap.Hooks(func(e zapcore.Entry) error {
			if e.Message == msg {
				said <- struct{}{}
			}
			return nil
		}))
	info := dsl.TaskInfo{Component: "shell", Task: topo.Component("shell").Tasks[0], Model: topo, Logger: log, Settings: topo.Settings,
		Fail: func(err error) { t.Errorf("the task failed: %v", err) }, Post: func(func(dsl.Collector)) {}}
	task := newShellBolt(newDef(cmd, false), info)
	defer task.(interface{ Close() error }).Close()
	testsupport.Recv(t, said, 10*time.Second, "the child's log line "+strconv.Quote(msg))
}

// A shell bolt's reader takes what its child said in one go in batches of up
// to handOffBatch messages, not a batch a message: a child that says a
// hundred emits at once and then a log line gets the log line read while its
// task has taken none of the emits. Only beyond handOffSlots full batches
// would the child block on its pipe.
func TestShellBoltReaderBatchesWhatItsChildSaid(t *testing.T) {
	awaitLogOfIdleTask(t, `s=''; i=0
while [ $i -lt 100 ]; do s="$s"'{"command":"emit","tuple":["x"],"need_task_ids":false}\nend\n'; i=$((i+1)); done
printf "$s"'{"command":"log","msg":"all said","level":2}\nend\n'
cat >/dev/null`, "all said")
}

// What a child says that needs no task (logs, syncs) takes no room in the
// inbox: a child that only logs, a line at a time, is read on while its task
// takes nothing, however many lines it says (more than handOffSlots).
func TestShellBoltReaderHandsNoEmptyBatches(t *testing.T) {
	awaitLogOfIdleTask(t, `i=0
while [ $i -lt 8 ]; do printf '{"command":"log","msg":"line %d","level":2}\nend\n' $i; i=$((i+1)); sleep 0.02; done
cat >/dev/null`, "line 7")
}
