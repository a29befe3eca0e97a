package multilang

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// ackerComponent is the component id Storm's context gives acker tasks.
const ackerComponent = "__acker"

// newContext describes task of component c to a child, with Storm's eight
// keys. Task ids are the model's (dsl.Component.Tasks), which are the ids the
// runtime uses, so a child's direct emits reach the task it names.
func newContext(topo *dsl.Topology, c *dsl.Component, task int) wire.Context {
	ctx := wire.Context{
		TaskToComponent:         map[string]string{},
		TaskID:                  task,
		ComponentID:             c.ID,
		StreamToOutputFields:    map[string][]string{},
		StreamToTargets:         map[string]map[string]wire.Grouping{},
		SourceToStreamGroupings: map[string]map[string]wire.Grouping{},
		SourceToStreamFields:    map[string]map[string][]string{},
	}
	for _, comp := range topo.Components {
		for _, t := range comp.Tasks {
			ctx.TaskToComponent[strconv.Itoa(t)] = comp.ID
		}
	}
	for _, t := range topo.AckerTasks {
		ctx.TaskToComponent[strconv.Itoa(t)] = ackerComponent
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

func addGrouping(m map[string]map[string]wire.Grouping, outer, inner string, e *dsl.Edge) {
	if m[outer] == nil {
		m[outer] = map[string]wire.Grouping{}
	}
	m[outer][inner] = groupingOf(e.Grouping)
}

// groupingOf names a grouping as Storm's context does; global grouping is a
// fields grouping on no fields there.
func groupingOf(g dsl.Grouping) wire.Grouping {
	switch g.Kind {
	case dsl.FieldsGrouping:
		return wire.Grouping{Type: "FIELDS", Fields: g.Fields}
	case dsl.GlobalGrouping:
		return wire.Grouping{Type: "FIELDS", Fields: []string{}}
	}
	return wire.Grouping{Type: strings.ToUpper(g.Kind.String())} // SHUFFLE, ALL, DIRECT
}

// outputStreams lists the streams component c emits, in stream order: a spout's
// output type, a shell component's declared outputs, and every stream some bolt
// subscribes to from c.
func outputStreams(topo *dsl.Topology, c *dsl.Component) []*dsl.Stream {
	seen := map[*dsl.Stream]bool{}
	if c.Spout != nil {
		if s := streamOf(topo, c.Spout.Output); s != nil {
			seen[s] = true
		}
	}
	if d := defOf(c); d != nil {
		for _, o := range d.outputs {
			if s := streamOf(topo, o.typ); s != nil {
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

// stormSettings are the resolved settings a Storm host reads, by key: what a
// shell child's handshake carries and what a Flux export writes, so that Storm
// runs a component with the settings goshelter's Build derived for it (a
// window's tick frequency among them). Time values are time.Durations, turned
// into the key's unit by the caller; nil leaves the key out. Settings only
// goshelter reads (its "goshelter." keys, the window cap) are not Storm's: a
// served binary derives them again from its own topology.
var stormSettings = []struct {
	key   string
	value func(dsl.Settings) any
}{
	{dsl.MaxSpoutPending, func(s dsl.Settings) any { return s.MaxSpoutPending }},
	{dsl.AckerTasks, func(s dsl.Settings) any { return s.AckerTasks }},
	{dsl.AckerExecutors, func(s dsl.Settings) any { return s.AckerExecutors }},
	{dsl.ReceiveBufferSize, func(s dsl.Settings) any { return s.ReceiveBufferSize }},
	{dsl.MessageTimeout, func(s dsl.Settings) any { return s.MessageTimeout }},
	{dsl.SpoutWait, func(s dsl.Settings) any { return s.SpoutWait }},
	{dsl.Debug, func(s dsl.Settings) any { return s.Debug }},
	{dsl.SubprocessTimeout, func(s dsl.Settings) any { return s.SubprocessTimeout }},
	{dsl.BatchFlushInterval, func(s dsl.Settings) any { return s.BatchFlushInterval }},
	{dsl.CheckpointInterval, func(s dsl.Settings) any { return s.CheckpointInterval }},
	{dsl.TickFrequency, func(s dsl.Settings) any {
		if s.TickFrequency <= 0 {
			return nil
		}
		return s.TickFrequency
	}},
}

// stormConf returns conf as a child sees it: Storm's key names with values in
// the key's unit (a time.Duration becomes seconds, or milliseconds for ".ms"
// and ".millis" keys), the settings goshelter resolved (defaults included, as
// Storm sends its whole conf) and "topology.name".
func stormConf(topology string, conf dsl.Conf, s dsl.Settings) map[string]any {
	out := map[string]any{"topology.name": topology}
	for _, k := range stormSettings {
		if v := k.value(s); v != nil {
			out[k.key] = confValue(k.key, v)
		}
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
		if inMillis(key) {
			return d.Milliseconds()
		}
		return seconds(d)
	}
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprint(v)
	}
	return v
}

// inMillis tells the keys Storm reads in milliseconds from those in seconds.
func inMillis(key string) bool {
	return strings.HasSuffix(key, ".ms") || strings.HasSuffix(key, ".millis")
}
