package multilang

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/routing"
)

// NewContext describes task of component c to a child, with Storm's eight keys.
// Task ids are those [routing.Compile] assigns (Storm's numbering), so they are the
// ids the runtime uses.
func NewContext(plan *routing.Plan, c *dsl.Component, task int) Context {
	topo := plan.Topology
	ctx := Context{
		TaskToComponent:         map[string]string{},
		TaskID:                  task,
		ComponentID:             c.ID,
		StreamToOutputFields:    map[string][]string{},
		StreamToTargets:         map[string]map[string]Grouping{},
		SourceToStreamGroupings: map[string]map[string]Grouping{},
		SourceToStreamFields:    map[string]map[string][]string{},
	}
	for _, t := range plan.Tasks {
		name := "__acker"
		if t.Component != nil {
			name = t.Component.ID
		}
		ctx.TaskToComponent[strconv.Itoa(t.ID)] = name
	}
	ctx.Streams = []string{}
	for _, s := range outputStreams(topo, c) {
		id := streamID(c, s)
		ctx.Streams = append(ctx.Streams, id)
		ctx.StreamToOutputFields[id] = s.Fields
	}
	for _, e := range topo.Edges {
		if e.From == c {
			addGrouping(ctx.StreamToTargets, streamID(c, e.Stream), e.To.ID, e)
		}
		if e.To == c {
			addGrouping(ctx.SourceToStreamGroupings, e.From.ID, streamID(e.From, e.Stream), e)
			fields := map[string][]string{}
			for _, s := range outputStreams(topo, e.From) {
				fields[streamID(e.From, s)] = s.Fields
			}
			ctx.SourceToStreamFields[e.From.ID] = fields
		}
	}
	return ctx
}

func addGrouping(m map[string]map[string]Grouping, outer, inner string, e *dsl.Edge) {
	if m[outer] == nil {
		m[outer] = map[string]Grouping{}
	}
	m[outer][inner] = groupingOf(e.Grouping)
}

// groupingOf names a grouping as Storm's context does; global grouping is a
// fields grouping on no fields there.
func groupingOf(g dsl.Grouping) Grouping {
	switch g.Kind {
	case dsl.GroupShuffle:
		return Grouping{Type: "SHUFFLE"}
	case dsl.GroupFields:
		return Grouping{Type: "FIELDS", Fields: g.Fields}
	case dsl.GroupAll:
		return Grouping{Type: "ALL"}
	case dsl.GroupDirect:
		return Grouping{Type: "DIRECT"}
	case dsl.GroupGlobal:
		return Grouping{Type: "FIELDS", Fields: []string{}}
	}
	return Grouping{Type: strings.ToUpper(g.Kind.String())}
}

// outputStreams lists the streams component c emits, in stream order: a spout's
// output type, a shell component's declared outputs, and every stream some bolt
// subscribes to from c.
func outputStreams(topo *dsl.Topology, c *dsl.Component) []*dsl.Stream {
	seen := map[*dsl.Stream]bool{}
	if c.Spout != nil {
		if s := topo.StreamOf(c.Spout.Output); s != nil {
			seen[s] = true
		}
	}
	if d := defOf(c); d != nil {
		for _, o := range d.outputs {
			if s := topo.StreamOf(o.typ); s != nil {
				seen[s] = true
			}
		}
	}
	for _, e := range topo.Edges {
		if e.From == c {
			seen[e.Stream] = true
		}
	}
	out := make([]*dsl.Stream, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// StormConf returns conf as a child sees it: Storm's key names with values in
// the key's unit (a time.Duration becomes seconds, or milliseconds for ".ms"
// keys), the settings goshelter resolved (defaults included, as Storm sends its
// whole conf) and "topology.name".
func StormConf(topology string, conf dsl.Conf, s dsl.Settings) map[string]any {
	out := map[string]any{
		"topology.name":       topology,
		dsl.MaxSpoutPending:   s.MaxSpoutPending,
		dsl.AckerTasks:        s.AckerTasks,
		dsl.ReceiveBufferSize: s.ReceiveBufferSize,
		dsl.MessageTimeout:    seconds(s.MessageTimeout),
		dsl.SpoutWait:         s.SpoutWait.Milliseconds(),
		dsl.Debug:             s.Debug,
		dsl.SubprocessTimeout: seconds(s.SubprocessTimeout),
	}
	if s.TickFrequency > 0 {
		out[dsl.TickFrequency] = seconds(s.TickFrequency)
	}
	for k, v := range conf {
		if _, resolved := out[k]; !resolved {
			out[k] = confValue(k, v)
		}
	}
	return out
}

func seconds(d time.Duration) any {
	if d%time.Second == 0 {
		return int64(d / time.Second)
	}
	return d.Seconds()
}

func confValue(key string, v any) any {
	if d, ok := v.(time.Duration); ok {
		if strings.HasSuffix(key, ".ms") {
			return d.Milliseconds()
		}
		return seconds(d)
	}
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprint(v)
	}
	return v
}
