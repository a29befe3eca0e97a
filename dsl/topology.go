package dsl

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Component is a validated spout or bolt of a built [Topology]. Read-only.
//
// Task ids are numbered as goshelter runs them: from 1, component by component
// in the order of their ids (byte order), each component's tasks in a row, then
// the ackers ([Topology.AckerTasks]). Storm numbers its own cluster differently
// (its acker sorts first), so ids are only meaningful within one runtime.
type Component struct {
	Index       int // position in Topology.Components
	ID          string
	Parallelism int
	// Tasks are the component's task ids, ascending (Storm's getComponentTasks).
	Tasks    []int
	Conf     Conf     // the component's own conf
	Settings Settings // defaults, topology conf, then component conf
	Spout    *SpoutSpec
	Bolt     *BoltSpec
	// Activation and Deactivation are tuples delivered to a bolt's tasks when they
	// are activated and deactivated (nil for none).
	Activation, Deactivation any
	// OutsideCheckpoint is set by [OutsideCheckpoint]: the spout's messages are
	// at-least-once for the states of the topology, and its source is never
	// positioned or rewound.
	OutsideCheckpoint bool
}

// Edge subscribes bolt To to a stream of component From. Read-only.
type Edge struct {
	From, To *Component
	Stream   *Stream
	Grouping Grouping
	// Anchored is the anchoring rule, stated here once for Build and both
	// hosts: a bolt's emits, made while it processes an input delivered on
	// this edge (or anchored explicitly to such an input), join the input's
	// tuple trees when the edge INTO the bolt is anchored (the reference's
	// routing document: "s1 ==> b1 // Anchored: b1's emits are tracked"); the
	// anchoring of the edges out of the bolt plays no part. A reliable spout's
	// emits are tracked on every edge out of it, whatever the edge's
	// anchoring, as in Storm and FsShelter: anchoring is about bolts.
	Anchored bool
}

// Topology is a validated topology. Build it with [New] and [Builder.Build]; it is
// read-only and may be run any number of times.
type Topology struct {
	Name       string
	Conf       Conf
	Settings   Settings // defaults and topology conf
	Streams    []*Stream
	Components []*Component
	Edges      []*Edge
	// AckerTasks are the acker task ids, after every component's.
	AckerTasks []int
	// Warnings are what Build found suspicious but not invalid, such as a
	// "topology." or "goshelter." conf key that neither goshelter nor Storm
	// knows (named with the closest known key: a typo must not pass
	// silently). supervision.Run logs each at warn level as it starts.
	Warnings []string
}

