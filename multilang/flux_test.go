package multilang_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/goshelter/goshelter/dsl"
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
