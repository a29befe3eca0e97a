package dsl_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

type numIn struct{ N int }

func noNums() (numIn, bool) { return numIn{}, false }

func nopBolt() *dsl.BoltSpec { return dsl.AutoAck(func(numIn, dsl.Emitter) error { return nil }) }

func TestBuildNumbersTasksByComponentIDThenAckers(t *testing.T) {
	b := dsl.New("numbering", dsl.Conf{dsl.AckerTasks: 2})
	zeta := b.Spout("zeta", dsl.Unreliable(noNums), dsl.Parallelism(2))
	alpha := b.Bolt("alpha", nopBolt(), dsl.Parallelism(3))
	mid := b.Bolt("mid", nopBolt())
	b.Anchored(zeta, alpha, dsl.Shuffle[numIn]())
	b.Anchored(zeta, mid, dsl.Shuffle[numIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Components keep their definition order; task ids follow the ids' byte order.
	want := map[string][]int{"alpha": {1, 2, 3}, "mid": {4}, "zeta": {5, 6}}
	for i, c := range topo.Components {
		if c.Index != i {
			t.Errorf("component %q has Index %d, want %d", c.ID, c.Index, i)
		}
		if !reflect.DeepEqual(c.Tasks, want[c.ID]) {
			t.Errorf("component %q Tasks = %v, want %v", c.ID, c.Tasks, want[c.ID])
		}
		if len(c.Tasks) != c.Parallelism {
			t.Errorf("component %q has %d tasks, parallelism %d", c.ID, len(c.Tasks), c.Parallelism)
		}
	}
	if !reflect.DeepEqual(topo.AckerTasks, []int{7, 8}) {
		t.Errorf("AckerTasks = %v, want [7 8]", topo.AckerTasks)
	}
}

func TestBuildWithoutAckersHasNoAckerTasks(t *testing.T) {
	b := dsl.New("no-ackers", dsl.Conf{dsl.AckerTasks: 0})
	b.Anchored(b.Spout("s", dsl.Unreliable(noNums)), b.Bolt("b", nopBolt(), dsl.Parallelism(2)), dsl.Shuffle[numIn]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.AckerTasks) != 0 {
		t.Errorf("AckerTasks = %v, want none", topo.AckerTasks)
	}
	if got := topo.Component("b").Tasks; !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("tasks of b = %v, want [1 2]", got)
	}
	if got := topo.Component("s").Tasks; !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("tasks of s = %v, want [3]", got)
	}
}

// A Terminator fails every input: Build rejects it where its inputs can be
// tracked (from a reliable spout, on any edge) and accepts it where nothing
// is, whatever the edge's anchoring (an unreliable spout's, anchored or not).
func TestBuildRejectsATerminatorOnATrackedEdge(t *testing.T) {
	build := func(reliable, anchored bool) error {
		b := dsl.New("sink", nil)
		spec := dsl.Unreliable(noNums)
		if reliable {
			spec = dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {})
		}
		spout := b.Spout("numbers", spec)
		sink := b.Bolt("sink", dsl.Terminator(func(numIn) {}))
		if anchored {
			b.Anchored(spout, sink, dsl.Shuffle[numIn]())
		} else {
			b.Unanchored(spout, sink, dsl.Shuffle[numIn]())
		}
		_, err := b.Build()
		return err
	}
	for _, anchored := range []bool{false, true} {
		if err := build(false, anchored); err != nil {
			t.Fatalf("a Terminator fed by an unreliable spout (anchored %v): %v", anchored, err)
		}
		err := build(true, anchored)
		var invalid *dsl.ValidationError
		if !errors.As(err, &invalid) {
			t.Fatalf("a Terminator fed by a reliable spout (anchored %v): error %v, want a *dsl.ValidationError", anchored, err)
		}
		want := `edge "numbers" -> "sink": bolt "sink" is a Terminator`
		if len(invalid.Problems) != 1 || !strings.Contains(invalid.Problems[0], want) {
			t.Errorf("problems %q, want one containing %q", invalid.Problems, want)
		}
	}
}

func TestBuildReportsTheDestinationsKind(t *testing.T) {
	problems := func(define func(b *dsl.Builder, spout string)) []string {
		b := dsl.New("destinations", nil)
		define(b, b.Spout("s", dsl.Unreliable(noNums)))
		_, err := b.Build()
		var invalid *dsl.ValidationError
		if !errors.As(err, &invalid) {
			t.Fatalf("Build error %v, want a *dsl.ValidationError", err)
		}
		return invalid.Problems
	}
	got := problems(func(b *dsl.Builder, s string) { b.Anchored(s, b.Bolt("x", nil), dsl.Shuffle[numIn]()) })
	if want := []string{`bolt "x" has no definition (nil spec)`}; !reflect.DeepEqual(got, want) {
		t.Errorf("an edge to a bolt without a spec: problems %q, want only %q", got, want)
	}
	got = problems(func(b *dsl.Builder, s string) {
		b.Anchored(s, b.Spout("t", dsl.Unreliable(noNums)), dsl.Shuffle[numIn]())
	})
	if want := `edge "s" -> "t": destination "t" is a spout; only bolts subscribe to streams`; len(got) != 1 || got[0] != want {
		t.Errorf("an edge to a spout: problems %q, want only %q", got, want)
	}
}