// Component returns the component called id, or nil.
func (t *Topology) Component(id string) *Component {
	for _, c := range t.Components {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// streamOf returns the stream whose Go type is typ, or nil.
func (t *Topology) streamOf(typ reflect.Type) *Stream {
	for _, s := range t.Streams {
		if s.Type == typ {
			return s
		}
	}
	return nil
}

// Option configures a component.
type Option interface{ apply(*componentDef) }

type optionFunc func(*componentDef)

func (f optionFunc) apply(c *componentDef) { f(c) }

// maxParallelism bounds the tasks of one component: each is an actor with its
// own mailbox, so millions would exhaust memory before they did any work.
const maxParallelism = 4096

// Parallelism sets how many tasks run the component (default 1, at most 4096).
// Each task runs on an executor (an actor) of its own, so this is also Storm's
// task count: a "topology.tasks" in the conf must equal it, or Build fails.
func Parallelism(n int) Option { return optionFunc(func(c *componentDef) { c.parallelism = n }) }

// WithConf sets component conf that overrides the topology's.
func WithConf(conf Conf) Option {
	return optionFunc(func(c *componentDef) {
		if c.conf == nil {
			c.conf = Conf{}
		}
		for k, v := range conf {
			c.conf[k] = v
		}
	})
}

// OutsideCheckpoint takes a reliable spout out of the checkpoints of a
// topology with state, accepting at-least-once for it. Build refuses a
// reliable spout whose source has no positions (Position and Rewind) in a
// topology with state unless it says so: a message of such a source that a
// committed checkpoint already counted is counted again when the process
// crashes before the spout heard its ack, since nothing rewinds the source to
// the cut. With this option the runtime never calls the source's Position or
// Rewind, and [TaskInfo].Checkpointed is false for its tasks. See
// docs/STATE.md.
func OutsideCheckpoint() Option {
	return optionFunc(func(c *componentDef) { c.outsideCheckpoint = true })
}

// LifecycleTuples delivers activation to each task of a bolt when it is
// activated and deactivation when it is deactivated, as untracked inputs from
// "__system" (FsShelter's activation tuples). Both must be of the bolt's input
// type; nil delivers nothing.
func LifecycleTuples(activation, deactivation any) Option {
	return optionFunc(func(c *componentDef) { c.activation, c.deactivation = activation, deactivation })
}

type componentDef struct {
	id                       string
	outsideCheckpoint        bool
	spoutKind                bool
	parallelism              int
	conf                     Conf
	spout                    *SpoutSpec
	bolt                     *BoltSpec
	activation, deactivation any
}

type edgeDef struct {
	from, to string
	grouping Grouping
	anchored bool
}

// Builder collects a topology definition. Its methods record; [Builder.Build]
// validates everything at once. A Builder is not safe for concurrent use.
type Builder struct {
	name       string
	conf       Conf
	components []*componentDef
	streams    []streamDecl
	edges      []edgeDef
}

// New starts a topology called name with topology-level conf (may be nil).
func New(name string, conf Conf) *Builder {
	return &Builder{name: name, conf: conf}
}

// Streams declares stream types by sample values (for example Odd{}); each stream is
// named after its type.
func (b *Builder) Streams(samples ...any) *Builder {
	for _, s := range samples {
		b.streams = append(b.streams, streamDecl{typ: reflect.TypeOf(s)})
	}
	return b
}

// NamedStream declares a stream type under an explicit stream name.
func (b *Builder) NamedStream(name string, sample any) *Builder {
	b.streams = append(b.streams, streamDecl{name: name, typ: reflect.TypeOf(sample)})
	return b
}

// Spout adds a spout. Its output type is declared as a stream.
func (b *Builder) Spout(id string, spec *SpoutSpec, opts ...Option) string {
	return b.add(&componentDef{id: id, spoutKind: true, spout: spec}, opts)
}

// Bolt adds a bolt.
func (b *Builder) Bolt(id string, spec *BoltSpec, opts ...Option) string {
	return b.add(&componentDef{id: id, bolt: spec}, opts)
}

func (b *Builder) add(c *componentDef, opts []Option) string {
	c.parallelism = 1
	for _, o := range opts {
		o.apply(c)
	}
	b.components = append(b.components, c)
	return c.id
}

// Anchored adds an anchored edge (FsShelter's ==>) from component from to
// bolt to, on the stream of g: to's emits, made while it processes an input
// from this edge (or anchored to one explicitly), join the input's tuple
// trees on every edge out of to, so their failures and timeouts reach the
// spout. Whether the tuples on
// this edge are themselves tracked is decided upstream: a reliable spout's
// always are, a bolt's when its own input came in on an anchored edge. See
// "Anchoring" in the package doc.
func (b *Builder) Anchored(from, to string, g Grouping) {
	b.edges = append(b.edges, edgeDef{from: from, to: to, grouping: g, anchored: true})
}

// Unanchored adds an unanchored edge (FsShelter's -->) from component from to
// bolt to, on the stream of g: to's emits, made while it processes an input
// from this edge, are fire-and-forget, outside the input's trees. The input itself is still
// tracked if its emitter tracks it (a reliable spout's tuples are tracked on
// every edge), so a failure in to still fails it. See "Anchoring" in the
// package doc.
func (b *Builder) Unanchored(from, to string, g Grouping) {
	b.edges = append(b.edges, edgeDef{from: from, to: to, grouping: g})
}

// ValidationError lists every problem found in a topology definition.
type ValidationError struct {
	Topology string
	Problems []string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("dsl: topology %q is invalid:\n  - %s", e.Topology, strings.Join(e.Problems, "\n  - "))
}

// Build validates the definition and returns the topology, or a *ValidationError
// listing every problem.
func (b *Builder) Build() (*Topology, error) {
	v := &validator{b: b, t: &Topology{Name: b.name, Conf: b.conf}, byID: map[string]*Component{}}
	v.settings()
	v.components()
	v.streams()
	v.edges()
	v.inputs()
	v.terminators()
	v.windows()
	v.cycles()
	v.state()
	if len(v.problems) > 0 {
		return nil, &ValidationError{Topology: b.name, Problems: v.problems}
	}
	v.numberTasks() // only now: an absurd parallelism must not be numbered

	return v.t, nil
}

type validator struct {
	b        *Builder
	t        *Topology
	byID     map[string]*Component
	problems []string
}

func (v *validator) problem(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) settings() {
	if p := topologyNameProblem(v.b.name); p != "" {
		v.problem("%s", p)
	}
	s, err := resolve(v.b.conf)
	if err != nil {
		v.problem("topology %v", err)
	}
	v.t.Settings = s
	v.t.Warnings = append(v.t.Warnings, unknownKeys(v.b.conf)...)
}

// componentConf applies c's own conf over the topology's settings. The acker
// keys size the topology's ackers, which no component has: in a component's
// conf they are kept (Storm passes them through) but warned about, and its
// Settings keep the topology's.
func (v *validator) componentConf(c *Component) {
	c.Settings = v.t.Settings
	for _, p := range c.Conf.applyTo(&c.Settings) {
		v.problem("component %q: %s", c.ID, p)
	}
	c.Settings.AckerTasks, c.Settings.AckerExecutors = v.t.Settings.AckerTasks, v.t.Settings.AckerExecutors
	for _, key := range []string{AckerTasks, AckerExecutors} {
		if _, set := c.Conf[key]; set {
			v.t.Warnings = append(v.t.Warnings, fmt.Sprintf("component %q: conf %q has no effect in a component's conf; the ackers are the topology's, sized by its conf", c.ID, key))
		}
	}
	for _, w := range unknownKeys(c.Conf) {
		v.t.Warnings = append(v.t.Warnings, fmt.Sprintf("component %q: %s", c.ID, w))
	}
	v.taskCount(c)
}

// taskCount refuses a Storm task count ("topology.tasks", from the
// component's conf or the topology's, as Storm merges them) that is not the
// component's parallelism: Storm would run that many tasks on parallelism
// executors, while goshelter runs one task per executor, so honouring the
// parallelism alone would silently run another number of tasks than the conf
// asks for. Equal, the key says what goshelter does anyway and is accepted.
func (v *validator) taskCount(c *Component) {
	raw, own := c.Conf[topologyTasks]
	where := "its conf"
	if !own {
		if raw, own = v.b.conf[topologyTasks]; !own {
			return
		}
		where = "the topology's conf"
	}
	n, err := confFields[topologyTasks].number(raw)
	if err != nil || n == int64(c.Parallelism) || c.Parallelism < 1 || c.Parallelism > maxParallelism {
		return // a bad value or parallelism is reported on its own
	}
	v.problem("component %q: conf %q (from %s) is %d but its parallelism is %d: goshelter runs each task on an executor of its own, so the task count is the parallelism; set it with dsl.Parallelism(%d) and drop the key",
		c.ID, topologyTasks, where, n, c.Parallelism, n)
}

func (v *validator) components() {
	for _, d := range v.b.components {
		c := &Component{ID: d.id, Parallelism: d.parallelism, Conf: d.conf,
			Spout: d.spout, Bolt: d.bolt, Activation: d.activation, Deactivation: d.deactivation,
			OutsideCheckpoint: d.outsideCheckpoint}
		v.component(c, d.spoutKind)
		if _, dup := v.byID[d.id]; dup {
			v.problem("component %q is defined more than once", d.id)
			continue
		}
		v.byID[d.id] = c
		c.Index = len(v.t.Components)
		v.t.Components = append(v.t.Components, c)
	}
}

func (v *validator) component(c *Component, spout bool) {
	kind := "bolt"
	if spout {
		kind = "spout"
	}
	if c.ID == "" {
		v.problem("a %s has an empty id", kind)
	} else if p := idProblem("component id", c.ID); p != "" {
		v.problem("%s", p)
	}
	switch {
	case c.Parallelism < 1:
		v.problem("component %q has parallelism %d; it must be at least 1", c.ID, c.Parallelism)
	case c.Parallelism > maxParallelism:
		v.problem("component %q has parallelism %d; it must be at most %d", c.ID, c.Parallelism, maxParallelism)
	}
	if (spout && c.Spout == nil) || (!spout && c.Bolt == nil) {
		v.problem("%s %q has no definition (nil spec)", kind, c.ID)
	}
	v.hooks(c, kind)
	if spout && (c.Activation != nil || c.Deactivation != nil) {
		v.problem("spout %q has an activation or deactivation tuple; only bolts take them", c.ID)
	}
	if !spout && c.OutsideCheckpoint {
		v.problem("bolt %q is declared dsl.OutsideCheckpoint(); only a spout can be taken out of the checkpoints", c.ID)
	}
	if c.Bolt != nil {
		for _, t := range []any{c.Activation, c.Deactivation} {
			if t != nil && !reflect.TypeOf(t).AssignableTo(c.Bolt.Input) {
				v.problem("bolt %q: activation/deactivation tuple of type %T is not its input type %v", c.ID, t, c.Bolt.Input)
			}
		}
	}
	v.componentConf(c)
}

// hooks reports the methods of c's handler or Source type named like an
// optional hook that the runtime would never call.
func (v *validator) hooks(c *Component, kind string) {
	var h hookCheck
	switch {
	case c.Spout != nil:
		h = c.Spout.hooks
	case c.Bolt != nil:
		h = c.Bolt.hooks
	}
	for _, p := range h.problems {
		v.problem("%s %q: %s", kind, c.ID, p)
	}
}

func (v *validator) streams() {
	decls := append([]streamDecl(nil), v.b.streams...)
	for _, c := range v.t.Components {
		if c.Spout != nil {
			decls = append(decls, streamDecl{typ: c.Spout.Output})
		}
	}
	names := map[string]reflect.Type{}
	for _, d := range decls {
		if d.typ == nil {
			v.problem("a stream was declared with a nil sample")
			continue
		}
		if existing := v.t.streamOf(d.typ); existing != nil {
			if d.name != "" && d.name != existing.Name {
				v.problem("stream type %v is declared twice, as %q and %q", d.typ, existing.Name, d.name)
			}
			continue
		}
		fields, err := fieldsOf(d.typ)
		if err != nil {
			v.problem("%v", err)
			continue
		}
		name := d.name
		if name == "" {
			name = d.typ.Name()
		}
		v.streamName(name, d.typ, fields) // kept all the same, so edges on it resolve
		if other, dup := names[name]; dup {
			v.problem("stream name %q is used by both %v and %v", name, other, d.typ)
			continue
		}
		names[name] = d.typ
		v.t.Streams = append(v.t.Streams, &Stream{Index: len(v.t.Streams), Name: name, Type: d.typ, Fields: fields})
	}
}

// streamName reports the problems of a stream's name and field names (see
// names.go).
func (v *validator) streamName(name string, typ reflect.Type, fields []string) {
	if name == "" {
		v.problem("stream type %v has no name (an unnamed struct type): declare it with NamedStream", typ)
	} else if p := idProblem("stream name", name); p != "" {
		v.problem("%s", p)
	}
	for _, f := range fields {
		if p := fieldProblem(name, f); p != "" {
			v.problem("%s", p)
		}
	}
}

func (v *validator) edges() {
	seen := map[string]bool{}
	directness := map[string]bool{} // "from/stream" -> direct
	for _, d := range v.b.edges {
		e, ok := v.edge(d)
		if !ok {
			continue
		}
		key := e.From.ID + "/" + e.Stream.Name + "/" + e.To.ID
		if seen[key] {
			v.problem("bolt %q subscribes to stream %q of %q more than once", e.To.ID, e.Stream.Name, e.From.ID)
			continue
		}
		seen[key] = true
		src := e.From.ID + "/" + e.Stream.Name
		direct := e.Grouping.Kind == DirectGrouping
		if was, ok := directness[src]; ok && was != direct {
			v.problem("stream %q of %q mixes direct and non-direct groupings; a stream is either direct or not", e.Stream.Name, e.From.ID)
		}
		directness[src] = direct
		v.t.Edges = append(v.t.Edges, e)
	}
}

func (v *validator) edge(d edgeDef) (*Edge, bool) {
	from, to := v.byID[d.from], v.byID[d.to]
	ok := true
	if from == nil {
		v.problem("edge %q -> %q: source component %q is not defined", d.from, d.to, d.from)
		ok = false
	}
	if to == nil {
		v.problem("edge %q -> %q: destination component %q is not defined", d.from, d.to, d.to)
		ok = false
	} else if to.Bolt == nil {
		if to.Spout != nil { // else a bolt without a spec, reported already
			v.problem("edge %q -> %q: destination %q is a spout; only bolts subscribe to streams", d.from, d.to, d.to)
		}
		ok = false
	}
	g := d.grouping
	if g.Kind == 0 || g.Stream == nil {
		v.problem("edge %q -> %q has no grouping", d.from, d.to)
		return nil, false
	}
	s := v.t.streamOf(g.Stream)
	if s == nil {
		v.problem("edge %q -> %q: stream type %v is not in the topology's schema (declare it with Streams)", d.from, d.to, g.Stream)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	if from.Spout != nil && from.Spout.Output != g.Stream {
		v.problem("edge %q -> %q: spout %q emits %v, not %v", d.from, d.to, d.from, from.Spout.Output, g.Stream)
		ok = false
	}
	if g.Kind == DirectGrouping && from.Spout != nil && from.Spout.Kind == unreliableKind {
		// Every emit of such a spout goes through the groupings, which a
		// direct stream refuses: each tuple would fail and none arrive.
		v.problem("edge %q -> %q: spout %q is unreliable and cannot name a task, so a Direct grouping would refuse every tuple it emits (use ReliableFrom with a Source that has a DirectTask method, or another grouping)", d.from, d.to, d.from)
		ok = false
	}
	if to.Bolt != nil && !g.Stream.AssignableTo(to.Bolt.Input) {
		v.problem("edge %q -> %q: bolt %q takes %v and cannot accept stream %q (%v)", d.from, d.to, d.to, to.Bolt.Input, s.Name, g.Stream)
		ok = false
	}
	if g.Kind == FieldsGrouping {
		if len(g.Fields) == 0 {
			v.problem("edge %q -> %q: fields grouping on stream %q names no fields", d.from, d.to, s.Name)
			ok = false
		}
		for _, f := range g.Fields {
			if !s.hasField(f) {
				v.problem("edge %q -> %q: fields grouping on %q, which stream %q lacks (it has %v)", d.from, d.to, f, s.Name, s.Fields)
				ok = false
			}
		}
		if g.Key == nil {
			v.problem("edge %q -> %q: fields grouping has no key function", d.from, d.to)
			ok = false
		}
	}
	return &Edge{From: from, To: to, Stream: s, Grouping: g, Anchored: d.anchored}, ok
}

func (v *validator) inputs() {
	fed := map[string]bool{}
	for _, e := range v.b.edges { // rejected edges were reported already
		fed[e.to] = true
	}
	for _, c := range v.t.Components {
		if c.Bolt != nil && !fed[c.ID] {
			v.problem("bolt %q has no input", c.ID)
		}
	}
}

// cycles rejects any cycle: a bolt downstream of itself could fill its own bounded
// mailbox and park forever.
func (v *validator) cycles() {
	next := map[string][]string{}
	for _, e := range v.t.Edges {
		next[e.From.ID] = append(next[e.From.ID], e.To.ID)
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var path []string
	reported := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		color[id] = grey
		path = append(path, id)
		for _, n := range next[id] {
			switch color[n] {
			case grey:
				cycle := append(cycleFrom(path, n), n)
				key := strings.Join(sortedCopy(cycle[:len(cycle)-1]), ",")
				if !reported[key] {
					reported[key] = true
					v.problem("cycle %s: topologies must be acyclic", quoteAll(cycle, " -> "))
				}
			case white:
				visit(n)
			}
		}
		path = path[:len(path)-1]
		color[id] = black
	}
	for _, c := range v.t.Components {
		if color[c.ID] == white {
			visit(c.ID)
		}
	}
}

// numberTasks gives every component its task ids (see [Component]) and the
// ackers theirs.
func (v *validator) numberTasks() {
	byID := append([]*Component(nil), v.t.Components...)
	sort.Slice(byID, func(i, j int) bool { return byID[i].ID < byID[j].ID })
	next := 1
	for _, c := range byID {
		for range c.Parallelism {
			c.Tasks = append(c.Tasks, next)
			next++
		}
	}
	for range v.t.Settings.AckerTasks {
		v.t.AckerTasks = append(v.t.AckerTasks, next)
		next++
	}
}

func quoteAll(ids []string, sep string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, sep)
}

func cycleFrom(path []string, start string) []string {
	for i, p := range path {
		if p == start {
			return append([]string(nil), path[i:]...)
		}
	}
	return nil
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}
