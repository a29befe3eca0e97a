package sheltertest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
)

// broker stands in for an embedded broker (kfake, nats-server): it has a
// goroutine of its own from its start, and starts one per connection that
// lives until the broker closes, as a broker's side of a connection may.
type broker struct {
	quit chan struct{}
	wg   sync.WaitGroup
}

func startBroker() *broker {
	b := &broker{quit: make(chan struct{})}
	b.wg.Add(1)
	go b.run()
	return b
}

func (b *broker) run() { defer b.wg.Done(); <-b.quit }

// connect starts the broker's side of a client's connection.
func (b *broker) connect() {
	b.wg.Add(1)
	go b.serve()
}

func (b *broker) serve() { defer b.wg.Done(); <-b.quit }

// Close stops the broker and waits for its goroutines.
func (b *broker) Close() {
	close(b.quit)
	b.wg.Wait()
}

// publishing is a topology whose bolt connects to brk, as a sink connects to
// its broker.
func publishing(brk *broker, rec *sheltertest.Recorder[Word]) *dsl.Topology {
	b := dsl.New("publishing", nil)
	words := b.Spout("words", sheltertest.NewSource(Word{"hello"}).Spout())
	publish := b.Bolt("publish", rec.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Word] {
		brk.connect()
		return sheltertest.ManualFunc[Word](func(_ Word, in dsl.Tuple, c dsl.Collector) error {
			c.Ack(in)
			return nil
		})
	}))
	b.Anchored(words, publish, dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		panic(err)
	}
	return topo
}

// failures is a stand-in test that keeps its failures.
type failures struct {
	standIn
	errs []string
}

func (t *failures) Errorf(format string, args ...any) {
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}

// The cleanup order with an embedded broker. Cleanups run last in, first out:
// start the broker before Start and register its Close then, so that Start's
// cleanup, registered after it, stops the topology while the broker still
// answers, runs the leak checks, and only then the broker closes. (A defer
// in the test function would close the broker before any cleanup, under the
// running topology.) The broker's goroutines that exist at Start are not
// leaks; those it starts for the topology's connections outlive the topology
// until it closes, and the check names them, grouped by top function, unless
// IgnoreGoroutines exempts the broker's package.
func ExampleIgnoreGoroutines() {
	for _, exempt := range []bool{false, true} {
		t := &failures{}
		brk := startBroker() // before Start: its own goroutine is no leak
		t.Cleanup(brk.Close) // registered before Start's cleanup: runs after it
		if exempt {
			sheltertest.IgnoreGoroutines(t, "github.com/goshelter/goshelter/sheltertest_test.(*broker)")
		}
		rec := new(sheltertest.Recorder[Word])
		sheltertest.Start(t, publishing(brk, rec)) // its cleanup stops the topology, then checks
		if err := rec.Wait(context.Background(), 1); err != nil {
			fmt.Println(err)
			return
		}
		t.end() // the test ends: the topology stops, the checks run, the broker closes
		fmt.Println("exempt:", exempt, "failures:", len(t.errs))
		for _, e := range t.errs {
			lines := strings.Split(e, "\n")
			fmt.Println(strings.Join(lines[:2], "\n"))
		}
	}
	// Output:
	// exempt: false failures: 1
	// sheltertest: a goroutine outlived the test:
	//   1 × github.com/goshelter/goshelter/sheltertest_test.(*broker).serve [chan receive], created by github.com/goshelter/goshelter/sheltertest_test.(*broker).connect
	// exempt: true failures: 0
}

var _ testing.TB = (*failures)(nil)
