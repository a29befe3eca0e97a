package dsl_test

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

type fuzzA struct{ K string }
type fuzzB struct {
	N int
	S string `storm:"s"`
}
type fuzzC struct{ F float64 }

// fuzzReader hands out bytes of the fuzz input as small decisions.
type fuzzReader struct {
	data []byte
	i    int
}

func (r *fuzzReader) next(n int) int {
	if r.i >= len(r.data) || n <= 0 {
		return 0
	}
	v := int(r.data[r.i]) % n
	r.i++
	return v
}

// FuzzBuild builds random topology definitions: every one must yield a topology
// or a *ValidationError, never a panic, and a topology that builds must be sound.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 1, 1, 0, 3, 1, 2, 0, 1, 0, 0, 4, 1, 2})
	f.Add([]byte{5, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	f.Add([]byte("cycles and bad conf everywhere"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		topo, err := randomTopology(r).Build()
		if err != nil {
			var ve *dsl.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("Build returned %T %v, want a *ValidationError with problems", err, err)
			}
			return
		}
		checkSound(t, topo)
	})
}

func randomTopology(r *fuzzReader) *dsl.Builder {
	confs := []dsl.Conf{nil, {dsl.MaxSpoutPending: 0}, {dsl.MessageTimeout: "30"}, {dsl.ReceiveBufferSize: 100},
		{dsl.TickFrequency: time.Millisecond}, {dsl.Debug: 1}, {dsl.AckerTasks: -1}}
	b := dsl.New([]string{"t", ""}[r.next(2)], confs[r.next(len(confs))])
	samples := []any{fuzzA{}, fuzzB{}, fuzzC{}, 7, nil}
	for i, n := 0, r.next(4); i < n; i++ {
		b.Streams(samples[r.next(len(samples))])
	}
	ids := []string{"a", "b", "c", "d", "", "__x", "a"}
	var comps []string
	for i, n := 0, 1+r.next(6); i < n; i++ {
		id := ids[r.next(len(ids))]
		opts := []dsl.Option{dsl.Parallelism(r.next(4))}
		if r.next(4) == 0 {
			opts = append(opts, dsl.WithConf(confs[r.next(len(confs))]))
		}
		if r.next(2) == 0 {
			comps = append(comps, b.Spout(id, spouts[r.next(len(spouts))], opts...))
			continue
		}
		if r.next(5) == 0 {
			opts = append(opts, dsl.LifecycleTuples(samples[r.next(len(samples)-1)], nil))
		}
		comps = append(comps, b.Bolt(id, bolts[r.next(len(bolts))], opts...))
	}
	comps = append(comps, "nowhere")
	groupings := []dsl.Grouping{dsl.Shuffle[fuzzA](), dsl.Shuffle[fuzzB](), dsl.All[fuzzC](), dsl.Direct[fuzzB](),
		dsl.Global[fuzzA](), dsl.Fields(func(a fuzzA) string { return a.K }, "K"),
		dsl.Fields(func(b fuzzB) int { return b.N }, "s", "missing"), {}}
	for i, n := 0, r.next(8); i < n; i++ {
		from, to := comps[r.next(len(comps))], comps[r.next(len(comps))]
		if r.next(2) == 0 {
			b.Anchored(from, to, groupings[r.next(len(groupings))])
		} else {
			b.Unanchored(from, to, groupings[r.next(len(groupings))])
		}
	}
	return b
}

var spouts = []*dsl.SpoutSpec{
	dsl.Unreliable(func() (fuzzA, bool) { return fuzzA{}, false }),
	dsl.Reliable(func() (int, fuzzB, bool) { return 0, fuzzB{}, false }, func(int) {}, func(int) {}),
	nil,
}

var bolts = []*dsl.BoltSpec{
	dsl.AutoAck(func(fuzzA, dsl.Emitter) error { return nil }),
	dsl.AutoAck(func(any, dsl.Emitter) error { return nil }),
	dsl.Terminator(func(fuzzB) {}),
	dsl.AutoAck(func(fuzzC, dsl.Emitter) error { return nil }),
	nil,
}

// checkSound verifies what Build promises about a valid topology.
func checkSound(t *testing.T, topo *dsl.Topology) {
	t.Helper()
	fed := map[string]bool{}
	for _, e := range topo.Edges {
		if e.To.Bolt == nil || !e.Stream.Type.AssignableTo(e.To.Bolt.Input) {
			t.Fatalf("unsound edge %v", e)
		}
		fed[e.To.ID] = true
	}
	for _, c := range topo.Components {
		if c.Parallelism < 1 || (c.Bolt != nil && !fed[c.ID]) || (c.Bolt == nil) == (c.Spout == nil) {
			t.Fatalf("unsound component %q", c.ID)
		}
		if s := c.Settings; s.ReceiveBufferSize&(s.ReceiveBufferSize-1) != 0 || s.MaxSpoutPending < 1 {
			t.Fatalf("unsound settings %+v", s)
		}
	}
	checkNumbering(t, topo)
	_ = fmt.Sprint(topo.Edges)
}

// checkNumbering verifies the task ids: 1..n without gaps, each component's in
// a row, components in the byte order of their ids, then the ackers.
func checkNumbering(t *testing.T, topo *dsl.Topology) {
	t.Helper()
	byID := append([]*dsl.Component(nil), topo.Components...)
	sort.Slice(byID, func(i, j int) bool { return byID[i].ID < byID[j].ID })
	next := 1
	for _, c := range byID {
		if len(c.Tasks) != c.Parallelism {
			t.Fatalf("component %q has tasks %v for parallelism %d", c.ID, c.Tasks, c.Parallelism)
		}
		for _, id := range c.Tasks {
			if id != next {
				t.Fatalf("component %q has tasks %v, want them to start at %d", c.ID, c.Tasks, next)
			}
			next++
		}
	}
	if len(topo.AckerTasks) != topo.Settings.AckerTasks {
		t.Fatalf("%d acker tasks, want %d", len(topo.AckerTasks), topo.Settings.AckerTasks)
	}
	for _, id := range topo.AckerTasks {
		if id != next {
			t.Fatalf("acker tasks %v, want them to follow the components' from %d", topo.AckerTasks, next)
		}
		next++
	}
}
