package multilang_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport/fluxcheck"
	"github.com/goshelter/goshelter/multilang"
)

func TestFluxRunsEveryComponentThroughStormsShellWrappers(t *testing.T) {
	var buf bytes.Buffer
	if err := multilang.Flux(&buf, wordCount(t, false), "./wc", "serve"); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	var doc struct {
		Name   string         `yaml:"name"`
		Config map[string]any `yaml:"config"`
		Spouts []struct {
			ID              string `yaml:"id"`
			ClassName       string `yaml:"className"`
			ConstructorArgs [][]string
			ConfigMethods   []struct {
				Name string `yaml:"name"`
				Args []any  `yaml:"args"`
			} `yaml:"configMethods"`
			Parallelism int `yaml:"parallelism"`
		} `yaml:"spouts"`
		Bolts []struct {
			ID              string     `yaml:"id"`
			ClassName       string     `yaml:"className"`
			ConstructorArgs [][]string `yaml:"constructorArgs"`
			Parallelism     int        `yaml:"parallelism"`
		} `yaml:"bolts"`
		Streams []struct {
			From, To string
			Grouping struct {
				Type     string   `yaml:"type"`
				StreamID string   `yaml:"streamId"`
				Args     []string `yaml:"args"`
			} `yaml:"grouping"`
		} `yaml:"streams"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if doc.Name != "wc" || doc.Config["topology.message.timeout.secs"] != 2 || doc.Config["custom.key"] != "x" || doc.Config["goshelter.batch.size"] != nil {
		t.Errorf("name %q config %v", doc.Name, doc.Config)
	}
	if len(doc.Spouts) != 1 || doc.Spouts[0].ClassName != "org.apache.storm.flux.wrappers.spouts.FluxShellSpout" || doc.Spouts[0].Parallelism != 2 {
		t.Fatalf("spouts: %+v", doc.Spouts)
	}
	m := doc.Spouts[0].ConfigMethods[0]
	if m.Name != "setNamedStream" || m.Args[0] != "Sentence" {
		t.Errorf("spout stream: %+v", m)
	}
	args := map[string][]string{}
	for _, b := range doc.Bolts {
		if b.ClassName != "org.apache.storm.flux.wrappers.bolts.FluxShellBolt" {
			t.Errorf("bolt %s is a %s", b.ID, b.ClassName)
		}
		args[b.ID] = b.ConstructorArgs[0]
	}
	if got := args["count"]; len(got) != 2 || got[0] != "./wc" || got[1] != "serve" {
		t.Errorf("Go bolt runs %v", got)
	}
	if got := args["split"]; len(got) != 2 || got[0] != "python3" || got[1] != "split.py" {
		t.Errorf("shell bolt runs %v", got)
	}
	groupings := map[string]string{}
	for _, s := range doc.Streams {
		groupings[s.From+">"+s.To] = s.Grouping.Type + "/" + s.Grouping.StreamID
	}
	want := map[string]string{"sentences>split": "SHUFFLE/Sentence", "split>count": "FIELDS/default", "count>total": "GLOBAL/Count"}
	for k, v := range want {
		if groupings[k] != v {
			t.Errorf("stream %s: %s, want %s\n%s", k, groupings[k], v, out)
		}
	}
}

func TestFluxRefusesWhatStormsShellWrappersCannotDeclare(t *testing.T) {
	var out bytes.Buffer
	if err := multilang.Flux(&out, wordCount(t, true), "./wc", "serve"); !errors.Is(err, multilang.ErrNotExportable) || !strings.Contains(err.Error(), "direct grouping") {
		t.Errorf("direct grouping: %v", err)
	}
	if err := multilang.Flux(&out, wordCount(t, false)); !errors.Is(err, multilang.ErrNotExportable) {
		t.Errorf("no command: %v", err)
	}
	b := dsl.New("bad-line", nil)
	b.Spout("lines", multilang.Spout[Sentence](multilang.Command{Line: `python3 "unterminated`}))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := multilang.Flux(&out, topo, "./wc", "serve"); !errors.Is(err, multilang.ErrNotExportable) || !strings.Contains(err.Error(), `component "lines": command line`) {
		t.Errorf("a command line that does not split: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("Flux wrote %q along with its error", out.String())
	}
}

// fluxDoc parses what Flux wrote, as far as these tests look.
type fluxDoc struct {
	Config  map[string]any `yaml:"config"`
	Spouts  []fluxComp     `yaml:"spouts"`
	Bolts   []fluxComp     `yaml:"bolts"`
	Streams []struct {
		From, To string
		Grouping struct {
			Type     string   `yaml:"type"`
			StreamID string   `yaml:"streamId"`
			Args     []string `yaml:"args"`
		} `yaml:"grouping"`
	} `yaml:"streams"`
}

type fluxComp struct {
	ID            string `yaml:"id"`
	ConfigMethods []struct {
		Name string `yaml:"name"`
		Args []any  `yaml:"args"`
	} `yaml:"configMethods"`
	Parallelism int            `yaml:"parallelism"`
	NumTasks    int            `yaml:"numTasks"`
	Config      map[string]any `yaml:"config"`
}

func exportFlux(t *testing.T, topo *dsl.Topology) fluxDoc {
	t.Helper()
	var buf bytes.Buffer
	if err := multilang.Flux(&buf, topo, "./wc", "serve"); err != nil {
		t.Fatal(err)
	}
	var doc fluxDoc
	if err := yaml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v in\n%s", err, buf.Bytes())
	}
	return doc
}

