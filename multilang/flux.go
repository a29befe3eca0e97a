package multilang

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/grouping"
	"github.com/goshelter/goshelter/multilang/internal/flux"
)

// errNotExportable is wrapped by Flux's error for topologies Storm's shell
// wrappers cannot express.
var errNotExportable = errors.New("multilang: topology cannot be exported to Flux")

// Flux writes topo to w as a Storm Flux definition (YAML) in which every
// component is a shell component, so that a Storm cluster can run the topology
// with no Java code: Go components run command (this binary, serving them with
// [Serve]); shell components defined with [Spout] and [Bolt] run their own
// command. Streams keep their goshelter names (shell components' declared ids
// for what they emit, Storm's "default" for a shell spout's output when it
// declares none: the ids the served components and goshelter's host use);
// groupings map to Flux's SHUFFLE, LOCAL_OR_SHUFFLE, NONE, FIELDS, ALL and
// GLOBAL. Each component gets its parallelism as both its executors and its
// tasks (numTasks) and its own conf (config); the topology conf gets
// topology.workers (1 unless set). Conf keys starting with "goshelter." are
// left out and time conf is written in whole seconds (rounded up), as Storm
// reads it.
//
// Direct groupings cannot be exported, because Flux's shell wrappers declare no
// direct streams; Flux then writes nothing and returns an error naming every
// edge it cannot express.
func Flux(w io.Writer, topo *dsl.Topology, command ...string) error {
	def, err := fluxDef(topo, command)
	if err != nil {
		return err
	}
	out, err := def.YAML()
	if err != nil {
		return fmt.Errorf("multilang: writing the Flux definition: %w", err)
	}
	_, err = w.Write(out)
	return err
}

func fluxDef(topo *dsl.Topology, command []string) (*flux.Def, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("%w: no command to run the binary", errNotExportable)
	}
	f := &flux.Def{Name: topo.Name, Config: fluxConf(topo.Conf, topo.Settings)}
	var problems []string
	for _, c := range sortedComponents(topo) {
		fc, err := fluxComponent(topo, c, command)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if c.Spout != nil {
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
		f.Streams = append(f.Streams, flux.Stream{Name: fmt.Sprintf("%s --%s--> %s", e.From.ID, g.StreamID, e.To.ID), From: e.From.ID, To: e.To.ID, Grouping: g})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", errNotExportable, strings.Join(problems, "; "))
	}
	return f, nil
}

func sortedComponents(topo *dsl.Topology) []*dsl.Component {
	out := append([]*dsl.Component(nil), topo.Components...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func fluxComponent(topo *dsl.Topology, c *dsl.Component, command []string) (flux.Component, error) {
	fc := flux.Component{ID: c.ID, ClassName: flux.ShellBolt, Parallelism: c.Parallelism, NumTasks: c.Parallelism}
	if c.Spout != nil {
		fc.ClassName = flux.ShellSpout
	}
	argv := command
	if d := defOf(c); d != nil {
		if d.err != nil {
			return fc, fmt.Errorf("component %q: %v", c.ID, d.err)
		}
		argv = d.cmd.argv()
	}
	fc.ConstructorArgs = []any{append([]string(nil), argv...)}
	for _, s := range outputStreams(topo, c) {
		fc.ConfigMethods = append(fc.ConfigMethods, flux.ConfigMethod{Name: "setNamedStream", Args: []any{streamID(c, s), append([]string(nil), s.Fields...)}})
	}
	for k, v := range c.Conf {
		if strings.HasPrefix(k, "goshelter.") {
			continue
		}
		if fc.Config == nil {
			fc.Config = map[string]any{}
		}
		fc.Config[k] = fluxValue(k, v)
	}
	return fc, nil
}

func fluxGrouping(e *dsl.Edge) (flux.Grouping, error) {
	g := flux.Grouping{StreamID: streamID(e.From, e.Stream)}
	switch e.Grouping.Kind {
	case grouping.Shuffle:
		g.Type = "SHUFFLE"
	case grouping.LocalOrShuffle:
		g.Type = "LOCAL_OR_SHUFFLE"
	case grouping.None:
		g.Type = "NONE"
	case grouping.Fields:
		g.Type, g.Args = "FIELDS", append([]string(nil), e.Grouping.Fields...)
	case grouping.All:
		g.Type = "ALL"
	case grouping.Global:
		g.Type = "GLOBAL"
	default:
		return g, fmt.Errorf("edge %v: %v grouping is not supported by Flux's shell wrappers", e, e.Grouping)
	}
	return g, nil
}

// workersKey is Storm's conf key for the worker processes of a topology.
const workersKey = "topology.workers"

// fluxConf is the topology conf for Storm: the user's keys (goshelter's own
// left out) and the resolved values of the keys whose defaults differ between
// goshelter and Storm; topology.workers is 1 (goshelter runs one process)
// unless the conf says otherwise.
func fluxConf(conf dsl.Conf, s dsl.Settings) map[string]any {
	out := map[string]any{
		dsl.MaxSpoutPending:   s.MaxSpoutPending,
		dsl.MessageTimeout:    fluxValue(dsl.MessageTimeout, s.MessageTimeout),
		dsl.AckerTasks:        s.AckerTasks,
		dsl.SubprocessTimeout: fluxValue(dsl.SubprocessTimeout, s.SubprocessTimeout),
		workersKey:            1,
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
