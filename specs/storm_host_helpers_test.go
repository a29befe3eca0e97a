package specs_test

// The storm-host suite plays Apache Storm's side of the multilang protocol as
// Storm's own classes play it (storm-client: ShellProcess, JsonSerializer,
// ShellBolt, ShellSpout, TopologyContext), to check that goshelter binaries
// served with multilang.Serve, and the shell scripts of the samples, are
// accepted by Storm's host code. It is written from reading those classes;
// nothing is copied. What it reproduces, byte for byte where bytes matter:
//
//   - JSON as Storm's shaded json-smart writes it (JSONValue.toJSONString,
//     NO_COMPRESS): keys in the iteration order of the java.util.HashMap that
//     holds them, strings escaped with "/" as "\/" and U+0000-U+001F,
//     U+007F-U+009F and U+2000-U+20FF as \uXXXX (upper-case hex), everything
//     else (emoji included) as is; each message followed by "\nend\n".
//   - Reading as JsonSerializer reads: lines (ended by \n, \r or \r\n) up to a
//     line "end", joined with "\n", then the casts of readShellMsg: "command",
//     "msg" and "stream" strings, "task" a whole number, "need_task_ids" a
//     boolean, "anchors" a string or a list of strings, "tuple" a list.
//   - The handshake of ShellProcess.launch ({"pidDir","context","conf"}, the
//     context with TopologyContext's eight keys and Storm's own task numbering,
//     "__acker" included, and the system streams Storm adds), read back as a
//     pid; the child runs in the code directory (the jar's resources/).
//   - ShellBolt: every input gets a random long id; heartbeats
//     {"comp":null,"tuple":[],"task":-1,"stream":"__heartbeat","id":...}; tick
//     tuples from "__system" on "__tick"; an ack or fail of an id that is not
//     pending, an anchor on one, an emit on an undeclared stream or with the
//     wrong number of values, a "metrics" nobody registered: each is what
//     kills a Storm worker, and here fails the spec; task ids are written back
//     to emits that want them.
//   - ShellSpout: next, ack, fail, activate and deactivate as
//     {"id":...,"command":...} ("" as the id of next, activate and
//     deactivate), each read until "sync".
//   - Storm's acker: a spout message is acked back once every tuple of its tree
//     was acked, failed as soon as one fails.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"
)

// ---- json-smart's output, with java.util.HashMap's key order ----

// jmap is a java.util.HashMap as json-smart writes it: its entries in the
// order of the map's buckets (table size a power of two, doubled when more
// than 3/4 full), each bucket in insertion order. Keys are strings or ints
// (java.lang.Integer).
type jmap struct {
	table   int
	entries []jentry
}

type jentry struct {
	key   any
	value any
}

// newJMap is new HashMap<>(capacity); 0 means the default, 16.
func newJMap(capacity int) *jmap {
	table := 16
	if capacity > 0 {
		table = 1
		for table < capacity {
			table <<= 1
		}
	}
	return &jmap{table: table}
}

// put adds or replaces, as HashMap.put, and returns m.
func (m *jmap) put(key, value any) *jmap {
	for i := range m.entries {
		if m.entries[i].key == key {
			m.entries[i].value = value
			return m
		}
	}
	m.entries = append(m.entries, jentry{key, value})
	for len(m.entries) > m.table*3/4 {
		m.table *= 2
	}
	return m
}

// ordered returns the entries in iteration order. A resize splits each bucket
// keeping its order, so bucket then insertion order is the iteration order.
func (m *jmap) ordered() []jentry {
	out := slices.Clone(m.entries)
	sort.SliceStable(out, func(i, j int) bool { return m.bucket(out[i].key) < m.bucket(out[j].key) })
	return out
}

func (m *jmap) bucket(key any) int {
	h := javaHash(key)
	h ^= int32(uint32(h) >> 16) // HashMap.hash
	return int(uint32(h) & uint32(m.table-1))
}

// javaHash is String.hashCode (over UTF-16 code units) or Integer.hashCode.
func javaHash(key any) int32 {
	switch k := key.(type) {
	case int:
		return int32(k)
	case string:
		var h int32
		for _, r := range k {
			if r >= 0x10000 {
				hi, lo := utf16Pair(r)
				h = 31*h + int32(hi)
				h = 31*h + int32(lo)
				continue
			}
			h = 31*h + int32(r)
		}
		return h
	}
	panic(fmt.Sprintf("no Java hash for %T", key))
}

func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// smartJSON writes v as json-smart's JSONValue.toJSONString does.
func smartJSON(v any) string {
	var b strings.Builder
	writeSmart(&b, v)
	return b.String()
}

