package routing

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/goshelter/goshelter/internal/component"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/grouping"
	"github.com/goshelter/goshelter/internal/ids"
)

// Sink receives what a router decides. The runtime implements it with per-destination
// batches. Track and Anchor for a tuple are always called before Deliver of that
// tuple, so an acker that receives them in order can never see an edge completed
// before it was added.
type Sink interface {
	// Deliver hands t to bolt task. t is only valid during the call: the sink
	// copies it (the router reuses one header for every delivery of an emit).
	Deliver(task int, t *dsl.Tuple)
	// Track starts the tree root for spout task spoutTask.
	Track(root uint64, spoutTask int)
	// Anchor adds edge to the tree root.
	Anchor(root, edge uint64)
	// Fail fails the tree root at once.
	Fail(root uint64)
}

// Router is one task's emit path. It is used by that task's goroutine only.
type Router struct {
	plan    *Plan
	self    Task
	sink    Sink
	ids     ids.Source
	roots   ids.Roots // ids as a Roots, when it numbers roots apart; else nil
	tracks  bool      // the topology has ackers
	streams []streamOut
	last    *streamOut // the last stream emitted, checked first (nil before any)
	// header is the tuple being delivered: the sink copies it, so one header
	// serves every emit (a local one would escape through the Sink interface
	// and cost an allocation per tuple).
	header dsl.Tuple
}

type streamOut struct {
	stream *dsl.Stream
	typ    uintptr // typeWord of the stream's values
	dists  []distributor
	direct bool // the stream's subscribers use direct grouping
	keyed  bool // some delivery runs a grouping key function (user code that may panic)
	// unicast: one delivery, to one task per tuple, so an untracked emit
	// needs no more than Unicast.
	unicast bool
}

// distributor spreads one stream over one destination component's tasks.
type distributor struct {
	route route
	kind  groupingKind
	next  int // shuffle position
}

// groupingKind is a Grouping's kind as the per-tuple path switches on it.
type groupingKind uint8

const (
	byShuffle groupingKind = iota
	byFields
	toAll
	byEmitter
	toLowest
)

var groupings = map[dsl.GroupingKind]groupingKind{
	dsl.ShuffleGrouping: byShuffle, dsl.FieldsGrouping: byFields, dsl.AllGrouping: toAll,
	dsl.DirectGrouping: byEmitter, dsl.GlobalGrouping: toLowest,
	dsl.LocalOrShuffleGrouping: byShuffle, dsl.NoneGrouping: byShuffle, // one process: every task is local
}

// NewRouter builds the emit path of task. src supplies its tuple ids.
func (p *Plan) NewRouter(task Task, sink Sink, src ids.Source) *Router {
	r := &Router{plan: p, self: task, sink: sink, ids: src, tracks: len(p.Ackers) > 0}
	r.roots, _ = src.(ids.Roots)
	r.header.Task = task.ID
	if task.Component != nil {
		r.header.Source = task.Component.ID
	}
	r.streams = make([]streamOut, len(p.Topology.Streams))
	for i, s := range p.Topology.Streams {
		out := streamOut{stream: s, typ: typeWord(reflect.New(s.Type).Elem().Interface())}
		if task.Component != nil {
			for j, rt := range p.routes[task.Component.Index][i] {
				kind := groupings[rt.edge.Grouping.Kind]
				// Where the round robin starts: spread over the emitting tasks
				// (every component has at least one task).
				next := (task.Index + j) % len(rt.tasks)
				out.dists = append(out.dists, distributor{route: rt, kind: kind, next: next})
				out.direct = kind == byEmitter
				out.keyed = out.keyed || kind == byFields
			}
		}
		// A spout's router guards key functions (routeGuarded), so its
		// keyed streams take EmitSpout; a bolt's emit lets their panics
		// through to the task, which fails the input, on either path.
		keyedOK := task.Component != nil && task.Component.Spout == nil
		out.unicast = len(out.dists) == 1 && unicastKind(out.dists[0], keyedOK)
		r.streams[i] = out
	}
	return r
}

