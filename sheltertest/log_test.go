package sheltertest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// A Log's positions make a stateful topology resume where its last
// checkpoint left off: the second run, on the same store with a new Log,
// counts only what the first did not.
func ExampleNewLog() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	store := state.NewMemory()
	var words []Word
	for _, w := range strings.Fields("to be or not to be") {
		words = append(words, Word{Text: w})
	}
	for run := 1; run <= 2; run++ {
		log := sheltertest.NewLog(words...)
		b := dsl.New("counts", nil)
		b.Streams(Word{})
		src := b.Spout("words", log.Spout())
		count := b.Bolt("count", dsl.Stateful(func(w Word, st *dsl.State[string, int], _ dsl.Emitter) error {
			n, _ := st.Get(w.Text)
			st.Put(w.Text, n+1)
			return nil
		}))
		b.Anchored(src, count, dsl.Shuffle[Word]())
		topo, err := b.Build()
		if err != nil {
			fmt.Println(err)
			return
		}
		r, err := supervision.Run(ctx, topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := log.WaitDrained(ctx); err != nil {
			fmt.Println(err)
		}
		if err := r.Stop(ctx); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("run %d: handed out %d, rewound %d times\n", run, handedOut(log, len(words)), log.Rewinds())
	}
	var counts []string
	_ = store.Scan(ctx, "bolt/count/0", func(k, v []byte) error {
		counts = append(counts, fmt.Sprintf("%s=%d", k, int(v[0])/2)) // a varint of a small count
		return nil
	})
	fmt.Println(counts)
	// Output:
	// run 1: handed out 6, rewound 0 times
	// run 2: handed out 0, rewound 1 times
	// [be=2 not=1 or=1 to=2]
}

func handedOut[T any](log *sheltertest.Log[T], n int) int {
	total := 0
	for i := range n {
		total += log.Handouts(i)
	}
	return total
}

func TestLogHandsEachValueOnceAcrossTasks(t *testing.T) {
	var values []Order
	for i := range 7 {
		values = append(values, Order{ID: i})
	}
	log := sheltertest.NewLog(values...)
	b := dsl.New("split-log", dsl.Conf{dsl.MaxSpoutPending: 1})
	b.Streams(Order{})
	src := b.Spout("nums", log.Spout(), dsl.Parallelism(2))
	rec := new(sheltertest.Recorder[Order])
	b.Anchored(src, b.Bolt("rec", rec.Bolt()), dsl.Shuffle[Order]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	sheltertest.Start(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := log.WaitAcked(ctx); err != nil {
		t.Fatal(err)
	}
	if err := log.WaitDrained(ctx); err != nil {
		t.Fatal(err)
	}
	all := rec.All()
	slices.SortFunc(all, func(a, b Order) int { return a.ID - b.ID })
	if !slices.Equal(all, values) {
		t.Fatalf("recorded %v, want each value once", all)
	}
	if log.Acked() != len(values) {
		t.Fatalf("Acked %d", log.Acked())
	}
}

func TestLogWaitsEndWithTheContext(t *testing.T) {
	log := sheltertest.NewLog(Order{ID: 1}, Order{ID: 2})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := log.WaitAcked(ctx); err == nil || !strings.Contains(err.Error(), "0 of 2 values acked") {
		t.Fatalf("WaitAcked: %v", err)
	}
	if err := log.WaitDrained(ctx); err == nil || !strings.Contains(err.Error(), "log not drained") {
		t.Fatalf("WaitDrained: %v", err)
	}
}