// A shell spout's child that names no stream emits on Storm's "default": the
// export declares that id and subscribes on it, as goshelter's host accepts
// (issue 13: Flux said "Sentence" and Storm threw "Unknown stream ID: default").
func TestFluxNamesAShellSpoutsUndeclaredStreamDefault(t *testing.T) {
	b := dsl.New("shell-spout", nil)
	b.Streams(Word{})
	spout := b.Spout("sentences", multilang.Spout[Sentence](multilang.Command{Path: "python3", Args: []string{"sentences.py"}}))
	split := b.Bolt("split", dsl.AutoAck(func(Sentence, dsl.Emitter) error { return nil }))
	b.Anchored(spout, split, dsl.Shuffle[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	doc := exportFlux(t, topo)
	m := doc.Spouts[0].ConfigMethods
	if len(m) != 1 || m[0].Name != "setNamedStream" || m[0].Args[0] != "default" {
		t.Errorf("spout streams %+v, want default", m)
	}
	if g := doc.Streams[0].Grouping; g.StreamID != "default" {
		t.Errorf("split subscribes on %q, want default", g.StreamID)
	}
	ctx := multilang.NewContext(topo, topo.Component("sentences"), 2)
	if len(ctx.Streams) != 1 || ctx.Streams[0] != "default" || ctx.StreamToOutputFields["default"][0] != "sentence" {
		t.Errorf("the child's context names its streams %v %v", ctx.Streams, ctx.StreamToOutputFields)
	}
}

func TestFluxWritesTasksWorkersComponentConfigAndEveryGrouping(t *testing.T) {
	b := dsl.New("groupings", dsl.Conf{"topology.workers": 3})
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }), dsl.Parallelism(2))
	noop := func(Sentence, dsl.Emitter) error { return nil }
	for kind, g := range map[string]dsl.Grouping{"local": dsl.LocalOrShuffle[Sentence](), "none": dsl.None[Sentence](), "all": dsl.All[Sentence]()} {
		b.Anchored(spout, b.Bolt(kind, dsl.AutoAck(noop), dsl.Parallelism(3),
			dsl.WithConf(dsl.Conf{dsl.TickFrequency: 1500 * time.Millisecond, "my.key": kind, "goshelter.batch.size": 4})), g)
	}
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	doc := exportFlux(t, topo)
	if doc.Config["topology.workers"] != 3 {
		t.Errorf("topology.workers %v, want the conf's 3", doc.Config["topology.workers"])
	}
	if doc.Spouts[0].Parallelism != 2 || doc.Spouts[0].NumTasks != 2 {
		t.Errorf("spout parallelism %d numTasks %d, want 2 and 2", doc.Spouts[0].Parallelism, doc.Spouts[0].NumTasks)
	}
	for _, c := range doc.Bolts {
		if c.NumTasks != 3 || c.Config["topology.tick.tuple.freq.secs"] != 2 || c.Config["my.key"] != c.ID || c.Config["goshelter.batch.size"] != nil || len(c.ConfigMethods) != 0 {
			t.Errorf("bolt %+v, want 3 tasks and its own conf (in whole seconds, no goshelter keys)", c)
		}
	}
	types := map[string]string{}
	for _, s := range doc.Streams {
		types[s.To] = s.Grouping.Type
	}
	if want := map[string]string{"local": "LOCAL_OR_SHUFFLE", "none": "NONE", "all": "ALL"}; !reflect.DeepEqual(types, want) {
		t.Errorf("groupings %v, want %v", types, want)
	}
	if exportFlux(t, wordCount(t, false)).Config["topology.workers"] != 1 {
		t.Error("topology.workers is not 1 by default")
	}
}

