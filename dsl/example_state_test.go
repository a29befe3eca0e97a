package dsl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// lineLog is a source with positions over a log of words that outlives the
// topology (a topic's partition, say): its position is the index of the next
// word, so a checkpoint stores it and a new run rewinds to it. Its Close hook
// hears the end of its task's incarnation, where a real source closes its
// client. One task reads it: the examples run one spout task.
type lineLog struct {
	words  []string
	next   int // the index of the next word to hand out
	retry  []int
	out    int           // handed out and not yet acked or nacked
	done   chan struct{} // closed once every word is handed out and acked
	report func(string)
}

func (l *lineLog) Next() (int, Word, bool) {
	i := l.next
	if len(l.retry) > 0 {
		i, l.retry = l.retry[0], l.retry[1:]
	} else if l.next < len(l.words) {
		l.next++
	} else {
		return 0, Word{}, false
	}
	l.out++
	return i, Word{l.words[i]}, true
}

func (l *lineLog) Ack(int) {
	if l.out--; l.out == 0 && l.next == len(l.words) && len(l.retry) == 0 {
		close(l.done)
	}
}

func (l *lineLog) Nack(i int) { l.out--; l.retry = append(l.retry, i) }

// Position and Rewind put the source in the checkpoints.
func (l *lineLog) Position() []byte { return binary.AppendUvarint(nil, uint64(l.next)) }

func (l *lineLog) Rewind(position []byte) error {
	next, n := binary.Uvarint(position)
	if n <= 0 || next > uint64(len(l.words)) {
		return errors.New("lineLog: not a position of this log")
	}
	l.next, l.retry = int(next), nil
	l.report(fmt.Sprintf("rewound to word %d", next))
	return nil
}

// Close runs once, after the last Ack or Nack of the task's incarnation.
func (l *lineLog) Close() error {
	l.report(fmt.Sprintf("closed at word %d", l.next))
	return nil
}

// runCount runs a word count on store over words, a stateful bolt counting
// into its state, until every word handed out is acked, then stops it and
// returns the counts the bolt held at the end.
func runCount(store state.Store, words []string) (map[string]int, error) {
	done := make(chan struct{})
	var mu sync.Mutex // mu guards counts and the order of the reports
	counts := map[string]int{}
	report := func(s string) { mu.Lock(); fmt.Println(s); mu.Unlock() }
	b := dsl.New("count", dsl.Conf{dsl.CheckpointInterval: 10})
	b.Streams(Word{})
	spout := b.Spout("words", dsl.ReliableFrom(func(dsl.TaskInfo) *lineLog {
		return &lineLog{words: words, done: done, report: report}
	}))
	count := b.Bolt("count", dsl.Stateful(func(w Word, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get(w.Text)
		st.Put(w.Text, n+1)
		mu.Lock()
		for k, v := range st.All() {
			counts[k] = v
		}
		mu.Unlock()
		return nil
	}))
	b.Anchored(spout, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	topo, err := b.Build()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	running, err := supervision.Run(ctx, topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		return nil, err
	}
	select { // an input of a stateful bolt is acked once its checkpoint commits
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := running.Stop(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	return counts, nil
}

// A source with positions (Position and Rewind) is part of every checkpoint
// of a topology with state: a second run on the same store rewinds it to the
// committed position, so it hands out only the words added since, and the
// stateful bolt's counts go on from the committed state. A first run on an
// empty store is not rewound. Close reports the end of each run's
// incarnation, after its last Ack.
func ExampleSource_positioned() {
	store := state.NewMemory()
	counts, err := runCount(store, []string{"a", "b", "a"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("first run:", counts)

	counts, err = runCount(store, []string{"a", "b", "a", "b", "c"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("second run:", counts)
	// Output:
	// closed at word 3
	// first run: map[a:2 b:1]
	// rewound to word 3
	// closed at word 5
	// second run: map[a:2 b:2 c:1]
}

// A stateful bolt keeps a typed key-value state per task, checkpointed with
// the sources' positions: here a word count whose counts are read back, in
// key order, from the state the bolt holds.
func ExampleStateful() {
	counts, err := runCount(state.NewMemory(), []string{"to", "be", "or", "not", "to", "be"})
	if err != nil {
		fmt.Println(err)
		return
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		fmt.Println(k, counts[k])
	}
	// Output:
	// closed at word 6
	// be 2
	// not 1
	// or 1
	// to 2
}
