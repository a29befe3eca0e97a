package dsl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// buildStateful builds nums -> [through...] -> count, count a stateful bolt,
// over unanchored edges.
func buildStateful(conf dsl.Conf, through ...*dsl.BoltSpec) (*dsl.Topology, error) {
	b := dsl.New("stateful", conf)
	from := b.Spout("nums", dsl.Unreliable(noNums))
	for i, spec := range through {
		to := b.Bolt(string(rune('a'+i)), spec)
		b.Unanchored(from, to, dsl.Shuffle[numIn]())
		from = to
	}
	count := b.Bolt("count", dsl.Stateful(func(numIn, *dsl.State[string, int], dsl.Emitter) error { return nil }))
	b.Unanchored(from, count, dsl.Shuffle[numIn]())
	return b.Build()
}

// Inputs of stateful bolts are acked when a checkpoint commits: the
// checkpoint interval may be half the message timeout, not more.
func TestCheckpointIntervalIsAtMostHalfTheMessageTimeout(t *testing.T) {
	const why = "the interval must be at most half the message timeout"
	for _, tt := range []struct {
		interval time.Duration
		ok       bool
	}{{5 * time.Second, true}, {5*time.Second + time.Millisecond, false}, {20 * time.Second, false}} {
		_, err := buildStateful(dsl.Conf{dsl.MessageTimeout: 10 * time.Second, dsl.CheckpointInterval: tt.interval})
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), why) {
			t.Errorf("interval %v of a 10 s timeout: Build = %v, want ok %v", tt.interval, err, tt.ok)
		}
	}
}

// A spout's max pending caps its messages per checkpoint interval in a
// topology with state: Build warns when that is under 10000 messages/s.
func TestBuildWarnsOfASpoutMaxPendingThrottles(t *testing.T) {
	for _, tt := range []struct {
		pending  int
		interval time.Duration
		warning  string // "" for none
	}{
		{10000, time.Second, ""},
		{9999, time.Second, "9999 messages/s"},
		{1000, 500 * time.Millisecond, "2000 messages/s"},
		{100000, time.Second, ""},
	} {
		topo, err := buildStateful(dsl.Conf{dsl.MaxSpoutPending: tt.pending, dsl.CheckpointInterval: tt.interval})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range topo.Warnings {
			if strings.Contains(w, `spout "nums": the topology has stateful bolts`) {
				got = append(got, w)
			}
		}
		if tt.warning == "" && len(got) > 0 || tt.warning != "" && (len(got) != 1 || !strings.Contains(got[0], ": "+tt.warning)) {
			t.Errorf("pending %d per %v: warnings %q, want %q", tt.pending, tt.interval, got, tt.warning)
		}
	}
}

// A stateful bolt fed by a window, even through another bolt, is refused:
// the checkpoint's cut would miss what the window holds.
func TestStatefulBoltFedThroughAWindowIsRefused(t *testing.T) {
	window := dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error {
		return func(dsl.Window[numIn], dsl.Emitter) error { return nil }
	}, dsl.WindowSpec[numIn]{Count: 2})
	_, err := buildStateful(nil, window, nopBolt())
	if err == nil || !strings.Contains(err.Error(), `stateful bolt "count" is fed by window "a"`) {
		t.Errorf("Build = %v, want the window named", err)
	}
	if _, err := buildStateful(nil, nopBolt(), nopBolt()); err != nil {
		t.Errorf("through plain bolts: %v", err)
	}
	// A window beside the stateful bolt, not upstream of it, is no concern.
	b := dsl.New("beside", nil)
	nums := b.Spout("nums", dsl.Unreliable(noNums))
	b.Unanchored(nums, b.Bolt("count", dsl.Stateful(func(numIn, *dsl.State[string, int], dsl.Emitter) error { return nil })), dsl.Shuffle[numIn]())
	w := b.Bolt("window", window)
	b.Unanchored(nums, w, dsl.Shuffle[numIn]())
	b.Unanchored(w, b.Bolt("sink", nopBolt()), dsl.Shuffle[numIn]())
	if _, err := b.Build(); err != nil {
		t.Errorf("a window beside a stateful bolt: %v", err)
	}
}

// hidden keeps its count in an unexported field, which JSON does not store.
type hidden struct{ n int }

// Build refuses a stateful bolt whose state would not come back from the
// store as it was stored, naming the key or the value type.
func TestStatefulBoltOfStateThatCannotRoundTripIsRefused(t *testing.T) {
	build := func(spec *dsl.BoltSpec) error {
		b := dsl.New("state-types", nil)
		b.Unanchored(b.Spout("nums", dsl.Unreliable(noNums)), b.Bolt("count", spec), dsl.Shuffle[numIn]())
		_, err := b.Build()
		return err
	}
	err := build(dsl.Stateful(func(numIn, *dsl.State[string, hidden], dsl.Emitter) error { return nil }))
	if err == nil || !strings.Contains(err.Error(), `stateful bolt "count": its state's value type dsl_test.hidden cannot be checkpointed faithfully`) {
		t.Errorf("a value type with only unexported fields: Build = %v", err)
	}
	err = build(dsl.Stateful(func(numIn, *dsl.State[hidden, int], dsl.Emitter) error { return nil }))
	if err == nil || !strings.Contains(err.Error(), `stateful bolt "count": its state's key type dsl_test.hidden cannot be checkpointed faithfully`) {
		t.Errorf("a key type with only unexported fields: Build = %v", err)
	}
}