func writeSmart(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeSmartString(b, v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case json.Number: // a number parsed from a child: Integer and Long print as they read
		b.WriteString(v.String())
	case *jmap:
		b.WriteByte('{')
		for i, e := range v.ordered() {
			if i > 0 {
				b.WriteByte(',')
			}
			key, ok := e.key.(string)
			if !ok {
				key = strconv.Itoa(e.key.(int))
			}
			writeSmartString(b, key)
			b.WriteByte(':')
			writeSmart(b, e.value)
		}
		b.WriteByte('}')
	case map[string]any: // a JSON object parsed from a child: json-smart's JSONObject
		m := newJMap(0)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			m.put(k, v[k])
		}
		writeSmart(b, m)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeSmart(b, e)
		}
		b.WriteByte(']')
	case []string:
		writeSmart(b, anySlice(v))
	case []int:
		writeSmart(b, anySlice(v))
	default:
		panic(fmt.Sprintf("smartJSON: %T", v))
	}
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// writeSmartString is json-smart's ESCAPE4Web, which NO_COMPRESS uses.
func writeSmartString(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '/':
			b.WriteString(`\/`)
		case r <= 0x1F, r >= 0x7F && r <= 0x9F, r >= 0x2000 && r <= 0x20FF:
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xF])
			b.WriteByte(hex[r>>8&0xF])
			b.WriteByte(hex[r>>4&0xF])
			b.WriteByte(hex[r&0xF])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// ---- JsonSerializer's reading ----

// errBrokenPipe is what Storm reports when the child's stdout ends.
var errBrokenPipe = errors.New("Pipe to subprocess seems to be broken!")

// readStormMessage reads one message as JsonSerializer.readString does:
// lines as BufferedReader.readLine splits them, up to a line "end", joined
// with "\n"; then parses it (json-smart's numbers kept as json.Number).
func readStormMessage(r *bufio.Reader) (any, string, error) {
	var lines []string
	for {
		line, err := readJavaLine(r)
		if err != nil {
			return nil, strings.Join(lines, "\n"), errBrokenPipe
		}
		if line == "end" {
			break
		}
		lines = append(lines, line)
	}
	text := strings.Join(lines, "\n")
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, text, fmt.Errorf("json-smart cannot parse %q: %w", text, err)
	}
	if dec.More() {
		return nil, text, fmt.Errorf("data after the JSON value in %q", text)
	}
	return v, text, nil
}

// readJavaLine is BufferedReader.readLine: a line ends at \n, \r or \r\n.
func readJavaLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				return string(b), nil
			}
			return "", err
		}
		switch c {
		case '\n':
			return string(b), nil
		case '\r':
			if next, err := r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.ReadByte()
			}
			return string(b), nil
		}
		b = append(b, c)
	}
}

// shellMsg is a child's message after JsonSerializer.readShellMsg.
type shellMsg struct {
	Command     string
	ID          any // as parsed: a string, a json.Number or nil
	Msg         string
	Stream      string
	Task        int
	NeedTaskIDs bool
	Tuple       []any
	Anchors     []string
	Name        string
	Level       int
	Text        string // the message as read
}

// toShellMsg applies readShellMsg's casts; an error is the exception Storm
// would throw (and die of).
func toShellMsg(v any, text string) (*shellMsg, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ClassCastException: %q is not a JSONObject", text)
	}
	m := &shellMsg{Stream: "default", NeedTaskIDs: true, Level: 2, Text: text, ID: obj["id"]}
	str := func(key string, dst *string) error {
		if raw, ok := obj[key]; ok && raw != nil {
			s, ok := raw.(string)
			if !ok {
				return fmt.Errorf("ClassCastException: %q of %q is not a String", key, text)
			}
			*dst = s
		}
		return nil
	}
	if err := errors.Join(str("command", &m.Command), str("msg", &m.Msg), str("stream", &m.Stream)); err != nil {
		return nil, err
	}
	if m.Command == "" {
		return nil, fmt.Errorf("Command not found in message: %q", text)
	}
	if raw, ok := obj["task"]; ok && raw != nil {
		n, ok := raw.(json.Number)
		task, err := strconv.ParseInt(string(n), 10, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("ClassCastException: \"task\" of %q is not a whole number", text)
		}
		m.Task = int(task)
	}
	if raw, ok := obj["need_task_ids"]; ok && raw != nil {
		need, ok := raw.(bool)
		if !ok {
			return nil, fmt.Errorf("ClassCastException: \"need_task_ids\" of %q is not a Boolean", text)
		}
		m.NeedTaskIDs = need
	}
	if raw, ok := obj["tuple"]; ok && raw != nil {
		if m.Tuple, ok = raw.([]any); !ok {
			return nil, fmt.Errorf("ClassCastException: \"tuple\" of %q is not a List", text)
		}
	}
	switch a := obj["anchors"].(type) {
	case nil:
	case string:
		m.Anchors = []string{a}
	case []any:
		for _, x := range a {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("ClassCastException: an anchor of %q is not a String", text)
			}
			m.Anchors = append(m.Anchors, s)
		}
	default:
		return nil, fmt.Errorf("ClassCastException: \"anchors\" of %q is neither a String nor a List", text)
	}
	m.Name, _ = obj["name"].(string)
	if n, ok := obj["level"].(json.Number); ok && m.Command == "log" {
		if l, err := n.Int64(); err == nil {
			m.Level = int(l)
		}
	}
	return m, nil
}

// ---- the Flux definition, and the topology Storm builds from it ----

