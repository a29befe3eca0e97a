package multilang

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
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
// tasks (numTasks) and, as its config, its own conf and every setting Storm
// reads that Build resolved differently for it (a window's tick frequency);
// the topology conf gets every such setting as resolved for the topology,
// topology.workers (1 unless set), and the Kryo registrations of the
// json-smart and BigDecimal values Storm makes of served tuples, without
// which they cannot cross workers. Conf keys starting with "goshelter." are
// left out and time conf is written in whole seconds or milliseconds
// (rounded up), as Storm reads it.
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
	fc.Config = componentConf(topo, c)
	return fc, nil
}

func fluxGrouping(e *dsl.Edge) (flux.Grouping, error) {
	g := flux.Grouping{StreamID: streamID(e.From, e.Stream)}
	switch e.Grouping.Kind {
	case dsl.ShuffleGrouping:
		g.Type = "SHUFFLE"
	case dsl.LocalOrShuffleGrouping:
		g.Type = "LOCAL_OR_SHUFFLE"
	case dsl.NoneGrouping:
		g.Type = "NONE"
	case dsl.FieldsGrouping:
		g.Type, g.Args = "FIELDS", append([]string(nil), e.Grouping.Fields...)
	case dsl.AllGrouping:
		g.Type = "ALL"
	case dsl.GlobalGrouping:
		g.Type = "GLOBAL"
	default:
		return g, fmt.Errorf("edge %v: %v grouping is not supported by Flux's shell wrappers", e, e.Grouping)
	}
	return g, nil
}

// workersKey is Storm's conf key for the worker processes of a topology.
const workersKey = "topology.workers"

// kryoRegisterKey lists the classes Storm's Kryo may serialize between workers.
const kryoRegisterKey = "topology.kryo.register"

// servedValueClasses are the classes of the values Storm makes of a shell
// component's JSON (a list, a map or struct, a float whose text is long), as
// named inside storm-client's shaded jar. Storm registers none of them, so
// without this the first such tuple that crosses workers kills the worker.
var servedValueClasses = []string{
	"org.apache.storm.shade.net.minidev.json.JSONArray",
	"org.apache.storm.shade.net.minidev.json.JSONObject",
	"java.math.BigDecimal",
}

// fluxConf is the topology conf for Storm: every setting Storm reads, as
// goshelter resolved it (stormSettings), the user's keys (goshelter's own left
// out), topology.workers (1 unless set: goshelter runs one process) and the
// Kryo registrations of the values served components send.
func fluxConf(conf dsl.Conf, s dsl.Settings) map[string]any {
	out := map[string]any{workersKey: 1}
	for k, v := range conf {
		if !strings.HasPrefix(k, "goshelter.") {
			out[k] = fluxValue(k, v)
		}
	}
	for _, k := range stormSettings {
		if v := k.value(s); v != nil {
			out[k.key] = fluxValue(k.key, v)
		}
	}
	out[kryoRegisterKey] = withKryoClasses(out[kryoRegisterKey])
	return out
}

// withKryoClasses adds servedValueClasses to the user's own registrations (a
// list of class names or of single-entry class: serializer maps).
func withKryoClasses(user any) []any {
	var out []any
	seen := map[string]bool{}
	if list, ok := user.([]any); ok {
		out = append(out, list...)
	} else if names, ok := user.([]string); ok {
		for _, n := range names {
			out = append(out, n)
		}
	}
	for _, r := range out {
		switch r := r.(type) {
		case string:
			seen[r] = true
		case map[string]any:
			for class := range r {
				seen[class] = true
			}
		case map[string]string:
			for class := range r {
				seen[class] = true
			}
		}
	}
	for _, class := range servedValueClasses {
		if !seen[class] {
			out = append(out, class)
		}
	}
	return out
}

// componentConf is what a component's Flux config must say beyond the
// topology's: its own keys and every Storm setting Build resolved
// differently for it (the tick frequency of a window that closes on ticks).
func componentConf(topo *dsl.Topology, c *dsl.Component) map[string]any {
	out := map[string]any{}
	for k, v := range c.Conf {
		if !strings.HasPrefix(k, "goshelter.") {
			out[k] = fluxValue(k, v)
		}
	}
	for _, k := range stormSettings {
		own, shared := k.value(c.Settings), k.value(topo.Settings)
		if own != nil && own != shared {
			out[k.key] = fluxValue(k.key, own)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// fluxValue is confValue with durations in whole units, rounded up (Storm
// reads its time keys as integers): a positive duration stays positive, zero
// (a key's "off") stays zero.
func fluxValue(key string, v any) any {
	d, ok := v.(time.Duration)
	if !ok {
		return confValue(key, v)
	}
	unit := time.Second
	if inMillis(key) {
		unit = time.Millisecond
	}
	return int64((d + unit - 1) / unit)
}
