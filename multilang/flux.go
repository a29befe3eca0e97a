package multilang

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"go.yaml.in/yaml/v3"
)

// Flux wrapper classes of Apache Storm (flux-wrappers) that run shell components.
const (
	FluxShellSpout = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
	FluxShellBolt  = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
)

// FluxDef is a Storm Flux topology definition, as [Flux] writes it.
type FluxDef struct {
	Name    string          `yaml:"name"`
	Config  map[string]any  `yaml:"config,omitempty"`
	Spouts  []FluxComponent `yaml:"spouts"`
	Bolts   []FluxComponent `yaml:"bolts"`
	Streams []FluxStream    `yaml:"streams"`
}

// FluxComponent is a spout or bolt of a Flux definition.
type FluxComponent struct {
	ID              string             `yaml:"id"`
	ClassName       string             `yaml:"className"`
	ConstructorArgs []any              `yaml:"constructorArgs"`
	ConfigMethods   []FluxConfigMethod `yaml:"configMethods,omitempty"`
	Parallelism     int                `yaml:"parallelism"`
}

// FluxConfigMethod is a method Flux calls on a component after constructing it.
type FluxConfigMethod struct {
	Name string `yaml:"name"`
	Args []any  `yaml:"args"`
}

// FluxStream subscribes a bolt to a component's stream.
type FluxStream struct {
	Name     string       `yaml:"name"`
	From     string       `yaml:"from"`
	To       string       `yaml:"to"`
	Grouping FluxGrouping `yaml:"grouping"`
}

// FluxGrouping is a Flux grouping.
type FluxGrouping struct {
	Type     string   `yaml:"type"`
	StreamID string   `yaml:"streamId"`
	Args     []string `yaml:"args,omitempty"`
}

// ErrNotExportable is wrapped by Flux's error for topologies Storm's shell
// wrappers cannot express.
var ErrNotExportable = errors.New("multilang: topology cannot be exported to Flux")

// Flux describes topo as a Storm Flux definition in which every component is a
// shell component: Go components run command (this binary, serving them with
// [Serve]); shell components defined with [Spout] and [Bolt] run their own
// command. Streams keep their goshelter names (shell components' declared ids for
// what they emit); groupings map to Flux's SHUFFLE, FIELDS, ALL and GLOBAL.
// Direct groupings cannot be exported: Flux's shell wrappers declare no direct
// streams.
func Flux(topo *dsl.Topology, command ...string) (*FluxDef, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("%w: no command to run the binary", ErrNotExportable)
	}
	f := &FluxDef{Name: topo.Name, Config: fluxConf(topo.Conf, topo.Settings)}
	var problems []string
	for _, c := range sortedComponents(topo) {
		fc := fluxComponent(topo, c, command)
		if c.Kind == dsl.SpoutKind {
			f.Spouts = append(f.Spouts, fc)
		} else {
			f.Bolts = append(f.Bolts, fc)
		}
	}
	for _, e := range topo.Edges {
		g, err := fluxGrouping(e)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		f.Streams = append(f.Streams, FluxStream{Name: fmt.Sprintf("%s --%s--> %s", e.From.ID, g.StreamID, e.To.ID), From: e.From.ID, To: e.To.ID, Grouping: g})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotExportable, strings.Join(problems, "; "))
	}
	return f, nil
}

// YAML renders the definition.
func (f *FluxDef) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func sortedComponents(topo *dsl.Topology) []*dsl.Component {
	out := append([]*dsl.Component(nil), topo.Components...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func fluxComponent(topo *dsl.Topology, c *dsl.Component, command []string) FluxComponent {
	fc := FluxComponent{ID: c.ID, ClassName: FluxShellBolt, Parallelism: c.Parallelism}
	if c.Kind == dsl.SpoutKind {
		fc.ClassName = FluxShellSpout
	}
	argv := command
	if d := defOf(c); d != nil {
		argv = d.cmd.Argv()
	}
	fc.ConstructorArgs = []any{append([]string(nil), argv...)}
	for _, s := range outputStreams(topo, c) {
		fc.ConfigMethods = append(fc.ConfigMethods, FluxConfigMethod{Name: "setNamedStream", Args: []any{streamID(c, s), append([]string(nil), s.Fields...)}})
	}
	keys := make([]string, 0, len(c.Conf))
	for k := range c.Conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fc.ConfigMethods = append(fc.ConfigMethods, FluxConfigMethod{Name: "addComponentConfig", Args: []any{k, fluxValue(k, c.Conf[k])}})
	}
	return fc
}

func fluxGrouping(e *dsl.Edge) (FluxGrouping, error) {
	g := FluxGrouping{StreamID: streamID(e.From, e.Stream)}
	switch e.Grouping.Kind {
	case dsl.GroupShuffle:
		g.Type = "SHUFFLE"
	case dsl.GroupFields:
		g.Type, g.Args = "FIELDS", append([]string(nil), e.Grouping.Fields...)
	case dsl.GroupAll:
		g.Type = "ALL"
	case dsl.GroupGlobal:
		g.Type = "GLOBAL"
	default:
		return g, fmt.Errorf("edge %v: %v grouping is not supported by Flux's shell wrappers", e, e.Grouping)
	}
	return g, nil
}

// fluxConf is the topology conf for Storm: the user's keys (goshelter's own
// left out) and the resolved values of the keys whose defaults differ between
// goshelter and Storm.
func fluxConf(conf dsl.Conf, s dsl.Settings) map[string]any {
	out := map[string]any{
		dsl.MaxSpoutPending:   s.MaxSpoutPending,
		dsl.MessageTimeout:    fluxValue(dsl.MessageTimeout, s.MessageTimeout),
		dsl.AckerTasks:        s.AckerTasks,
		dsl.SubprocessTimeout: fluxValue(dsl.SubprocessTimeout, s.SubprocessTimeout),
	}
	for k, v := range conf {
		if !strings.HasPrefix(k, "goshelter.") {
			out[k] = fluxValue(k, v)
		}
	}
	return out
}

// fluxValue is confValue with durations in whole units (rounded up, at least
// 1): Storm reads its time keys as integers.
func fluxValue(key string, v any) any {
	d, ok := v.(time.Duration)
	if !ok {
		return confValue(key, v)
	}
	unit := time.Second
	if strings.HasSuffix(key, ".ms") {
		unit = time.Millisecond
	}
	return max(int64((d+unit-1)/unit), 1)
}