type stormFluxDef struct {
	Name    string               `yaml:"name"`
	Config  map[string]any       `yaml:"config"`
	Spouts  []stormFluxComponent `yaml:"spouts"`
	Bolts   []stormFluxComponent `yaml:"bolts"`
	Streams []struct {
		From     string `yaml:"from"`
		To       string `yaml:"to"`
		Grouping struct {
			Type     string   `yaml:"type"`
			StreamID string   `yaml:"streamId"`
			Args     []string `yaml:"args"`
		} `yaml:"grouping"`
	} `yaml:"streams"`
}

type stormFluxComponent struct {
	ID              string     `yaml:"id"`
	ClassName       string     `yaml:"className"`
	ConstructorArgs [][]string `yaml:"constructorArgs"`
	ConfigMethods   []struct {
		Name string `yaml:"name"`
		Args []any  `yaml:"args"`
	} `yaml:"configMethods"`
	Parallelism int            `yaml:"parallelism"`
	NumTasks    int            `yaml:"numTasks"`
	Config      map[string]any `yaml:"config"`
}

// stormComponent is a component of the topology Storm runs: its command,
// tasks, conf and declared streams (system streams included).
type stormComponent struct {
	id      string
	spout   bool
	command []string
	tasks   []int
	conf    map[string]any
	streams []string            // declaration order: the user's, then Storm's
	fields  map[string][]string // stream -> output fields
	direct  map[string]bool     // streams declared direct
}

// stormSubscription is one input of a bolt.
type stormSubscription struct {
	from, stream, to string
	grouping         string
	fields           []string
}

type stormTopology struct {
	name       string
	conf       map[string]any
	components map[string]*stormComponent
	subs       []stormSubscription
	taskComp   map[int]string
}

const (
	stormAcker  = "__acker"
	stormSystem = "__system"
)

// parseStormTopology builds, from a Flux definition, the topology Storm would
// run: what Flux's FluxShellSpout and FluxShellBolt declare, plus the acker
// and system components and streams Storm adds (StormCommon), with Storm's
// task numbering (components in id order, "__acker" among them).
func parseStormTopology(yamlText []byte) *stormTopology {
	GinkgoHelper()
	var def stormFluxDef
	Expect(yaml.Unmarshal(yamlText, &def)).To(Succeed())
	t := &stormTopology{name: def.Name, conf: def.Config, components: map[string]*stormComponent{}, taskComp: map[int]string{}}
	add := func(fc stormFluxComponent, spout bool) {
		wantClass := "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
		if spout {
			wantClass = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
		}
		Expect(fc.ClassName).To(Equal(wantClass), "component %q", fc.ID)
		Expect(fc.ConstructorArgs).To(HaveLen(1), "component %q: FluxShell* take the command", fc.ID)
		c := &stormComponent{id: fc.ID, spout: spout, command: fc.ConstructorArgs[0], conf: fc.Config,
			fields: map[string][]string{}, direct: map[string]bool{}}
		for _, m := range fc.ConfigMethods {
			Expect(m.Name).To(Equal("setNamedStream"), "component %q calls %q", fc.ID, m.Name)
			Expect(m.Args).To(HaveLen(2))
			name, ok := m.Args[0].(string)
			Expect(ok).To(BeTrue(), "setNamedStream(String, String[])")
			var fields []string
			for _, f := range m.Args[1].([]any) {
				fields = append(fields, f.(string))
			}
			c.streams = append(c.streams, name)
			c.fields[name] = fields
		}
		tasks := fc.NumTasks
		if tasks <= 0 {
			tasks = max(fc.Parallelism, 1)
		}
		c.tasks = make([]int, tasks)
		t.components[fc.ID] = c
	}
	for _, s := range def.Spouts {
		add(s, true)
	}
	for _, b := range def.Bolts {
		add(b, false)
	}
	for _, s := range def.Streams {
		sub := stormSubscription{from: s.From, stream: s.Grouping.StreamID, to: s.To, grouping: s.Grouping.Type, fields: s.Grouping.Args}
		if sub.stream == "" {
			sub.stream = "default"
		}
		from := t.components[s.From]
		Expect(from).NotTo(BeNil(), "stream from unknown component %q", s.From)
		Expect(from.fields).To(HaveKey(sub.stream), "%q subscribes to stream %q of %q, which %q does not declare: Storm refuses the topology", s.To, sub.stream, s.From, s.From)
		Expect(t.components).To(HaveKey(s.To))
		t.subs = append(t.subs, sub)
	}
	// Storm's additions (StormCommon.addAcker, addMetricStreams, addSystemStreams).
	ackers := 1
	if n, ok := def.Config["topology.acker.executors"].(int); ok {
		ackers = n
	} else if n, ok := def.Config["topology.workers"].(int); ok {
		ackers = n
	}
	acker := &stormComponent{id: stormAcker, tasks: make([]int, ackers), fields: map[string][]string{}, direct: map[string]bool{}}
	for _, s := range []string{"__ack_ack", "__ack_fail", "__ack_reset_timeout"} {
		acker.streams = append(acker.streams, s)
		acker.fields[s] = []string{"id", "time-delta-ms"}
		acker.direct[s] = true
	}
	t.components[stormAcker] = acker
	t.components[stormSystem] = &stormComponent{id: stormSystem, fields: map[string][]string{"__tick": {"rate_secs"}}, streams: []string{"__tick"}, direct: map[string]bool{}}
	for _, c := range t.components {
		if c.id == stormSystem {
			continue
		}
		extra := [][2]any{{"__metrics", []string{"task-info", "data-points"}}, {"__system", []string{"event"}}}
		if c.spout {
			extra = append(extra, [2]any{"__ack_init", []string{"id", "init-val", "spout-task"}})
			for _, s := range acker.streams {
				t.subs = append(t.subs, stormSubscription{from: stormAcker, stream: s, to: c.id, grouping: "DIRECT"})
			}
			t.subs = append(t.subs, stormSubscription{from: c.id, stream: "__ack_init", to: stormAcker, grouping: "FIELDS", fields: []string{"id"}})
		} else if c.id != stormAcker {
			extra = append(extra, [2]any{"__ack_ack", []string{"id", "ack-val"}}, [2]any{"__ack_fail", []string{"id"}}, [2]any{"__ack_reset_timeout", []string{"id"}})
			for _, s := range []string{"__ack_ack", "__ack_fail", "__ack_reset_timeout"} {
				t.subs = append(t.subs, stormSubscription{from: c.id, stream: s, to: stormAcker, grouping: "FIELDS", fields: []string{"id"}})
			}
		}
		for _, e := range extra {
			c.streams = append(c.streams, e[0].(string))
			c.fields[e[0].(string)] = e[1].([]string)
		}
	}
	for _, s := range t.subs {
		if s.grouping == "DIRECT" {
			t.components[s.from].direct[s.stream] = true
		}
	}
	next := 1 // StormCommon.stormTaskInfo: a TreeMap of component ids
	for _, id := range slices.Sorted(maps.Keys(t.components)) {
		c := t.components[id]
		for i := range c.tasks {
			c.tasks[i] = next
			t.taskComp[next] = id
			next++
		}
	}
	return t
}

