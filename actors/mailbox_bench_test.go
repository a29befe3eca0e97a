package actors

import (
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// countingInvoker counts data batches and signals when it has seen want.
type countingInvoker struct {
	n    int
	want int
	done chan struct{}
}

func (c *countingInvoker) InvokeSystemMessage(any) {}
func (c *countingInvoker) InvokeUserMessage(m any) {
	if b, ok := m.(*tupleBatch); ok {
		c.n += b.len() + 1
		if c.n >= c.want {
			close(c.done)
		}
	}
}
func (c *countingInvoker) EscalateFailure(any, any) {}

// BenchmarkMailboxDataLane measures one batch through the data lane: post from one
// goroutine, served by the mailbox on the default dispatcher.
func BenchmarkMailboxDataLane(b *testing.B) {
	for _, slots := range []int{8, 256} {
		b.Run(map[int]string{8: "ring8", 256: "ring256"}[slots], func(b *testing.B) {
			m := newMailbox(slots, 1)
			inv := &countingInvoker{want: b.N, done: make(chan struct{})}
			m.RegisterHandlers(inv, actor.NewDefaultDispatcher(300))
			batch := &tupleBatch{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.putData(1, batch)
			}
			<-inv.done
		})
	}
}

// BenchmarkMailboxControlLane measures control posts from two goroutines.
func BenchmarkMailboxControlLane(b *testing.B) {
	m := newMailbox(8, 1)
	var seen sync.WaitGroup
	seen.Add(b.N)
	m.RegisterHandlers(&ctlInvoker{wg: &seen}, actor.NewDefaultDispatcher(300))
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				m.PostUserMessage(tick{})
			}
		}(b.N/2 + g*(b.N%2))
	}
	wg.Wait()
	seen.Wait()
}

type ctlInvoker struct{ wg *sync.WaitGroup }

func (c *ctlInvoker) InvokeSystemMessage(any) {}
func (c *ctlInvoker) InvokeUserMessage(m any) {
	if _, ok := m.(tick); ok {
		c.wg.Done()
	}
}
func (c *ctlInvoker) EscalateFailure(any, any) {}

// funcInvoker hands every user message to fn.
type funcInvoker struct{ fn func(any) }

func (f *funcInvoker) InvokeSystemMessage(any)  {}
func (f *funcInvoker) InvokeUserMessage(m any)  { f.fn(m) }
func (f *funcInvoker) EscalateFailure(any, any) {}
