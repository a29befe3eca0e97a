package dsl_test

import (
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
)

// TestMain fails the package's tests if any goroutine outlives them (the
// runnable examples start and stop topologies).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type confIn struct{ N int }

func TestBuildResolvesComponentConfOverTopologyConf(t *testing.T) {
	b := dsl.New("conf", dsl.Conf{dsl.MaxSpoutPending: 10, dsl.TickFrequency: 5, dsl.ReceiveBufferSize: 64})
	spout := b.Spout("spout", dsl.Unreliable(func() (confIn, bool) { return confIn{}, false }))
	own := b.Bolt("own", dsl.AutoAck(func(confIn, dsl.Emitter) error { return nil }),
		dsl.WithConf(dsl.Conf{dsl.TickFrequency: 1, dsl.ReceiveBufferSize: 300}))
	inherits := b.Bolt("inherits", dsl.AutoAck(func(confIn, dsl.Emitter) error { return nil }))
	b.Anchored(spout, own, dsl.Shuffle[confIn]())
	b.Anchored(spout, inherits, dsl.Shuffle[confIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Settings.MaxSpoutPending; got != 10 {
		t.Errorf("topology max spout pending = %d, want 10", got)
	}
	tests := []struct {
		component string
		tick      time.Duration
		buffer    int
	}{
		{"own", time.Second, 512},
		{"inherits", 5 * time.Second, 64},
		{"spout", 5 * time.Second, 64},
	}
	for _, tt := range tests {
		s := topo.Component(tt.component).Settings
		if s.TickFrequency != tt.tick || s.ReceiveBufferSize != tt.buffer || s.MaxSpoutPending != 10 {
			t.Errorf("%s settings: tick %v, buffer %d, max pending %d; want tick %v, buffer %d, max pending 10",
				tt.component, s.TickFrequency, s.ReceiveBufferSize, s.MaxSpoutPending, tt.tick, tt.buffer)
		}
	}
}

type hashed struct{ Word string }

// TestFieldsGroupingHashesItsKeyWithHashKey checks that a fields grouping's Key
// is the pinned key hash (see TestHashKey in internal_test.go) of its key.
func TestFieldsGroupingHashesItsKeyWithHashKey(t *testing.T) {
	g := dsl.Fields(func(h hashed) string { return h.Word }, "Word")
	if got := g.Key(hashed{"foobar"}); got != 0x85944171f73967e8 {
		t.Errorf("Fields key of %q = %#x, want the key hash %#x", "foobar", got, uint64(0x85944171f73967e8))
	}
	if g.String() != "fields[Word]" {
		t.Errorf("String() = %q, want %q", g.String(), "fields[Word]")
	}
	if g.Kind != dsl.FieldsGrouping || g.Stream != reflect.TypeFor[hashed]() {
		t.Errorf("Fields grouping = %+v, want kind fields on stream hashed", g)
	}
}

func TestGroupingKindsAndNames(t *testing.T) {
	for _, tt := range []struct {
		g    dsl.Grouping
		kind dsl.GroupingKind
		want string
	}{
		{dsl.Shuffle[hashed](), dsl.ShuffleGrouping, "shuffle"},
		{dsl.All[hashed](), dsl.AllGrouping, "all"},
		{dsl.Direct[hashed](), dsl.DirectGrouping, "direct"},
		{dsl.Global[hashed](), dsl.GlobalGrouping, "global"},
		{dsl.LocalOrShuffle[hashed](), dsl.LocalOrShuffleGrouping, "local_or_shuffle"},
		{dsl.None[hashed](), dsl.NoneGrouping, "none"},
	} {
		if tt.g.Kind != tt.kind || tt.g.String() != tt.want || tt.g.Stream != reflect.TypeFor[hashed]() {
			t.Errorf("grouping %+v (String %q), want kind %v named %q on stream hashed", tt.g, tt.g.String(), tt.kind, tt.want)
		}
	}
}

// A value that is no kind still prints, so that a message naming it is never
// empty or a bare number.
func TestGroupingKindStringCoversUnknownValues(t *testing.T) {
	for k, want := range map[dsl.GroupingKind]string{0: "GroupingKind(0)", 8: "GroupingKind(8)", -1: "GroupingKind(-1)", dsl.FieldsGrouping: "fields"} {
		if got := k.String(); got != want {
			t.Errorf("GroupingKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}