// streamsMap is a component's streams as a worker holds them: a HashMap
// deserialized by thrift, new HashMap<>(2*size).
func (c *stormComponent) streamsMap() *jmap {
	m := newJMap(2 * len(c.streams))
	for _, s := range c.streams {
		m.put(s, nil)
	}
	return m
}

func grouping(s stormSubscription) *jmap {
	g := newJMap(0).put("type", s.grouping)
	if s.grouping == "FIELDS" {
		g.put("fields", anySlice(s.fields))
	}
	return g
}

// context is TopologyContext.toJSONString for task of component id.
func (t *stormTopology) context(id string, task int) *jmap {
	c := t.components[id]
	taskToComponent := newJMap(0)
	for _, n := range slices.Sorted(maps.Keys(t.taskComp)) {
		taskToComponent.put(n, t.taskComp[n])
	}
	var streams []any
	outputFields := newJMap(0)
	for _, e := range c.streamsMap().ordered() {
		streams = append(streams, e.key)
		outputFields.put(e.key, anySlice(c.fields[e.key.(string)]))
	}
	targets, sources, inputFields := newJMap(0), newJMap(0), newJMap(0)
	for _, s := range t.subs {
		if s.from == id {
			m, ok := lookup(targets, s.stream)
			if !ok {
				m = newJMap(0)
				targets.put(s.stream, m)
			}
			m.put(s.to, grouping(s))
		}
		if s.to == id {
			m, ok := lookup(sources, s.from)
			if !ok {
				m = newJMap(0)
				sources.put(s.from, m)
			}
			m.put(s.stream, grouping(s))
			from := t.components[s.from]
			fields := newJMap(0)
			for _, e := range from.streamsMap().ordered() {
				fields.put(e.key, anySlice(from.fields[e.key.(string)]))
			}
			inputFields.put(s.from, fields)
		}
	}
	return newJMap(0).
		put("task->component", taskToComponent).
		put("taskid", task).
		put("componentid", id).
		put("streams", streams).
		put("stream->outputfields", outputFields).
		put("stream->target->grouping", targets).
		put("source->stream->grouping", sources).
		put("source->stream->fields", inputFields)
}

func lookup(m *jmap, key any) (*jmap, bool) {
	for _, e := range m.entries {
		if e.key == key {
			return e.value.(*jmap), true
		}
	}
	return nil, false
}

// stormConf is the conf a shell component gets: the topology conf (Flux's
// config over some of Storm's defaults) merged with the component's.
func (t *stormTopology) stormConf(id string) *jmap {
	conf := newJMap(0).
		put("topology.name", t.name).
		put("storm.id", t.name+"-1-1700000000").
		put("topology.multilang.serializer", "org.apache.storm.multilang.JsonSerializer").
		put("topology.shellbolt.max.pending", 100).
		put("topology.debug", false).
		put("supervisor.worker.timeout.secs", 30)
	for _, layer := range []map[string]any{t.conf, t.components[id].conf} {
		for _, k := range slices.Sorted(maps.Keys(layer)) {
			conf.put(k, layer[k])
		}
	}
	return conf
}