// A bolt's activation and deactivation tuples must be of its input type.
func TestLifecycleTuplesOfTheWrongTypeAreRefused(t *testing.T) {
	build := func(activation, deactivation any) error {
		b := dsl.New("lifecycle", nil)
		b.Unanchored(b.Spout("nums", dsl.Unreliable(noNums)), b.Bolt("sink", nopBolt(), dsl.LifecycleTuples(activation, deactivation)), dsl.Shuffle[numIn]())
		_, err := b.Build()
		return err
	}
	if err := build(numIn{1}, numIn{2}); err != nil {
		t.Errorf("tuples of the input type: %v", err)
	}
	for _, tt := range []struct{ activation, deactivation any }{{"up", nil}, {nil, 7}} {
		err := build(tt.activation, tt.deactivation)
		if err == nil || !strings.Contains(err.Error(), `bolt "sink": activation/deactivation tuple of type`) || !strings.Contains(err.Error(), "is not its input type dsl_test.numIn") {
			t.Errorf("LifecycleTuples(%v, %v): Build = %v", tt.activation, tt.deactivation, err)
		}
	}
}

// A stream is direct or not: its subscribers may share a kind of grouping,
// not mix direct with another.
func TestAStreamIsDirectOrNot(t *testing.T) {
	build := func(first, second dsl.Grouping) error {
		b := dsl.New("directness", nil)
		src := b.Bolt("src", nopBolt())
		b.Unanchored(b.Spout("nums", dsl.Unreliable(noNums)), src, dsl.Shuffle[numIn]())
		b.Unanchored(src, b.Bolt("a", nopBolt()), first)
		b.Unanchored(src, b.Bolt("b", nopBolt()), second)
		_, err := b.Build()
		return err
	}
	if err := build(dsl.Shuffle[numIn](), dsl.Global[numIn]()); err != nil {
		t.Errorf("two non-direct groupings: %v", err)
	}
	if err := build(dsl.Direct[numIn](), dsl.Direct[numIn]()); err != nil {
		t.Errorf("two direct groupings: %v", err)
	}
	if err := build(dsl.Shuffle[numIn](), dsl.Direct[numIn]()); err == nil || !strings.Contains(err.Error(), `stream "numIn" of "src" mixes direct and non-direct groupings`) {
		t.Errorf("direct and shuffle: Build = %v", err)
	}
}

// A bolt subscribed to a stream of another type than it takes is refused.
func TestBuildRefusesAnEdgeOfAnotherTypeThanTheBoltTakes(t *testing.T) {
	type other struct{ S string }
	b := dsl.New("mismatch", nil)
	b.Streams(other{})
	sink := b.Bolt("sink", dsl.AutoAck(func(other, dsl.Emitter) error { return nil }))
	b.Unanchored(b.Spout("nums", dsl.Unreliable(noNums)), sink, dsl.Shuffle[numIn]())
	_, err := b.Build()
	if err == nil || !strings.Contains(err.Error(), `edge "nums" -> "sink": bolt "sink" takes dsl_test.other and cannot accept stream "numIn"`) {
		t.Errorf("Build = %v", err)
	}
}

// A bolt anchored to a reliable spout's tuples emits tracked tuples: a
// Terminator after it is refused, as one right after the spout is.
func TestBuildRefusesATerminatorOnTrackedTuplesTwoEdgesOn(t *testing.T) {
	b := dsl.New("terminated", nil)
	src := b.Spout("nums", dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {}))
	mid := b.Bolt("mid", nopBolt())
	b.Anchored(src, mid, dsl.Shuffle[numIn]())
	b.Anchored(mid, b.Bolt("end", dsl.Terminator(func(numIn) {})), dsl.Shuffle[numIn]())
	_, err := b.Build()
	if err == nil || !strings.Contains(err.Error(), `edge "mid" -> "end": bolt "end" is a Terminator`) {
		t.Errorf("Build = %v", err)
	}
}

// A Direct grouping needs a spout that names a task: an unreliable spout
// cannot, a reliable one's Source can.
func TestBuildRefusesADirectGroupingFromAnUnreliableSpout(t *testing.T) {
	build := func(spout *dsl.SpoutSpec) error {
		b := dsl.New("direct-spout", nil)
		b.Anchored(b.Spout("nums", spout), b.Bolt("sink", nopBolt()), dsl.Direct[numIn]())
		_, err := b.Build()
		return err
	}
	err := build(dsl.Unreliable(noNums))
	if err == nil || !strings.Contains(err.Error(), `spout "nums" is unreliable and cannot name a task`) {
		t.Errorf("an unreliable spout: Build = %v", err)
	}
	err = build(dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {}))
	if err != nil && strings.Contains(err.Error(), "is unreliable") {
		t.Errorf("a reliable spout: Build = %v", err)
	}
}