// unicastKind reports whether d sends each tuple to one task: what Unicast
// picks for. A fields grouping counts only when keyed is true.
func unicastKind(d distributor, keyed bool) bool {
	switch {
	case len(d.route.tasks) == 0:
		return false
	case len(d.route.tasks) == 1:
		return d.kind != byEmitter
	default:
		return d.kind == byShuffle || d.kind == toLowest || keyed && d.kind == byFields
	}
}

// stream finds the stream of tuple's type.
func (r *Router) stream(tuple any) (*streamOut, error) {
	typ := typeWord(tuple)
	if r.last != nil && r.last.typ == typ {
		return r.last, nil
	}
	for i := range r.streams {
		if r.streams[i].typ == typ {
			r.last = &r.streams[i]
			return r.last, nil
		}
	}
	return nil, component.NotAStream(r.self.Component.ID, tuple, len(r.streams))
}

// typeWord is the dynamic type of v as the first word of the interface value:
// the identity reflect.TypeOf(v) stands for, read without a call, and compared
// as an integer rather than as two reflect.Type interfaces (runtime.ifaceeq).
// It is 0 for a nil v. Every stream's word is taken from a value of its type
// at build time, so the layout is never assumed to match reflect's pointers.
func typeWord(v any) uintptr {
	return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[0])
}

// EmitSpout routes a spout's tuple, to task direct only when it is not 0 (on a
// stream whose subscribers use direct grouping: Storm's emitDirect from a
// spout). When tracked is true and the tuple reaches a subscriber, it starts a
// tree and returns its root; otherwise it returns 0.
//
// When the tuple cannot be routed — its type is not a stream, or a grouping's
// key function (user code) panicked — it returns the error and, for a tracked
// tuple, the root of a tree it has already failed, so the message gets its
// outcome (a nack) like any other and the spout goes on.
func (r *Router) EmitSpout(tuple any, tracked bool, direct int) (root uint64, err error) {
	tracked = tracked && r.tracks
	s, err := r.stream(tuple)
	if err == nil && (direct != 0 || s.direct) {
		err = r.checkDirect(s, direct)
	}
	if err != nil {
		return r.failTree(0, tracked), err
	}
	if tracked && r.reaches(s, direct) {
		root = r.nextRoot()
		r.sink.Track(root, r.self.ID)
	}
	if s.keyed {
		if err := r.routeGuarded(s, tuple, root, direct); err != nil {
			return r.failTree(root, tracked), err
		}
		return root, nil
	}
	// No user code runs below: no recover on the per-tuple path.
	roots := dsl.TupleID{Root: root}
	r.route(s, tuple, &roots, direct)
	return root, nil
}

// Unicast returns the task an untracked tuple emitted without a direct task
// goes to, and its stream, when the emit needs none of EmitSpout's and Emit's
// generality: its stream is the one emitted last, and it has one subscriber,
// grouped to one task per tuple (shuffle, global, or, for a bolt, fields).
// The caller then appends the value to that task's batch itself, with no
// tuple header to fill and no Sink call. ok is false otherwise, and the
// caller takes EmitSpout or Emit, which also remember the stream for the
// next Unicast.
//
// The task is the one route would pick: the same round robin advances, the
// same key picks. A bolt's key function that panics panics here as in Emit;
// a spout's keyed streams are left to EmitSpout, which turns that panic into
// an error. The picks are route's written again on purpose: one method shared
// by both is a call per delivery, 4 ns on BenchmarkEmitShuffle/untracked (14.5
// -> 18.4); TestUnicastPicksTheTaskEmitSpoutWouldPick keeps the two in step.
func (r *Router) Unicast(tuple any) (task int, stream *dsl.Stream, ok bool) {
	s := r.last
	if s == nil || s.typ != typeWord(tuple) || !s.unicast {
		return 0, nil, false
	}
	d := &s.dists[0]
	tasks := d.route.tasks
	if len(tasks) > 1 {
		switch d.kind {
		case byShuffle:
			if d.next++; d.next >= len(tasks) {
				d.next = 0
			}
			return tasks[d.next], s.stream, true
		case byFields: // a bolt's: its key function's panic fails the input
			return tasks[grouping.Index(d.route.edge.Grouping.Key(tuple), len(tasks))], s.stream, true
		}
	}
	return tasks[0], s.stream, true
}

