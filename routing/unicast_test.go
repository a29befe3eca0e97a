package routing_test

import (
	"reflect"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/routing"
)

// unicasts returns the tasks n untracked emits of v go to when the first goes
// through EmitSpout and the others through Unicast, with Unicast's answers.
func unicasts(t *testing.T, r *routing.Router, rec *recordingSink, v any, n int) (tasks []int, streams []string) {
	t.Helper()
	if _, err := r.EmitSpout(v, false, 0); err != nil {
		t.Fatal(err)
	}
	tasks = rec.deliveries()
	for range n - 1 {
		task, stream, ok := r.Unicast(v)
		if !ok {
			t.Fatalf("Unicast(%T) after an emit of that type = not ok, want a task", v)
		}
		tasks = append(tasks, task)
		streams = append(streams, stream.Name)
	}
	return tasks, streams
}

func TestUnicastPicksTheTaskEmitSpoutWouldPick(t *testing.T) {
	for name, plan := range map[string]func(*testing.T) *routing.Plan{
		"shuffle over 3": func(t *testing.T) *routing.Plan { return fanOut(t, dsl.Shuffle[word]()) },
		"global over 3":  func(t *testing.T) *routing.Plan { return fanOut(t, dsl.Global[word]()) },
		"none over 3":    func(t *testing.T) *routing.Plan { return fanOut(t, dsl.None[word]()) },
		"fields to 1": func(t *testing.T) *routing.Plan {
			return compile(t, nil, func(b *dsl.Builder) {
				b.Anchored(b.Spout("src", unreliable[word]()), b.Bolt("dst", sink[word]()),
					dsl.Fields(func(w word) string { panic("a key function is not called for one task") }, "W"))
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := plan(t)
			const n = 10
			byRoute, routed := routerOf(p, "src", 0)
			for range n {
				if _, err := byRoute.EmitSpout(word{"x"}, false, 0); err != nil {
					t.Fatal(err)
				}
			}
			want := routed.deliveries()
			r, rec := routerOf(p, "src", 0)
			got, streams := unicasts(t, r, rec, word{"x"}, n)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Unicast's tasks = %v, want EmitSpout's %v", got, want)
			}
			for i, s := range streams {
				if s != "word" {
					t.Errorf("Unicast %d: stream %q, want word", i+1, s)
				}
			}
			// And EmitSpout goes on from where Unicast left the round robin.
			if _, err := byRoute.EmitSpout(word{"x"}, false, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
				t.Fatal(err)
			}
			viaRoute, viaUnicast := routed.deliveries(), rec.deliveries()
			if got, want := viaUnicast[len(viaUnicast)-1], viaRoute[len(viaRoute)-1]; got != want {
				t.Errorf("the EmitSpout after the Unicasts went to task %d, want %d", got, want)
			}
		})
	}
}

