package sheltertest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/goshelter/goshelter/dsl"
)

// Log is a reliable source over a fixed sequence of values, like a topic's
// partition: it has positions, so in a topology with stateful bolts every
// checkpoint stores where each spout task is, and a restart rewinds the Log
// to the committed positions (see dsl.Stateful). Build the same Log in a new
// process over the same store and it resumes where the last checkpoint
// left off.
//
// Task i of a spout of parallelism n reads the values at i, i+n, i+2n, ...;
// its position is the index of its next value. A nacked value is handed out
// again before new ones until a rewind, which forgets it: the rewind replays
// it. A Log is safe for concurrent use; it survives the topology's restarts
// in the process.
type Log[T any] struct {
	values []T

	mu       sync.Mutex // mu guards the fields below
	changed  chan struct{}
	cursor   map[int]int   // by task index: the index of its next value
	retry    map[int][]int // by task index: nacked indexes to hand out again
	handouts []int         // by value index: times handed out
	acks     []int         // by value index: times acked
	failures []int         // by value index: Nacks while its task ran
	acked    int           // value indexes acked at least once
	rewinds  int
	stride   int // the spout's parallelism, once a task asked
	out      int // handed out and not yet acked or nacked
}

// NewLog returns a Log of values.
func NewLog[T any](values ...T) *Log[T] {
	return &Log[T]{values: values, changed: make(chan struct{}), cursor: map[int]int{}, retry: map[int][]int{},
		handouts: make([]int, len(values)), acks: make([]int, len(values)), failures: make([]int, len(values))}
}

// Spout returns the reliable spout over the log.
func (l *Log[T]) Spout() *dsl.SpoutSpec {
	return dsl.ReliableFrom(func(info dsl.TaskInfo) *logTask[T] {
		l.mu.Lock()
		l.stride = info.Parallelism
		l.mu.Unlock()
		return &logTask[T]{l: l, index: info.Index, stride: info.Parallelism, ctx: info.Context()}
	})
}

// Acked returns how many values were acked at least once.
func (l *Log[T]) Acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}

// Handouts returns how many times the value at index was handed out.
func (l *Log[T]) Handouts(index int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.handouts[index]
}

// Failures returns how many times the value at index failed or timed out:
// the Nacks its task heard while it ran. The Nacks of values still open when
// an incarnation ended (abandoned, and replayed by the next one) are not
// failures (see the dsl package doc, "Optional hooks").
func (l *Log[T]) Failures(index int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[index]
}

// Rewinds returns how many times a task was rewound to a checkpoint.
func (l *Log[T]) Rewinds() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rewinds
}

// WaitAcked waits until every value was acked at least once, or ctx ends.
func (l *Log[T]) WaitAcked(ctx context.Context) error {
	return l.wait(ctx, func() (bool, string) {
		return l.acked == len(l.values), fmt.Sprintf("%d of %d values acked", l.acked, len(l.values))
	})
}

// wait waits until done, called with l.mu held, reports true, or ctx ends;
// the error then says what done said.
func (l *Log[T]) wait(ctx context.Context, done func() (bool, string)) error {
	for {
		l.mu.Lock()
		ok, state := done()
		changed := l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("sheltertest: %s: %w", state, context.Cause(ctx))
		}
	}
}

// WaitDrained waits until every task of the spout has read to the end of
// the log and every value handed out got its ack or nack, or ctx ends. Unlike
// WaitAcked it also ends in a run that resumed from a checkpoint, where the
// values before the positions are never handed out again.
func (l *Log[T]) WaitDrained(ctx context.Context) error {
	return l.wait(ctx, func() (bool, string) {
		return l.drainedLocked(), fmt.Sprintf("log not drained, %d values awaiting an outcome", l.out)
	})
}

func (l *Log[T]) drainedLocked() bool {
	if l.stride == 0 || l.out > 0 {
		return false
	}
	for i := 0; i < l.stride; i++ {
		c, ok := l.cursor[i]
		if !ok && i < len(l.values) || ok && c < len(l.values) || len(l.retry[i]) > 0 {
			return false
		}
	}
	return true
}

func (l *Log[T]) touchLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// logTask is one spout task's reader of a Log.
type logTask[T any] struct {
	l             *Log[T]
	index, stride int
	ctx           context.Context // the task's: ended once its incarnation ends
}

func (t *logTask[T]) Next() (int, T, bool) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	i := -1
	if r := l.retry[t.index]; len(r) > 0 {
		i, l.retry[t.index] = r[0], r[1:]
	} else if c, ok := l.cursor[t.index]; !ok || c < len(l.values) {
		if !ok {
			c = t.index
		}
		if c >= len(l.values) {
			var zero T
			return 0, zero, false
		}
		i, l.cursor[t.index] = c, c+t.stride
	}
	if i < 0 {
		var zero T
		return 0, zero, false
	}
	l.handouts[i]++
	l.out++
	l.touchLocked()
	return i, l.values[i], true
}

func (t *logTask[T]) Ack(i int) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acks[i]++; l.acks[i] == 1 {
		l.acked++
	}
	l.out--
	l.touchLocked()
}

func (t *logTask[T]) Nack(i int) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.ctx.Err() == nil {
		l.failures[i]++
	}
	l.retry[t.index] = append(l.retry[t.index], i)
	l.out--
	l.touchLocked()
}

// Position is the index of the task's next value.
func (t *logTask[T]) Position() []byte {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.cursor[t.index]
	if !ok {
		c = t.index
	}
	return binary.AppendUvarint(nil, uint64(c))
}

// Rewind moves the task back to a checkpoint's position.
func (t *logTask[T]) Rewind(position []byte) error {
	c, n := binary.Uvarint(position)
	if n <= 0 || n != len(position) || c > uint64(len(t.l.values)+t.stride) {
		return fmt.Errorf("sheltertest: Log position %x is not an index of a log of %d values", position, len(t.l.values))
	}
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cursor[t.index] = int(c)
	delete(l.retry, t.index)
	l.rewinds++
	l.touchLocked()
	return nil
}