// routeGuarded routes a spout's tuple on a stream with a grouping key function,
// turning a panic in that function into an error.
func (r *Router) routeGuarded(s *streamOut, tuple any, root uint64, direct int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &component.EmitError{Component: r.self.Component.ID, Stream: s.stream.Name, Reason: fmt.Sprintf("a grouping key function panicked: %v", p)}
		}
	}()
	roots := dsl.TupleID{Root: root}
	r.route(s, tuple, &roots, direct)
	return nil
}

// failTree fails the tree of a tracked spout tuple that could not be routed,
// starting it first when it has none yet, so the message gets its outcome (a
// nack) like any other; it returns the root.
func (r *Router) failTree(root uint64, tracked bool) uint64 {
	if !tracked {
		return root
	}
	if root == 0 {
		root = r.nextRoot()
		r.sink.Track(root, r.self.ID)
	}
	r.sink.Fail(root)
	return root
}

// nextRoot returns a new tree's root.
func (r *Router) nextRoot() uint64 {
	if r.roots != nil {
		return r.roots.NextRoot()
	}
	return r.ids.Next()
}

// reaches reports whether an emit on s (to task direct, unless 0) is delivered
// at all: only then may a tree start, since a tree nothing anchors would only
// time out. A spout's tracked emits are tracked on every edge (whatever its
// anchoring: see dsl.Edge.Anchored), so any delivery will do.
func (r *Router) reaches(s *streamOut, direct int) bool {
	if direct == 0 {
		return len(s.dists) > 0
	}
	return r.directTarget(s, direct)
}

// Emit routes a bolt's tuple, anchoring it to anchors on every edge: the
// caller has kept only the anchors whose trees the emit joins, by the edges
// they came in on (dsl.Edge.Anchored). A direct task of 0 means grouped
// delivery; otherwise the tuple goes to that task only.
func (r *Router) Emit(tuple any, anchors []dsl.TupleID, direct int) error {
	s, err := r.stream(tuple)
	if err != nil {
		return err
	}
	if direct != 0 || s.direct {
		if err := r.checkDirect(s, direct); err != nil {
			return err
		}
	}
	var roots dsl.TupleID // unanchored: no trees to merge
	if len(anchors) != 0 {
		roots = rootsOf(anchors)
	}
	r.route(s, tuple, &roots, direct)
	return nil
}

// route delivers tuple to the stream's subscribers. When roots.Root is not 0
// each delivery gets a fresh edge id, anchored in every tree of roots before
// the tuple is delivered. The tuple header is built once per emit and
// the grouping applied inline, with no closure per distributor: this is the
// per-tuple path.
func (r *Router) route(s *streamOut, tuple any, roots *dsl.TupleID, direct int) {
	t := &r.header // field by field: a struct literal would be copied in with a bulk write barrier
	t.Value, t.Stream = tuple, s.stream
	anchored := roots.Root != 0
	if !anchored {
		t.ID = dsl.TupleID{} // for every delivery: deliver leaves an unanchored one's id alone
	}
	for i := range s.dists {
		d := &s.dists[i]
		if direct != 0 {
			if containsTask(d.route.tasks, direct) {
				r.deliver(direct, t, roots, anchored)
			}
			continue
		}
		tasks := d.route.tasks
		var task int
		switch {
		case len(tasks) == 1:
			task = tasks[0]
		case d.kind == byShuffle: // round robin, without a division per tuple
			if d.next++; d.next >= len(tasks) {
				d.next = 0
			}
			task = tasks[d.next]
		case d.kind == byFields:
			task = tasks[grouping.Index(d.route.edge.Grouping.Key(t.Value), len(tasks))]
		case d.kind == toLowest:
			task = tasks[0]
		case d.kind == toAll:
			for _, task := range tasks {
				r.deliver(task, t, roots, anchored)
			}
			continue
		default: // direct grouping: EmitDirect only
			continue
		}
		// deliver, by hand: it is too big to be inlined, and this is the
		// path of every tuple.
		if anchored {
			r.anchorEdge(t, roots)
		}
		r.sink.Deliver(task, t)
	}
	t.Value = nil // keeps nothing alive after the emit
}

