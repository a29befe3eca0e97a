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