// TestFluxCarriesEverySettingBuildResolves exports topologies with every
// window kind, conf at both levels and goshelter's own keys, and checks with
// fluxcheck (which reads the YAML as Storm does, on its own terms) that Storm
// would run each component with the settings Build resolved for it.
func TestFluxCarriesEverySettingBuildResolves(t *testing.T) {
	type ev struct{ N, At int }
	type sum struct{ N int }
	at := func(e ev) time.Time { return time.UnixMilli(int64(e.At)) }
	kinds := map[string]dsl.WindowSpec[ev]{
		"count tumbling":          {Count: 10},
		"count sliding":           {Count: 10, SlideCount: 2},
		"time tumbling":           {Length: 3 * time.Second},
		"time sliding":            {Length: 4 * time.Second, Slide: 2 * time.Second},
		"sub-second slide":        {Length: 2 * time.Second, Slide: 300 * time.Millisecond},
		"count by time":           {Count: 10, Slide: 2 * time.Second},
		"time by count":           {Length: 2 * time.Second, SlideCount: 5},
		"event time":              {Length: 3 * time.Second, Timestamp: at, Lag: time.Second},
		"event time, watermark":   {Length: 3 * time.Second, Timestamp: at, WatermarkInterval: 5 * time.Second},
		"event time, sliding":     {Length: 4 * time.Second, Slide: 2 * time.Second, Timestamp: at},
		"event time, count slide": {Length: 4 * time.Second, SlideCount: 3, Timestamp: at},
	}
	confs := map[string][2]dsl.Conf{
		"defaults": {nil, nil},
		"topology conf": {{dsl.MessageTimeout: 90, dsl.MaxSpoutPending: 70, dsl.SpoutWait: 0, dsl.BatchFlushInterval: 0,
			dsl.AckerTasks: 2, dsl.ReceiveBufferSize: 1000, dsl.Debug: true, dsl.SubprocessTimeout: 1500 * time.Millisecond,
			dsl.AckerCapacity: 100, dsl.BatchSize: 8}, nil},
		"component conf": {{dsl.TickFrequency: 7}, {dsl.TickFrequency: 3, dsl.MaxSpoutPending: 30, dsl.SpoutWait: 5 * time.Millisecond}},
	}
	for kind, spec := range kinds {
		for name, conf := range confs {
			t.Run(kind+", "+name, func(t *testing.T) {
				b := dsl.New("kinds", conf[0])
				b.Streams(ev{}, sum{})
				s := b.Spout("events", dsl.Reliable(func() (int, ev, bool) { return 0, ev{}, false }, func(int) {}, func(int) {}), dsl.WithConf(conf[1]))
				w := b.Bolt("window", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[ev], dsl.Emitter) error {
					return func(dsl.Window[ev], dsl.Emitter) error { return nil }
				}, spec), dsl.WithConf(conf[1]))
				b.Anchored(s, w, dsl.Shuffle[ev]())
				b.Anchored(w, b.Bolt("sink", dsl.AutoAck(func(sum, dsl.Emitter) error { return nil })), dsl.Shuffle[sum]())
				topo, err := b.Build()
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := multilang.Flux(&out, topo, "./kinds", "serve"); err != nil {
					t.Fatal(err)
				}
				if err := fluxcheck.Check(topo, out.Bytes()); err != nil {
					t.Errorf("%v\n%s", err, out.Bytes())
				}
			})
		}
	}
}

// TestFluxcheckSeesADriftingExport keeps the check honest: a definition that
// leaves out a window's tick frequency, or says another timeout, fails it.
func TestFluxcheckSeesADriftingExport(t *testing.T) {
	topo := windowTopology(t)
	var out bytes.Buffer
	if err := multilang.Flux(&out, topo, "./w", "serve"); err != nil {
		t.Fatal(err)
	}
	good := out.String()
	if err := fluxcheck.Check(topo, []byte(good)); err != nil {
		t.Fatalf("the export itself: %v", err)
	}
	for name, bad := range map[string]string{
		"no tick frequency": strings.Replace(good, "topology.tick.tuple.freq.secs: 1", "other.key: 1", 1),
		"another timeout":   strings.Replace(good, "topology.message.timeout.secs: 30", "topology.message.timeout.secs: 31", 1),
	} {
		if bad == good {
			t.Fatalf("%s: the edit did not apply to\n%s", name, good)
		}
		if err := fluxcheck.Check(topo, []byte(bad)); err == nil {
			t.Errorf("%s: the check passed", name)
		}
	}
}

func windowTopology(t *testing.T) *dsl.Topology {
	t.Helper()
	type ev struct{ N int }
	b := dsl.New("w", nil)
	b.Streams(ev{})
	s := b.Spout("events", dsl.Unreliable(func() (ev, bool) { return ev{}, false }))
	b.Anchored(s, b.Bolt("window", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[ev], dsl.Emitter) error {
		return func(dsl.Window[ev], dsl.Emitter) error { return nil }
	}, dsl.WindowSpec[ev]{Length: 2 * time.Second})), dsl.Shuffle[ev]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}
