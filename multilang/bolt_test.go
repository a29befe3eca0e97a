package multilang

import (
	"reflect"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// A child sees a tick as Storm sends it: one field, rate_secs, whatever other
// fields goshelter's Tick carries.
func TestShellBoltEncodesTicksAsStormDoes(t *testing.T) {
	b := &shellBolt{names: map[*dsl.Stream]string{}}
	got := b.encode("tick-1", dsl.Tuple{Value: dsl.Tick{RateSecs: 2, Period: 1500 * time.Millisecond}, Source: "__system", Task: -1})
	want := wire.OutTuple{ID: "tick-1", Comp: "__system", Stream: "__tick", Task: -1, Values: []any{2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tick encoded as %+v, want %+v", got, want)
	}
}

type phase struct{ Name string }

// A child sees an input on the stream id its sender declared (a shell spout's
// "default"), and a lifecycle tuple, which comes on no edge, on its stream's
// name with the stream's fields.
func TestShellBoltNamesInputStreamsAsTheChildKnowsThem(t *testing.T) {
	cmd := Command{Path: "sh", Args: []string{"-c", "exit 0"}}
	b := dsl.New("names", nil)
	b.Streams(line{}, phase{})
	src := b.Spout("lines", Spout[line](cmd))
	b.Anchored(src, b.Bolt("shell", Bolt(cmd), dsl.LifecycleTuples(phase{"up"}, phase{"down"})), dsl.Shuffle[line]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	bolt := &shellBolt{def: newDef(cmd, false), names: map[*dsl.Stream]string{},
		info: dsl.TaskInfo{Component: "shell", Task: topo.Component("shell").Tasks[0], Model: topo, Settings: topo.Settings}}
	if _, err := bolt.prepare(); err != nil {
		t.Fatal(err)
	}
	lines := streamOf(topo, reflect.TypeFor[line]())
	for _, tt := range []struct {
		in   dsl.Tuple
		want wire.OutTuple
	}{
		{dsl.Tuple{Value: line{"hi"}, Stream: lines, Source: "lines", Task: 1},
			wire.OutTuple{ID: "1", Comp: "lines", Stream: "default", Task: 1, Values: []any{"hi"}}},
		{dsl.Tuple{Value: phase{"up"}, Source: wire.SystemComponent, Task: -1}, // no Stream, as the runtime delivers it
			wire.OutTuple{ID: "1", Comp: wire.SystemComponent, Stream: streamOf(topo, reflect.TypeFor[phase]()).Name, Task: -1, Values: []any{"up"}}},
	} {
		if got := bolt.encode("1", tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v encoded as %+v, want %+v", tt.in.Value, got, tt.want)
		}
	}
}

// topology.shellbolt.max.pending bounds the inputs queued for the child; when
// the conf does not set it, the bound is Storm's default, 100.
func TestShellBoltQueuesMaxPendingInputs(t *testing.T) {
	for _, tt := range []struct {
		conf dsl.Conf
		want int
	}{
		{nil, defaultMaxPending},
		{dsl.Conf{maxPendingKey: 5}, 5},
		{dsl.Conf{maxPendingKey: int64(1)}, 1},
	} {
		b := &shellBolt{def: newDef(Command{Path: "sh"}, false), info: dsl.TaskInfo{Conf: tt.conf}}
		if got := b.childConfig(&wire.Handshake{}).dataSlots; got != tt.want {
			t.Errorf("conf %v: %d inputs may queue, want %d", tt.conf, got, tt.want)
		}
	}
}
