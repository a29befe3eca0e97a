package supervision_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// Sentence and Word are the streams of the word count examples.
type (
	Sentence struct{ Text string }
	Word     struct{ Text string }
)

// Run hosts a topology until Stop: two sentences are split into words, counted
// by word (fields grouping), and each sentence is acked once all its words are
// counted.
func ExampleRun() {
	sentences := []string{"the cow jumped over the moon", "the moon is bright"}
	var (
		next, acked int // touched only by the spout's task
		done        = make(chan struct{})
		mu          sync.Mutex // mu guards counts
		counts      = map[string]int{}
	)
	b := dsl.New("wordcount", nil)
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.Reliable(
		func() (int, Sentence, bool) {
			if next == len(sentences) {
				return 0, Sentence{}, false
			}
			next++
			return next, Sentence{sentences[next-1]}, true
		},
		func(int) {
			if acked++; acked == len(sentences) {
				close(done)
			}
		},
		func(id int) { fmt.Println("nacked", id) },
	))
	split := b.Bolt("split", dsl.AutoAck(func(s Sentence, out dsl.Emitter) error {
		for _, w := range strings.Fields(s.Text) {
			out.Emit(Word{w})
		}
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.AutoAck(func(w Word, _ dsl.Emitter) error {
		mu.Lock()
		defer mu.Unlock()
		counts[w.Text]++
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(spout, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}

	running, err := supervision.Run(context.Background(), topo)
	if err != nil {
		fmt.Println(err)
		return
	}
	<-done
	fmt.Println("acked:", running.Stats().Component("sentences").Acked)
	if err := running.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}

	mu.Lock()
	defer mu.Unlock()
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		return counts[words[i]] > counts[words[j]] || counts[words[i]] == counts[words[j]] && words[i] < words[j]
	})
	for i, w := range words {
		words[i] = fmt.Sprintf("%s=%d", w, counts[w])
	}
	fmt.Println(strings.Join(words, " "))
	// Output:
	// acked: 2
	// the=3 moon=2 bright=1 cow=1 is=1 jumped=1 over=1
}

// With WithoutRestarts the first task failure stops the topology, and Wait
// returns an *actors.TaskError naming the component and task that failed.
func ExampleWithoutRestarts() {
	var calls int // touched only by the spout's task
	b := dsl.New("fragile", nil)
	spout := b.Spout("flaky", dsl.Unreliable(func() (Word, bool) {
		if calls++; calls == 3 {
			panic("source broke")
		}
		return Word{"ok"}, true
	}))
	b.Anchored(spout, b.Bolt("sink", dsl.Terminator(func(Word) {})), dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}

	running, err := supervision.Run(context.Background(), topo, supervision.WithoutRestarts())
	if err != nil {
		fmt.Println(err)
		return
	}
	err = running.Wait()
	var failed *actors.TaskError
	if errors.As(err, &failed) {
		fmt.Printf("component %q, task %d failed: %v\n", failed.Component, failed.Task, failed.Err)
	}
	fmt.Println(errors.Is(running.Stop(context.Background()), supervision.ErrStopped))
	// Output:
	// component "flaky", task 1 failed: panic: source broke
	// true
}