// ---- the cluster: shell processes, routing, acking ----

// stormCluster runs every task of a topology as Storm's shell components
// would, routes their emits with Storm's groupings and acks their trees.
type stormCluster struct {
	topo    *stormTopology
	codeDir string
	pidDir  string

	mu       sync.Mutex // mu guards every field below and the state of the tasks
	rng      *rand.Rand
	spouts   map[int]*stormSpout
	bolts    map[int]*stormBolt
	trees    map[int64]*stormTree
	outcomes []spoutOutcome // acks and fails the spout tasks are still to get
	given    []spoutOutcome // acks and fails the spout tasks got
	problems []string       // what would have killed a Storm worker
	emits    []stormEmit
	reported []string // "error" commands
	logs     []string // "log" commands
	shuffle  map[string]int
	changed  chan struct{}
}

// stormTree is a spout message's tuple tree, tracked as Storm's acker does.
type stormTree struct {
	spout int
	msgID any
	xor   int64
}

type spoutOutcome struct {
	task  int
	msgID any
	acked bool
}

// stormEmit is an emit a child made, as Storm understood it.
type stormEmit struct {
	comp    string
	task    int
	stream  string
	values  []any
	anchors []string
	direct  int
	msgID   any
}

// stormTuple is an input a bolt task was given: its trees (root -> edge).
type stormTuple struct {
	comp   string
	stream string
	values []any
	trees  map[int64]int64
}

func newStormCluster(topo *stormTopology, codeDir string) *stormCluster {
	GinkgoHelper()
	c := &stormCluster{topo: topo, codeDir: codeDir, pidDir: GinkgoT().TempDir(), rng: rand.New(rand.NewPCG(13, 13)),
		spouts: map[int]*stormSpout{}, bolts: map[int]*stormBolt{}, trees: map[int64]*stormTree{},
		shuffle: map[string]int{}, changed: make(chan struct{}, 1)}
	for _, id := range slices.Sorted(maps.Keys(topo.components)) {
		comp := topo.components[id]
		if id == stormAcker || id == stormSystem {
			continue
		}
		for _, task := range comp.tasks {
			p := c.launch(comp, task)
			if comp.spout {
				c.spouts[task] = &stormSpout{stormProcess: p, cluster: c}
			} else {
				b := &stormBolt{stormProcess: p, cluster: c, inputs: map[string]*stormTuple{}, queue: newWriteQueue()}
				c.bolts[task] = b
				b.wg.Add(2)
				go b.readLoop()
				go b.writeLoop()
			}
		}
	}
	return c
}

// stormProcess is ShellProcess: a child in the code directory, spoken to
// with JsonSerializer.
type stormProcess struct {
	comp   *stormComponent
	task   int
	cmd    *exec.Cmd
	stdin  *bufio.Writer
	closer io.Closer
	stdout *bufio.Reader
	stderr *lockedBuffer
	pid    int
	wmu    sync.Mutex // wmu guards stdin
	msgs   chan readResult
	wg     sync.WaitGroup
}

type readResult struct {
	msg *shellMsg
	err error
}

type lockedBuffer struct {
	mu sync.Mutex // mu guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// launch is ShellProcess.launch: start the command in the code directory,
// send the handshake, read the pid.
func (c *stormCluster) launch(comp *stormComponent, task int) *stormProcess {
	GinkgoHelper()
	cmd := exec.Command(comp.command[0], comp.command[1:]...)
	cmd.Dir = c.codeDir
	p := &stormProcess{comp: comp, task: task, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed(), "starting %v", comp.command)
	p.stdin, p.closer, p.stdout = bufio.NewWriter(in), in, bufio.NewReader(out)
	p.write(newJMap(0).put("pidDir", c.pidDir).put("conf", c.topo.stormConf(comp.id)).put("context", c.topo.context(comp.id, task)))
	v, text, err := readStormMessage(p.stdout)
	Expect(err).NotTo(HaveOccurred(), "the handshake answer of %s: %s", p, p.stderr)
	obj, _ := v.(map[string]any)
	pid, ok := obj["pid"].(json.Number)
	Expect(ok).To(BeTrue(), "%s answered the handshake with %s, not a pid first (Storm reads only the pid)", p, text)
	n, err := pid.Int64()
	Expect(err).NotTo(HaveOccurred())
	p.pid = int(n)
	Expect(p.pid).To(Equal(cmd.Process.Pid), "%s reported another pid", p)
	Eventually(filepath.Join(c.pidDir, strconv.Itoa(p.pid))).Should(BeAnExistingFile(), "%s made no pid file", p)
	p.msgs = make(chan readResult, 1024)
	p.wg.Add(1)
	go p.readMessages()
	return p
}

func (p *stormProcess) String() string {
	return fmt.Sprintf("%s task %d (%v)", p.comp.id, p.task, p.comp.command)
}

// write sends one message as JsonSerializer.writeMessage: JSON, "\nend\n", flush.
func (p *stormProcess) write(v any) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = p.stdin.WriteString(smartJSON(v))
	_, _ = p.stdin.WriteString("\nend\n")
	_ = p.stdin.Flush()
}

