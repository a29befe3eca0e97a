package component_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEmitErrorNamesTheComponentAndTheStream(t *testing.T) {
	err := &component.EmitError{Component: "split", Stream: "Word", Task: 3, Reason: "task 3 does not subscribe to the stream"}
	want := `component "split" cannot emit Word: task 3 does not subscribe to the stream`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// The edge INTO a bolt decides (the routing document's rule): join has an
// anchored input from s1 and an unanchored one from s2; its own edge out is
// unanchored and plays no part. Inputs from no edge of join join nothing.
func TestAnchoringFollowsTheEdgeIntoTheBolt(t *testing.T) {
	type word struct{ W string }
	spout := func() *dsl.SpoutSpec {
		return dsl.Reliable(func() (int, word, bool) { return 0, word{}, false }, func(int) {}, func(int) {})
	}
	b := dsl.New("anchoring", nil)
	join := b.Bolt("join", dsl.AutoAck(func(word, dsl.Emitter) error { return nil }))
	sink := b.Bolt("sink", dsl.AutoAck(func(word, dsl.Emitter) error { return nil }))
	b.Anchored(b.Spout("s1", spout()), join, dsl.Shuffle[word]())
	b.Unanchored(b.Spout("s2", spout()), join, dsl.Shuffle[word]())
	b.Unanchored(join, sink, dsl.Shuffle[word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a := component.NewAnchoring(topo, topo.Component("join"))
	stream := topo.Streams[0]
	for _, tc := range []struct {
		source string
		stream *dsl.Stream
		want   bool
	}{
		{"s1", stream, true},
		{"s2", stream, false},
		{"join", stream, false}, // no edge join -> join
		{"s1", nil, false},      // a tick
	} {
		if got := a.Joins(topo.Component(tc.source).Index, tc.stream); got != tc.want {
			t.Errorf("Joins(%s, %v) = %v, want %v", tc.source, tc.stream, got, tc.want)
		}
	}
	if a.Joins(-1, stream) || a.Joins(len(topo.Components), stream) || (component.Anchoring{}).Joins(0, stream) {
		t.Error("an unknown sender joins")
	}
}

// With several senders and streams, each (sender, stream) pair of the bolt's
// input edges has a cell of its own: only the anchored pairs join, whatever
// their neighbours in the table. A stream index past the table joins nothing
func TestAnchoringKeepsEverySenderAndStreamApart(t *testing.T) {
	type a1 struct{ N int }
	type a2 struct{ N int }
	type a3 struct{ N int }
	b := dsl.New("cells", nil)
	b.Streams(a1{}, a2{}, a3{})
	emitAll := func() *dsl.BoltSpec {
		return dsl.AutoAck(func(a1, dsl.Emitter) error { return nil })
	}
	p := b.Bolt("ap", emitAll()) // defined first: the sender of index 0
	src := b.Spout("src", dsl.Reliable(func() (int, a1, bool) { return 0, a1{}, false }, func(int) {}, func(int) {}))
	q := b.Bolt("q", emitAll())
	join := b.Bolt("join", dsl.AutoAck(func(any, dsl.Emitter) error { return nil }))
	b.Anchored(src, p, dsl.Shuffle[a1]())
	b.Anchored(src, q, dsl.Shuffle[a1]())
	b.Anchored(p, join, dsl.Shuffle[a2]())
	b.Unanchored(p, join, dsl.Shuffle[a3]())
	b.Anchored(q, join, dsl.Shuffle[a1]())
	b.Unanchored(q, join, dsl.Shuffle[a2]())
	b.Anchored(q, join, dsl.Shuffle[a3]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	anchoring := component.NewAnchoring(topo, topo.Component("join"))
	want := map[[2]string]bool{{"ap", "a2"}: true, {"q", "a1"}: true, {"q", "a3"}: true}
	if topo.Component("ap").Index != 0 {
		t.Fatalf("ap has index %d, want 0", topo.Component("ap").Index)
	}
	for _, c := range topo.Components {
		for _, s := range topo.Streams {
			if got := anchoring.Joins(c.Index, s); got != want[[2]string{c.ID, s.Name}] {
				t.Errorf("Joins(%s, %s) = %v, want %v", c.ID, s.Name, got, !got)
			}
		}
	}
	past := &dsl.Stream{Name: "past", Index: len(topo.Streams)}
	for _, c := range topo.Components {
		if anchoring.Joins(c.Index, past) {
			t.Errorf("Joins(%s, a stream past the table) = true", c.ID)
		}
	}
}

// The reasons a tuple cannot be routed read the same under both hosts: one
// table of what each check says, and that a right emit is no error.
func TestEmitChecks(t *testing.T) {
	type word struct{}
	if got := component.NotAStream("split", word{}, 0).Error(); got != `component "split" cannot emit component_test.word: the topology has no streams` {
		t.Errorf("no streams: %s", got)
	}
	if got := component.NotAStream("split", word{}, 2).Error(); got != `component "split" cannot emit component_test.word: its type is not a stream of the topology (declare it with Streams)` {
		t.Errorf("not a stream: %s", got)
	}
	for _, tc := range []struct {
		name                             string
		direct                           int
		subscribed, isDirect, subscribes bool
		want                             string // "" for no error
	}{
		{"grouped emit on a grouped stream", 0, true, false, false, ""},
		{"grouped emit nobody subscribes to", 0, false, false, false, ""},
		{"direct emit to a subscriber", 7, true, true, true, ""},
		{"direct emit on a grouped stream", 7, true, false, true, "EmitDirect on a stream whose subscribers do not use direct grouping"},
		{"grouped emit on a direct stream", 0, true, true, false, "the stream is direct: use EmitDirect with a task id"},
		{"direct emit to a task that does not subscribe", 7, true, true, false, "task 7 does not subscribe to the stream"},
		{"direct emit on a stream nobody subscribes to", 7, false, false, false, "task 7 does not subscribe to the stream"},
	} {
		err := component.CheckDirect("split", "Word", tc.direct, tc.subscribed, tc.isDirect, tc.subscribes)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.name, err)
		case tc.want != "" && (err == nil || err.Reason != tc.want || err.Task != tc.direct || err.Stream != "Word" || err.Component != "split"):
			t.Errorf("%s: %+v, want reason %q", tc.name, err, tc.want)
		}
	}
}