// deliver hands t to task, first giving it a fresh edge anchored in every tree
// of roots when the delivery is anchored (route cleared an unanchored one's id).
func (r *Router) deliver(task int, t *dsl.Tuple, roots *dsl.TupleID, anchored bool) {
	if anchored {
		r.anchorEdge(t, roots)
	}
	r.sink.Deliver(task, t)
}

// anchorEdge gives t a fresh edge id anchored in every tree of roots.
func (r *Router) anchorEdge(t *dsl.Tuple, roots *dsl.TupleID) {
	t.ID = *roots
	t.ID.Edge = r.ids.Next()
	r.anchorAll(roots, t.ID.Edge)
}

func (r *Router) checkDirect(s *streamOut, direct int) error {
	if err := component.CheckDirect(r.self.Component.ID, s.stream.Name, direct, len(s.dists) > 0, s.direct,
		direct != 0 && r.directTarget(s, direct)); err != nil {
		return err
	}
	return nil // not a typed nil *EmitError
}

func (r *Router) directTarget(s *streamOut, task int) bool {
	for i := range s.dists {
		if containsTask(s.dists[i].route.tasks, task) {
			return true
		}
	}
	return false
}

func (r *Router) anchorAll(id *dsl.TupleID, edge uint64) {
	r.sink.Anchor(id.Root, edge)
	for _, root := range id.Roots {
		r.sink.Anchor(root, edge)
	}
}

// rootsOf merges the trees of the tracked anchors: the new tuple belongs to all.
//
// It reads the anchors in place: copying each 40-byte TupleID out of the
// slice (a range value) made the compiler's overlapping 16-byte moves stall
// the loads that followed them, a fifth of a relaying bolt's time.
func rootsOf(anchors []dsl.TupleID) dsl.TupleID {
	if len(anchors) == 1 { // an emit anchored to the input alone: the usual case
		if a := &anchors[0]; a.Edge != 0 {
			return dsl.TupleID{Root: a.Root, Roots: a.Roots}
		}
		return dsl.TupleID{}
	}
	var id dsl.TupleID
	owned := false // id.Roots is our own copy, which may grow in place
	for i := range anchors {
		a := &anchors[i]
		if a.Edge == 0 {
			continue
		}
		if id.Root == 0 {
			id.Root, id.Roots = a.Root, a.Roots
			continue
		}
		id.Roots, owned = appendNew(id.Roots, owned, a.Root, id.Root)
		for _, r := range a.Roots {
			id.Roots, owned = appendNew(id.Roots, owned, r, id.Root)
		}
	}
	return id
}

// appendNew adds root unless it is first or already listed. The first append
// copies, so an input's Roots slice is never shared and grown; later ones grow
// the copy, so anchoring to n inputs costs one copy, not n.
func appendNew(roots []uint64, owned bool, root, first uint64) ([]uint64, bool) {
	if root == first || slices.Contains(roots, root) {
		return roots, owned
	}
	if !owned {
		roots = append(make([]uint64, 0, 2*len(roots)+1), roots...)
	}
	return append(roots, root), true
}

func containsTask(tasks []int, task int) bool {
	for _, t := range tasks {
		if t == task {
			return true
		}
	}
	return false
}