// readMessages reads the child's messages until its stdout ends.
func (p *stormProcess) readMessages() {
	defer p.wg.Done()
	defer close(p.msgs)
	for {
		v, text, err := readStormMessage(p.stdout)
		if err != nil {
			p.msgs <- readResult{err: err}
			return
		}
		m, err := toShellMsg(v, text)
		p.msgs <- readResult{msg: m, err: err}
	}
}

// destroy is ShellProcess.destroy (Process.destroy: SIGTERM), then the wait
// for the process and its goroutines; it returns how the process ended.
func (p *stormProcess) destroy() string {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(Scaled(5 * time.Second)):
		_ = p.cmd.Process.Kill()
		err = <-done
	}
	_ = p.closer.Close()
	p.wg.Wait()
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// problem records what would have killed a Storm worker.
func (c *stormCluster) problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// notify wakes await; callers hold mu.
func (c *stormCluster) notify() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *stormCluster) randomID() int64 { return int64(c.rng.Uint64()) }

// route picks the tasks a tuple of comp on stream goes to, by Storm's
// groupings; direct is the task of a direct emit. Callers hold mu.
func (c *stormCluster) route(comp *stormComponent, task int, stream string, values []any, direct int) []int {
	fields, declared := comp.fields[stream]
	if !declared {
		c.problem("%s task %d emitted on stream %q, which it did not declare (Storm: \"Unknown stream ID\")", comp.id, task, stream)
		return nil
	}
	if len(values) != len(fields) {
		c.problem("%s task %d emitted %d values on stream %q, which declares the fields %v", comp.id, task, len(values), stream, fields)
		return nil
	}
	if (direct != 0) != comp.direct[stream] {
		c.problem("%s task %d: a direct emit (task %d) must be on a direct stream and only there; %q is direct: %v", comp.id, task, direct, stream, comp.direct[stream])
		return nil
	}
	var out []int
	for _, s := range c.topo.subs {
		if s.from != comp.id || s.stream != stream || s.to == stormAcker {
			continue
		}
		tasks := c.topo.components[s.to].tasks
		switch s.grouping {
		case "DIRECT":
			if slices.Contains(tasks, direct) {
				out = append(out, direct)
			}
		case "ALL":
			out = append(out, tasks...)
		case "GLOBAL":
			out = append(out, tasks[0])
		case "FIELDS":
			var key []any
			for _, f := range s.fields {
				key = append(key, values[slices.Index(fields, f)])
			}
			out = append(out, tasks[floorMod(javaListHash(key), len(tasks))])
		default: // SHUFFLE, LOCAL_OR_SHUFFLE, NONE
			k := fmt.Sprint(task, stream, s.to)
			out = append(out, tasks[c.shuffle[k]%len(tasks)])
			c.shuffle[k]++
		}
	}
	if direct != 0 && !slices.Contains(out, direct) {
		c.problem("%s task %d emitted directly to task %d, which does not subscribe to %q", comp.id, task, direct, stream)
	}
	return out
}

func floorMod(h int32, n int) int { return int(((int64(h) % int64(n)) + int64(n)) % int64(n)) }

// javaListHash is List.hashCode of Strings and Integers.
func javaListHash(values []any) int32 {
	h := int32(1)
	for _, v := range values {
		var e int32
		switch v := v.(type) {
		case string:
			e = javaHash(v)
		case json.Number:
			n, _ := v.Int64()
			e = int32(n ^ int64(uint64(n)>>32))
		}
		h = 31*h + e
	}
	return h
}

// deliver hands a tuple to bolt task to (ShellBolt.execute). Callers hold mu.
func (c *stormCluster) deliver(to int, t *stormTuple, fromTask int) {
	b := c.bolts[to]
	id := strconv.FormatInt(c.randomID(), 10)
	b.inputs[id] = t
	b.queue.push(boltMsg(id, t.comp, t.stream, fromTask, t.values))
}

// boltMsg is JsonSerializer.writeBoltMsg's object.
func boltMsg(id string, comp any, stream string, task int, values []any) *jmap {
	return newJMap(0).put("id", id).put("comp", comp).put("stream", stream).put("task", task).put("tuple", values)
}

// settle applies an ack or fail of a tuple to its trees. Callers hold mu.
func (c *stormCluster) settle(t *stormTuple, acked bool) {
	for root, edge := range t.trees {
		tree := c.trees[root]
		if tree == nil {
			continue // failed already
		}
		if !acked {
			delete(c.trees, root)
			c.outcomes = append(c.outcomes, spoutOutcome{tree.spout, tree.msgID, false})
			continue
		}
		tree.xor ^= edge
		c.complete(root)
	}
}

// complete acks a tree whose edges were all acked. Callers hold mu.
func (c *stormCluster) complete(root int64) {
	if tree := c.trees[root]; tree != nil && tree.xor == 0 {
		delete(c.trees, root)
		c.outcomes = append(c.outcomes, spoutOutcome{tree.spout, tree.msgID, true})
	}
}