func TestBuildQuotesTheComponentsOfACycle(t *testing.T) {
	b := dsl.New("cycle", nil)
	spout := b.Spout("s", dsl.Unreliable(noNums))
	relay := func(in numIn, out dsl.Emitter) error { out.Emit(in); return nil }
	x := b.Bolt("x", dsl.AutoAck(relay))
	y := b.Bolt("y", dsl.AutoAck(relay))
	b.Anchored(spout, x, dsl.Shuffle[numIn]())
	b.Anchored(x, y, dsl.Shuffle[numIn]())
	b.Anchored(y, x, dsl.Shuffle[numIn]())
	_, err := b.Build()
	if err == nil || !strings.Contains(err.Error(), `cycle "x" -> "y" -> "x": topologies must be acyclic`) {
		t.Errorf("Build error %v, want the cycle with quoted ids", err)
	}
}

func TestIsTickChecksTheValue(t *testing.T) {
	stream := &dsl.Stream{Name: "Tick", Type: reflect.TypeFor[dsl.Tick]()}
	tests := []struct {
		name string
		in   dsl.Tuple
		want bool
	}{
		{"a tick from the system", dsl.Tuple{Value: dsl.Tick{RateSecs: 1, Period: time.Second}, Source: "__system", Task: -1}, true},
		{"a zero tick", dsl.Tuple{Value: dsl.Tick{}}, true},
		{"an activation tuple (no stream, another value)", dsl.Tuple{Value: numIn{1}, Source: "__system", Task: -1}, false},
		{"a Tick value on a user stream", dsl.Tuple{Value: dsl.Tick{RateSecs: 1}, Stream: stream}, false},
		{"a pointer to a Tick", dsl.Tuple{Value: &dsl.Tick{}}, false},
		{"no value", dsl.Tuple{}, false},
	}
	for _, tt := range tests {
		if got := tt.in.IsTick(); got != tt.want {
			t.Errorf("%s: IsTick() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTaskInfoContext(t *testing.T) {
	var info dsl.TaskInfo
	if info.Context() == nil || info.Context().Done() != nil {
		t.Fatalf("a zero TaskInfo's Context = %v, want a context that never ends", info.Context())
	}
	ctx, cancel := context.WithCancel(context.Background())
	with := info.WithContext(ctx)
	if with.Context() != ctx {
		t.Errorf("WithContext(ctx).Context() = %v, want ctx", with.Context())
	}
	if info.Context() == ctx {
		t.Error("WithContext changed the TaskInfo it was called on")
	}
	cancel()
	select {
	case <-with.Context().Done():
	default:
		t.Error("the task's Context did not end with ctx")
	}
}

// A stream type declared under two names is refused; declared again under
// its own name, or with Streams, it is the same stream (issue 35).
func TestStreamTypeDeclaredTwice(t *testing.T) {
	for _, tt := range []struct {
		name string
		decl func(b *dsl.Builder)
		want string // "": Build succeeds
	}{
		{"two names", func(b *dsl.Builder) { b.NamedStream("first", numIn{}).NamedStream("second", numIn{}) },
			`stream type dsl_test.numIn is declared twice, as "first" and "second"`},
		{"the same name twice", func(b *dsl.Builder) { b.NamedStream("first", numIn{}).NamedStream("first", numIn{}) }, ""},
		{"named, then unnamed", func(b *dsl.Builder) { b.NamedStream("first", numIn{}).Streams(numIn{}) }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := dsl.New("streams", nil)
			tt.decl(b)
			b.Spout("nums", dsl.Unreliable(noNums))
			topo, err := b.Build()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(topo.Streams) != 1 || topo.Streams[0].Name != "first" {
					t.Errorf("streams %v, want one named first", topo.Streams)
				}
				return
			}
			var ve *dsl.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0] != tt.want {
				t.Fatalf("Build = %v, want the one problem %q", err, tt.want)
			}
		})
	}
}

// Storm's default topology.subprocess.timeout.secs is 30.
func TestDefaultSubprocessTimeout(t *testing.T) {
	b := dsl.New("defaults", nil)
	b.Spout("nums", dsl.Unreliable(noNums))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Settings.SubprocessTimeout; got != 30*time.Second {
		t.Errorf("default subprocess timeout = %v, want 30s", got)
	}
	if got := topo.Components[0].Settings.SubprocessTimeout; got != 30*time.Second {
		t.Errorf("a component's default subprocess timeout = %v, want 30s", got)
	}
}
