package supervision_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"go.uber.org/zap"

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
	fmt.Println("acked:", running.Stats().Components["sentences"].Acked)
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
// returns a *supervision.TaskError naming the component and task that failed.
// (The panic is also logged, to stderr by default; this example silences it.)
func ExampleWithoutRestarts() {
	var calls int // touched only by the spout's task
	b := dsl.New("fragile", nil)
	spout := b.Spout("flaky", dsl.Unreliable(func() (Word, bool) {
		if calls++; calls == 3 {
			panic("source broke")
		}
		return Word{"ok"}, true
	}))
	b.Unanchored(spout, b.Bolt("sink", dsl.Terminator(func(Word) {})), dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}

	running, err := supervision.Run(context.Background(), topo,
		supervision.WithoutRestarts(), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = running.Wait()
	var failed *supervision.TaskError
	if errors.As(err, &failed) {
		fmt.Printf("component %q, task %d failed: %v\n", failed.Component, failed.Task, failed.Err)
	}
	fmt.Println(errors.Is(running.Stop(context.Background()), supervision.ErrStopped))
	// Output:
	// component "flaky", task 1 failed: panic: source broke
	// true
}

// Order and Payment are the two input streams of the join example; Paid is
// what it emits. Both inputs carry an order id.
type (
	Order struct {
		ID   int
		Item string
	}
	Payment struct {
		OrderID int
		Amount  int
	}
	Paid struct {
		OrderID int
		Item    string
		Amount  int
	}
)

// Keyed is the join's input type: every stream a bolt subscribes to must be
// assignable to its input type, so a bolt joining two streams takes an
// interface both implement (or any).
type Keyed interface{ JoinKey() int }

func (o Order) JoinKey() int   { return o.ID }
func (p Payment) JoinKey() int { return p.OrderID }

// join holds each side of an order until the other side arrives. It is one
// task's state: Manual makes one per task, so it needs no lock.
type join struct {
	orders   map[int]dsl.Tuple
	payments map[int]dsl.Tuple
}

func (j *join) Execute(in Keyed, input dsl.Tuple, c dsl.Collector) error {
	key := in.JoinKey()
	switch in.(type) {
	case Order:
		j.orders[key] = input
	case Payment:
		j.payments[key] = input
	}
	order, hasOrder := j.orders[key]
	payment, hasPayment := j.payments[key]
	if !hasOrder || !hasPayment {
		return nil // held: acked once the other side arrives
	}
	delete(j.orders, key)
	delete(j.payments, key)
	o, p := order.Value.(Order), payment.Value.(Payment)
	// Anchored to both inputs: the joined tuple belongs to the order's tree and
	// to the payment's, so each spout hears of its message only once Paid is
	// processed downstream.
	c.EmitAnchored([]dsl.Tuple{order, payment}, Paid{OrderID: key, Item: o.Item, Amount: p.Amount})
	c.Ack(order)
	c.Ack(payment)
	return nil
}

// A join: orders and payments come from two reliable spouts; a fields grouping
// on the order id sends both sides of an order to the same task of a Manual
// bolt, which holds an input until it has one of each, emits the joined tuple
// anchored to both and acks both. Every message is acked once its order is
// paid and the result recorded.
func Example_join() {
	orders := []Order{{1, "book"}, {2, "lamp"}, {3, "tea"}}
	payments := []Payment{{3, 4}, {1, 12}, {2, 30}} // in another order
	var (
		mu      sync.Mutex // mu guards acked, paid and trees
		acked   int
		paid    []Paid
		trees   = map[int]int{}
		allDone = make(chan struct{})
	)
	ack := func() {
		mu.Lock()
		defer mu.Unlock()
		if acked++; acked == len(orders)+len(payments) {
			close(allDone)
		}
	}
	nack := func(id int) { fmt.Println("nacked", id) }
	var nextOrder, nextPayment int // each touched only by its spout's task
	b := dsl.New("join", nil)
	b.Streams(Paid{})
	orderSpout := b.Spout("orders", dsl.Reliable(func() (int, Order, bool) {
		if nextOrder == len(orders) {
			return 0, Order{}, false
		}
		nextOrder++
		return nextOrder, orders[nextOrder-1], true
	}, func(int) { ack() }, nack))
	paymentSpout := b.Spout("payments", dsl.Reliable(func() (int, Payment, bool) {
		if nextPayment == len(payments) {
			return 0, Payment{}, false
		}
		nextPayment++
		return nextPayment, payments[nextPayment-1], true
	}, func(int) { ack() }, nack))
	joiner := b.Bolt("join", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Keyed] {
		return &join{orders: map[int]dsl.Tuple{}, payments: map[int]dsl.Tuple{}}
	}), dsl.Parallelism(2))
	record := b.Bolt("record", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[Paid] {
		return recorder(func(p Paid, input dsl.Tuple, c dsl.Collector) error {
			mu.Lock()
			paid = append(paid, p)
			trees[p.OrderID] = 1 + len(input.ID.Roots) // the trees input belongs to
			mu.Unlock()
			c.Ack(input)
			return nil
		})
	}))
	b.Anchored(orderSpout, joiner, dsl.Fields(func(o Order) int { return o.ID }, "ID"))
	b.Anchored(paymentSpout, joiner, dsl.Fields(func(p Payment) int { return p.OrderID }, "OrderID"))
	b.Anchored(joiner, record, dsl.Shuffle[Paid]())
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
	<-allDone
	if err := running.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(paid, func(i, j int) bool { return paid[i].OrderID < paid[j].OrderID })
	for _, p := range paid {
		fmt.Printf("order %d: %s, paid %d (in %d trees)\n", p.OrderID, p.Item, p.Amount, trees[p.OrderID])
	}
	fmt.Println("acked:", acked)
	// Output:
	// order 1: book, paid 12 (in 2 trees)
	// order 2: lamp, paid 30 (in 2 trees)
	// order 3: tea, paid 4 (in 2 trees)
	// acked: 6
}

// recorder adapts a function to a dsl.ManualHandler.
type recorder func(p Paid, input dsl.Tuple, c dsl.Collector) error

func (r recorder) Execute(p Paid, input dsl.Tuple, c dsl.Collector) error { return r(p, input, c) }