// stormBolt is ShellBolt: a reader and a writer goroutine, inputs by id.
type stormBolt struct {
	*stormProcess
	cluster    *stormCluster
	inputs     map[string]*stormTuple // guarded by the cluster's mu
	queue      *writeQueue
	heartbeats int // syncs received; guarded by the cluster's mu
	died       error
}

// readLoop is BoltReaderRunnable.
func (b *stormBolt) readLoop() {
	defer b.wg.Done()
	for r := range b.msgs {
		c := b.cluster
		c.mu.Lock()
		if r.err != nil {
			if !errors.Is(r.err, errBrokenPipe) || b.died == nil {
				b.died = r.err
			}
			c.notify()
			c.mu.Unlock()
			continue
		}
		b.handle(r.msg)
		c.notify()
		c.mu.Unlock()
	}
}

// handle is what ShellBolt does with each message; callers hold mu.
func (b *stormBolt) handle(m *shellMsg) {
	c := b.cluster
	switch m.Command {
	case "ack", "fail":
		id, _ := m.ID.(string)
		in, ok := b.inputs[id]
		if !ok {
			c.problem("%s: %s of %v, which is not pending (Storm: \"Acked a non-existent or already acked/failed id\")", b, m.Command, m.ID)
			return
		}
		delete(b.inputs, id)
		c.settle(in, m.Command == "ack")
	case "emit":
		trees := map[int64]bool{}
		for _, a := range m.Anchors {
			in, ok := b.inputs[a]
			if !ok {
				c.problem("%s anchored onto %q after ack/fail", b, a)
				return
			}
			for root := range in.trees {
				trees[root] = true
			}
		}
		c.emits = append(c.emits, stormEmit{comp: b.comp.id, task: b.task, stream: m.Stream, values: m.Tuple, anchors: m.Anchors, direct: m.Task})
		tasks := c.route(b.comp, b.task, m.Stream, m.Tuple, m.Task)
		for _, to := range tasks {
			t := &stormTuple{comp: b.comp.id, stream: m.Stream, values: m.Tuple, trees: map[int64]int64{}}
			for root := range trees {
				if tree := c.trees[root]; tree != nil { // else failed already
					edge := c.randomID()
					t.trees[root] = edge
					tree.xor ^= edge
				}
			}
			c.deliver(to, t, b.task)
		}
		if m.Task == 0 && m.NeedTaskIDs {
			b.queue.push(anySlice(tasks))
		}
	case "sync":
		b.heartbeats++
	case "log":
		c.logs = append(c.logs, m.Msg)
	case "error":
		c.reported = append(c.reported, m.Msg)
	case "metrics":
		c.problem("%s sent metrics %q, which no Java ShellBolt subclass registered (Storm: \"Could not find metric by name\")", b, m.Name)
	}
}

// heartbeat queues a heartbeat as BoltWriterRunnable writes it.
func (b *stormBolt) heartbeat() {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	b.queue.push(boltMsg(strconv.FormatInt(c.randomID(), 10), nil, "__heartbeat", -1, []any{}))
}

// tick executes a tick tuple, as the executor gives it to ShellBolt.execute.
func (b *stormBolt) tick(rateSecs int) {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliver(b.task, &stormTuple{comp: stormSystem, stream: "__tick", values: []any{rateSecs}}, -1)
}

// writeLoop is BoltWriterRunnable over an unbounded ShellBoltMessageQueue.
func (b *stormBolt) writeLoop() {
	defer b.wg.Done()
	for {
		m, ok := b.queue.pop()
		if !ok {
			return
		}
		b.write(m)
	}
}

// writeQueue is an unbounded FIFO with a closing signal.
type writeQueue struct {
	mu     sync.Mutex // mu guards items and closed
	items  []any
	closed bool
	ready  chan struct{}
}

func newWriteQueue() *writeQueue { return &writeQueue{ready: make(chan struct{}, 1)} }

func (q *writeQueue) push(m any) {
	q.mu.Lock()
	q.items = append(q.items, m)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *writeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *writeQueue) pop() (any, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			m := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return m, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.ready
	}
}

// stormSpout is ShellSpout: every command is written and answered by sync.
type stormSpout struct {
	*stormProcess
	cluster *stormCluster
}

// query is ShellSpout.querySubprocess: write the command, then handle what the
// child sends until it syncs.
func (s *stormSpout) query(command string, id any) {
	GinkgoHelper()
	s.write(newJMap(0).put("command", command).put("id", id))
	timeout := time.After(Scaled(10 * time.Second))
	for {
		var r readResult
		var ok bool
		select {
		case r, ok = <-s.msgs:
		case <-timeout:
			Fail(fmt.Sprintf("%s did not sync after %q", s, command))
		}
		Expect(ok).To(BeTrue(), "%s ended: %s", s, s.stderr)
		Expect(r.err).NotTo(HaveOccurred(), "%s after %q: %s", s, command, s.stderr)
		c := s.cluster
		c.mu.Lock()
		switch r.msg.Command {
		case "sync":
			c.mu.Unlock()
			return
		case "emit":
			s.emit(r.msg)
		case "log":
			c.logs = append(c.logs, r.msg.Msg)
		case "error":
			c.reported = append(c.reported, r.msg.Msg)
		default:
			c.problem("%s sent %q (Storm: \"Unknown command received\")", s, r.msg.Command)
		}
		c.notify()
		c.mu.Unlock()
	}
}

