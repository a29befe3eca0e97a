package multilang_test

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

type Sentence struct {
	Text string `storm:"sentence"`
}

type Word struct {
	Text string `storm:"word"`
}

type Count struct {
	Word string `storm:"word"`
	N    int    `storm:"count"`
}

// wordCount is sentences (Go) -> split (shell) -> count (Go) -> total (Go).
// Task ids: count 1-2, sentences 3-4, split 5-6, total 7, ackers 8-11.
func wordCount(t *testing.T, direct bool) *dsl.Topology {
	t.Helper()
	b := dsl.New("wc", dsl.Conf{dsl.MessageTimeout: 1500 * time.Millisecond, "custom.key": "x", "goshelter.batch.size": 8})
	b.Streams(Word{}, Count{})
	spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }), dsl.Parallelism(2))
	split := b.Bolt("split", multilang.Bolt(multilang.Command{Path: "python3", Args: []string{"split.py"}, Outputs: map[string]any{"default": Word{}}}),
		dsl.Parallelism(2), dsl.WithConf(dsl.Conf{dsl.TickFrequency: 2 * time.Second}))
	count := b.Bolt("count", dsl.AutoAck(func(Word, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
	total := b.Bolt("total", dsl.AutoAck(func(Count, dsl.Emitter) error { return nil }))
	b.Anchored(spout, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "word"))
	if direct {
		b.Unanchored(count, total, dsl.Direct[Count]())
	} else {
		b.Unanchored(count, total, dsl.Global[Count]())
	}
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestContextHasStormsEightKeysWithRealTaskIDs(t *testing.T) {
	topo := wordCount(t, false)
	ctx := multilang.NewContext(topo, topo.Component("split"), 5)

	b, err := json.Marshal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys)
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	want := []string{"componentid", "source->stream->fields", "source->stream->grouping", "stream->outputfields", "stream->target->grouping", "streams", "task->component", "taskid"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("context keys = %v, want %v", names, want)
	}

	if ctx.TaskID != 5 || ctx.ComponentID != "split" {
		t.Errorf("task %d component %q", ctx.TaskID, ctx.ComponentID)
	}
	wantTasks := map[string]string{"1": "count", "2": "count", "3": "sentences", "4": "sentences", "5": "split", "6": "split", "7": "total",
		"8": "__acker", "9": "__acker", "10": "__acker", "11": "__acker"}
	if !reflect.DeepEqual(ctx.TaskToComponent, wantTasks) {
		t.Errorf("task->component = %v", ctx.TaskToComponent)
	}
	if !reflect.DeepEqual(ctx.Streams, []string{"default"}) || !reflect.DeepEqual(ctx.StreamToOutputFields, map[string][]string{"default": {"word"}}) {
		t.Errorf("streams %v, fields %v", ctx.Streams, ctx.StreamToOutputFields)
	}
	if got := ctx.StreamToTargets; !reflect.DeepEqual(got, map[string]map[string]wire.Grouping{"default": {"count": {Type: "FIELDS", Fields: []string{"word"}}}}) {
		t.Errorf("stream->target->grouping = %v", got)
	}
	if got := ctx.SourceToStreamGroupings; !reflect.DeepEqual(got, map[string]map[string]wire.Grouping{"sentences": {"Sentence": {Type: "SHUFFLE"}}}) {
		t.Errorf("source->stream->grouping = %v", got)
	}
	if got := ctx.SourceToStreamFields; !reflect.DeepEqual(got, map[string]map[string][]string{"sentences": {"Sentence": {"sentence"}}}) {
		t.Errorf("source->stream->fields = %v", got)
	}
}

func TestContextOfAGoComponentNamesShellStreamsAsTheShellDoes(t *testing.T) {
	topo := wordCount(t, false)
	ctx := multilang.NewContext(topo, topo.Component("count"), 1)
	if got := ctx.SourceToStreamGroupings; !reflect.DeepEqual(got, map[string]map[string]wire.Grouping{"split": {"default": {Type: "FIELDS", Fields: []string{"word"}}}}) {
		t.Errorf("source->stream->grouping = %v", got)
	}
	// Global grouping is a fields grouping on no fields in Storm, and "fields" is always there.
	b, _ := json.Marshal(ctx.StreamToTargets)
	if string(b) != `{"Count":{"total":{"type":"FIELDS","fields":[]}}}` {
		t.Errorf("stream->target->grouping = %s", b)
	}
}

func TestStormConfUsesStormUnits(t *testing.T) {
	topo := wordCount(t, false)
	c := topo.Component("split")
	conf := multilang.StormConf(topo.Name, dsl.Conf{"custom.key": "x", "some.timeout.ms": 250 * time.Millisecond, "weird": make(chan int)}, c.Settings)
	want := map[string]any{
		"topology.name": "wc", dsl.MessageTimeout: 1.5, dsl.TickFrequency: int64(2), dsl.SubprocessTimeout: int64(30),
		dsl.MaxSpoutPending: 128, "custom.key": "x", "some.timeout.ms": int64(250), dsl.SpoutWait: int64(100),
	}
	for k, v := range want {
		if !reflect.DeepEqual(conf[k], v) {
			t.Errorf("conf[%q] = %#v, want %#v", k, conf[k], v)
		}
	}
	if _, err := json.Marshal(conf); err != nil {
		t.Errorf("conf does not encode: %v", err)
	}
}

// A shell component's context lists every stream it may emit, in stream
// order, subscribed or not: a spout's output type and a bolt's declared
// outputs.
func TestContextListsOutputStreamsNobodySubscribesTo(t *testing.T) {
	b := dsl.New("outputs", nil)
	b.Streams(Word{}, Count{})
	sentences := b.Spout("sentences", multilang.Spout[Sentence](multilang.Command{Path: "sentences.py"}))
	both := b.Bolt("both", multilang.Bolt(multilang.Command{Path: "both.py", Outputs: map[string]any{"words": Word{}, "counts": Count{}}}))
	b.Anchored(sentences, both, dsl.Shuffle[Sentence]())
	b.Spout("idle", multilang.Spout[Word](multilang.Command{Path: "idle.py"}))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		component string
		streams   []string
	}{
		{"both", []string{"words", "counts"}}, // Word is stream 0, Count stream 1
		{"idle", []string{"default"}},
	} {
		c := topo.Component(tt.component)
		if got := multilang.NewContext(topo, c, c.Tasks[0]).Streams; !reflect.DeepEqual(got, tt.streams) {
			t.Errorf("%s: streams %v, want %v", tt.component, got, tt.streams)
		}
	}
}
