package actors

import (
	"strings"
	"testing"

	"github.com/goshelter/goshelter/dsl"
)

type layoutLine struct{ Text string }

// positioned is a source in the cut that emits nothing.
type positioned struct{}

func (*positioned) Next() (int, layoutLine, bool) { return 0, layoutLine{}, false }
func (*positioned) Ack(int)                       {}
func (*positioned) Nack(int)                      {}
func (*positioned) Position() []byte              { return nil }
func (*positioned) Rewind([]byte) error           { return nil }

// layoutTopology is lines -> count, the spout and the state as the options
// say.
func layoutTopology(t *testing.T, name, countID string, outside, intValues bool) *dsl.Topology {
	t.Helper()
	b := dsl.New(name, nil)
	b.Streams(layoutLine{})
	var opts []dsl.Option
	if outside {
		opts = append(opts, dsl.OutsideCheckpoint())
	}
	src := b.Spout("lines", dsl.ReliableFrom(func(dsl.TaskInfo) *positioned { return &positioned{} }), opts...)
	var count *dsl.BoltSpec = dsl.Stateful(func(layoutLine, *dsl.State[string, string], dsl.Emitter) error { return nil })
	if intValues {
		count = dsl.Stateful(func(layoutLine, *dsl.State[string, int], dsl.Emitter) error { return nil })
	}
	b.Anchored(src, b.Bolt(countID, count), dsl.Shuffle[layoutLine]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestComponentProblems(t *testing.T) {
	stored := map[string][]byte{}
	for _, c := range identity(layoutTopology(t, "t", "count", false, false)) {
		stored[string(c.Key)] = c.Value
	}
	for _, tc := range []struct {
		name string
		topo *dsl.Topology
		want []string // substrings, one per problem; none for a match
	}{
		{"same", layoutTopology(t, "t", "count", false, false), nil},
		{"a new stateful bolt is fine, the old one missing is not", layoutTopology(t, "t", "count2", false, false),
			[]string{`component "count" (stateful bolt, state key string, value string) keeps state or positions in the store, and topology "t" has no such component`}},
		{"retyped", layoutTopology(t, "t", "count", false, true),
			[]string{`component "count" was checkpointed as stateful bolt, state key string, value string, and is now stateful bolt, state key string, value int`}},
		{"spout taken out", layoutTopology(t, "t", "count", true, false),
			[]string{`component "lines" (spout) keeps state or positions in the store, and topology "t" has no such component, now a spout outside the checkpoints`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := componentProblems(tc.topo, stored)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %v, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].Error(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	if err := foreignStore(layoutTopology(t, "u", "count", false, false), stored, 4); err == nil ||
		!strings.Contains(err.Error(), `topology "u": the store holds checkpoints (up to 4) of topology "t"`) {
		t.Errorf("foreignStore = %v, want it to name both topologies", err)
	}
}