// emit is the spout's emit: collector.emit(stream, tuple, messageId), or
// emitDirect; task ids go back at once when wanted. Callers hold mu.
func (s *stormSpout) emit(m *shellMsg) {
	c := s.cluster
	c.emits = append(c.emits, stormEmit{comp: s.comp.id, task: s.task, stream: m.Stream, values: m.Tuple, direct: m.Task, msgID: m.ID})
	tasks := c.route(s.comp, s.task, m.Stream, m.Tuple, m.Task)
	var root int64
	if m.ID != nil {
		root = c.randomID()
		c.trees[root] = &stormTree{spout: s.task, msgID: m.ID}
	}
	for _, to := range tasks {
		t := &stormTuple{comp: s.comp.id, stream: m.Stream, values: m.Tuple, trees: map[int64]int64{}}
		if root != 0 {
			edge := c.randomID()
			t.trees[root] = edge
			c.trees[root].xor ^= edge
		}
		c.deliver(to, t, s.task)
	}
	if root != 0 {
		c.complete(root) // no subscriber: acked at once
	}
	if m.Task == 0 && m.NeedTaskIDs {
		s.write(anySlice(tasks))
	}
}

// await waits until cond holds (checked under mu), meanwhile giving the spout
// tasks the acks and fails of their completed trees.
func (c *stormCluster) await(what string, cond func() bool) {
	GinkgoHelper()
	timeout := time.After(Scaled(10 * time.Second))
	for {
		c.mu.Lock()
		outcomes := c.outcomes
		c.outcomes = nil
		done := len(outcomes) == 0 && cond()
		c.mu.Unlock()
		c.mu.Lock()
		c.given = append(c.given, outcomes...)
		c.mu.Unlock()
		for _, o := range outcomes {
			command := "fail"
			if o.acked {
				command = "ack"
			}
			c.spouts[o.task].query(command, o.msgID)
		}
		if done {
			return
		}
		if len(outcomes) > 0 {
			continue
		}
		select {
		case <-c.changed:
		case <-timeout:
			c.mu.Lock()
			defer c.mu.Unlock()
			Fail(fmt.Sprintf("timed out waiting until %s; problems %v; open trees %d; open inputs %d; stderr:\n%s", what, c.problems, len(c.trees), c.openInputs(), c.stderrs()))
		}
	}
}

// openInputs counts the inputs no bolt settled. Callers hold mu.
func (c *stormCluster) openInputs() int {
	n := 0
	for _, b := range c.bolts {
		n += len(b.inputs)
	}
	return n
}

func (c *stormCluster) stderrs() string {
	var b strings.Builder
	for _, task := range slices.Sorted(maps.Keys(c.bolts)) {
		fmt.Fprintf(&b, "%s: %s\n", c.bolts[task], c.bolts[task].stderr)
	}
	for _, task := range slices.Sorted(maps.Keys(c.spouts)) {
		fmt.Fprintf(&b, "%s: %s\n", c.spouts[task], c.spouts[task].stderr)
	}
	return b.String()
}

// settled waits until every tree is acked back and every input settled, and
// checks that nothing would have killed a Storm worker.
func (c *stormCluster) settled() {
	GinkgoHelper()
	c.await("every tree is acked and every input settled", func() bool { return len(c.trees) == 0 && c.openInputs() == 0 })
	c.expectNoProblems()
}

func (c *stormCluster) expectNoProblems() {
	GinkgoHelper()
	c.mu.Lock()
	defer c.mu.Unlock()
	Expect(c.problems).To(BeEmpty())
	for _, b := range c.bolts {
		Expect(b.died).NotTo(HaveOccurred(), "%s: %s", b, b.stderr)
	}
}

// emitsOf returns the emits of component comp so far.
func (c *stormCluster) emitsOf(comp string) []stormEmit {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []stormEmit
	for _, e := range c.emits {
		if e.comp == comp {
			out = append(out, e)
		}
	}
	return out
}

// shutdown destroys every process, as the worker's cleanup does, and joins
// the goroutines.
func (c *stormCluster) shutdown() {
	for _, s := range c.spouts {
		s.destroy()
	}
	for _, b := range c.bolts {
		b.queue.close()
		b.destroy()
	}
}

// codeDir lays out a jar's resources/ directory: the binary and the scripts,
// the binary made executable (a jar keeps no execute bit).
func codeDir(binary string, scripts ...string) string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "resources")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	copyFile := func(src string, mode os.FileMode) {
		data, err := os.ReadFile(src)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, mode)).To(Succeed())
	}
	copyFile(binary, 0o755)
	for _, s := range scripts {
		copyFile(s, 0o644)
	}
	return dir
}
