package routing_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

// A spout emits direct as a bolt does (Storm's emitDirect from a spout): to
// the task it names only, tracked when the edge to that task is anchored.
func TestEmitSpoutDirectDeliversToTheNamedTaskOnly(t *testing.T) {
	p := compile(t, dsl.Conf{dsl.AckerTasks: 1}, func(b *dsl.Builder) {
		s := b.Spout("numbers", reliable[num]())
		b.Anchored(s, b.Bolt("anchored", sink[num](), dsl.Parallelism(2)), dsl.Direct[num]())
		b.Unanchored(s, b.Bolt("loose", sink[num](), dsl.Parallelism(2)), dsl.Direct[num]())
	})
	anchored, loose := tasksOf(p, "anchored"), tasksOf(p, "loose")
	r, rec := routerOf(p, "numbers", 0)

	root, err := r.EmitSpout(num{1}, true, anchored[1])
	if err != nil || root == 0 {
		t.Fatalf("EmitSpoutDirect to an anchored task: root %d, %v", root, err)
	}
	if got := rec.deliveries(); !reflect.DeepEqual(got, []int{anchored[1]}) {
		t.Errorf("delivered to %v, want only %d", got, anchored[1])
	}
	if rec.calls[0].Kind != "track" || rec.calls[1].Kind != "anchor" || rec.calls[2].ID.Root != root {
		t.Errorf("calls %+v, want the tree tracked, the edge anchored, then the delivery", rec.calls)
	}

	rec.calls = nil // a spout's emit with an id is tracked on every edge (Storm)
	if root, err := r.EmitSpout(num{2}, true, loose[0]); err != nil || root == 0 {
		t.Errorf("direct emit to an unanchored task: root %d, %v; want a tracked delivery", root, err)
	}
	if len(rec.calls) != 3 || rec.calls[2].Task != loose[0] || rec.calls[2].ID.Root == 0 {
		t.Errorf("calls %+v, want the tree tracked, the edge anchored, then the delivery to %d", rec.calls, loose[0])
	}

	rec.calls = nil
	if root, err := r.EmitSpout(num{3}, false, anchored[0]); err != nil || root != 0 || len(rec.calls) != 1 {
		t.Errorf("untracked EmitSpoutDirect: root %d, %v, calls %+v", root, err, rec.calls)
	}
}

func TestEmitSpoutDirectRefusesWhatStormRefuses(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		s := b.Spout("numbers", reliable[num]())
		b.Anchored(s, b.Bolt("direct", sink[num](), dsl.Parallelism(2)), dsl.Direct[num]())
		w := b.Spout("words", reliable[word]())
		b.Anchored(w, b.Bolt("shuffled", sink[word]()), dsl.Shuffle[word]())
	})
	numbers, _ := routerOf(p, "numbers", 0)
	words, rec := routerOf(p, "words", 0)
	for _, tc := range []struct {
		name string
		emit func() error
		want string
	}{
		{"a grouped emit on a direct stream", func() error { _, err := numbers.EmitSpout(num{1}, true, 0); return err }, "the stream is direct"},
		{"a task that does not subscribe", func() error { _, err := numbers.EmitSpout(num{1}, true, 999); return err }, "task 999 does not subscribe"},
		{"a direct emit on a shuffled stream", func() error {
			_, err := words.EmitSpout(word{"w"}, true, tasksOf(p, "shuffled")[0])
			return err
		}, "subscribers do not use direct grouping"},
	} {
		var ee *component.EmitError
		if err := tc.emit(); !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an EmitError saying %q", tc.name, err, tc.want)
		}
	}
	for _, c := range rec.calls { // the refused message's tree is failed at once
		if c.Kind != "track" && c.Kind != "fail" {
			t.Errorf("a refused emit routed %+v", rec.calls)
		}
	}
}

// Every task runs in one process: local-or-shuffle and none spread as shuffle.
func TestLocalOrShuffleAndNoneRouteAsShuffle(t *testing.T) {
	for _, g := range []dsl.Grouping{dsl.LocalOrShuffle[num](), dsl.None[num]()} {
		p := compile(t, nil, func(b *dsl.Builder) {
			b.Anchored(b.Spout("numbers", unreliable[num]()), b.Bolt("workers", sink[num](), dsl.Parallelism(3)), g)
		})
		r, rec := routerOf(p, "numbers", 0)
		for i := range 6 {
			if _, err := r.EmitSpout(num{i}, false, 0); err != nil {
				t.Fatal(err)
			}
		}
		count := map[int]int{}
		for _, task := range rec.deliveries() {
			count[task]++
		}
		for _, task := range tasksOf(p, "workers") {
			if count[task] != 2 {
				t.Errorf("%v: task %d got %d of 6 tuples, want 2 (%v)", g, task, count[task], count)
			}
		}
	}
}