func TestUnicastDeclinesWhatNeedsTheWholeRoute(t *testing.T) {
	twoSubscribers := func(t *testing.T) *routing.Plan {
		return compile(t, nil, func(b *dsl.Builder) {
			src := b.Spout("src", unreliable[word]())
			b.Anchored(src, b.Bolt("a", sink[word]()), dsl.Shuffle[word]())
			b.Anchored(src, b.Bolt("b", sink[word]()), dsl.Shuffle[word]())
		})
	}
	for name, plan := range map[string]func(*testing.T) *routing.Plan{
		"fields over 3": func(t *testing.T) *routing.Plan {
			return fanOut(t, dsl.Fields(func(w word) string { return w.W }, "W"))
		},
		"all over 3":      func(t *testing.T) *routing.Plan { return fanOut(t, dsl.All[word]()) },
		"two subscribers": twoSubscribers,
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := routerOf(plan(t), "src", 0)
			if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
				t.Fatal(err)
			}
			if task, _, ok := r.Unicast(word{"x"}); ok {
				t.Errorf("Unicast = task %d, want not ok", task)
			}
		})
	}
	t.Run("before any emit", func(t *testing.T) {
		r, _ := routerOf(fanOut(t, dsl.Shuffle[word]()), "src", 0)
		if task, _, ok := r.Unicast(word{"x"}); ok {
			t.Errorf("Unicast = task %d, want not ok", task)
		}
	})
	t.Run("another type than the last emitted", func(t *testing.T) {
		p := directTopology(t) // relay emits num (direct) and word (shuffle over 2)
		r, _ := routerOf(p, "relay", 0)
		if err := r.Emit(word{"x"}, nil, 0); err != nil {
			t.Fatal(err)
		}
		if task, _, ok := r.Unicast(num{1}); ok {
			t.Errorf("Unicast(num) after a word = task %d, want not ok", task)
		}
		if task, _, ok := r.Unicast("not a stream"); ok {
			t.Errorf("Unicast(string) = task %d, want not ok", task)
		}
		if _, _, ok := r.Unicast(word{"y"}); !ok {
			t.Errorf("Unicast(word) after a word = not ok, want a task")
		}
	})
	t.Run("direct", func(t *testing.T) {
		p := directTopology(t)
		r, _ := routerOf(p, "relay", 0)
		to := tasksOf(p, "dst")[1]
		if err := r.Emit(num{1}, nil, to); err != nil {
			t.Fatal(err)
		}
		if task, _, ok := r.Unicast(num{2}); ok {
			t.Errorf("Unicast on a direct stream = task %d, want not ok", task)
		}
	})
	t.Run("no subscriber", func(t *testing.T) {
		p := compile(t, nil, func(b *dsl.Builder) {
			relay := b.Bolt("relay", dsl.AutoAck(func(num, dsl.Emitter) error { return nil }))
			b.Anchored(b.Spout("src", unreliable[num]()), relay, dsl.Shuffle[num]())
			b.Spout("lonely", unreliable[word]()) // nobody subscribes to its stream
		})
		r, _ := routerOf(p, "lonely", 0)
		if _, err := r.EmitSpout(word{"x"}, false, 0); err != nil {
			t.Fatal(err)
		}
		if task, _, ok := r.Unicast(word{"y"}); ok {
			t.Errorf("Unicast with no subscriber = task %d, want not ok", task)
		}
	})
}

// A bolt's emit lets a grouping key function's panic through to the task,
// which fails the input (EmitSpout guards it instead): so a bolt's keyed
// stream takes Unicast too, picking by the key as Emit does.
func TestUnicastOfABoltPicksByTheKey(t *testing.T) {
	p := compile(t, nil, func(b *dsl.Builder) {
		relay := b.Bolt("relay", dsl.AutoAck(func(word, dsl.Emitter) error { return nil }))
		b.Anchored(b.Spout("src", unreliable[word]()), relay, dsl.Shuffle[word]())
		b.Anchored(relay, b.Bolt("dst", sink[word](), dsl.Parallelism(3)), dsl.Fields(func(w word) string {
			if w.W == "boom" {
				panic("no key for boom")
			}
			return w.W
		}, "W"))
	})
	keys := []string{"apple", "banana", "cherry", "date", "apple", "date", "fig"}
	byEmit, emitted := routerOf(p, "relay", 0)
	for _, k := range keys {
		if err := byEmit.Emit(word{k}, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := emitted.deliveries()
	r, rec := routerOf(p, "relay", 0)
	if err := r.Emit(word{keys[0]}, nil, 0); err != nil {
		t.Fatal(err)
	}
	got := rec.deliveries()
	for _, k := range keys[1:] {
		task, _, ok := r.Unicast(word{k})
		if !ok {
			t.Fatalf("Unicast(%q) = not ok, want a task", k)
		}
		got = append(got, task)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unicast's tasks = %v, want Emit's %v", got, want)
	}
	if len(map[int]bool{got[0]: true, got[1]: true, got[2]: true, got[3]: true}) < 2 {
		t.Fatalf("the keys went to %v: pick keys that spread", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Unicast with a panicking key function returned, want its panic")
		}
	}()
	r.Unicast(word{"boom"})
}
