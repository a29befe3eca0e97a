package sheltertest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// Source is a reliable source that records what happens to every message it
// hands out. Messages get ids 1, 2, ... in the order they are handed out; a
// nacked message is not handed out again (Push it back to replay it). It is
// safe for concurrent use, so one Source may feed a spout of any parallelism.
type Source[T any] struct {
	mu       sync.Mutex // mu guards every field below
	queue    []T
	values   map[int]T
	last     int
	outcomes []Outcome[T]
	settled  map[int]int // id -> outcomes recorded
}

// Outcome is what happened to one message: acked, or nacked (failed or timed
// out), and when (wall clock).
type Outcome[T any] struct {
	ID    int
	Value T
	Acked bool
	At    time.Time
}

// NewSource returns a source holding values, in order.
func NewSource[T any](values ...T) *Source[T] {
	return &Source[T]{queue: values, values: map[int]T{}, settled: map[int]int{}}
}

// Push adds values at the end of the queue.
func (s *Source[T]) Push(values ...T) {
	s.mu.Lock()
	s.queue = append(s.queue, values...)
	s.mu.Unlock()
}

// Spout returns a reliable spout over the source, shared by its tasks.
func (s *Source[T]) Spout() *dsl.SpoutSpec {
	return dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, T] { return feed[T]{s} })
}

// feed is the source as the spout sees it.
type feed[T any] struct{ s *Source[T] }

func (f feed[T]) Next() (int, T, bool) { return f.s.next() }
func (f feed[T]) Ack(id int)           { f.s.settle(id, true) }
func (f feed[T]) Nack(id int)          { f.s.settle(id, false) }

func (s *Source[T]) next() (int, T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero T
	if len(s.queue) == 0 {
		return 0, zero, false
	}
	v := s.queue[0]
	s.queue = s.queue[1:]
	s.last++
	s.values[s.last] = v
	return s.last, v, true
}

func (s *Source[T]) settle(id int, acked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, Outcome[T]{ID: id, Value: s.values[id], Acked: acked, At: time.Now()})
	s.settled[id]++
}

// Outcomes returns every outcome so far, in the order they happened.
func (s *Source[T]) Outcomes() []Outcome[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Outcome[T](nil), s.outcomes...)
}

// Verify checks exactly-once: every message handed out got exactly one
// outcome, and no outcome names an id the source never handed out. Its error
// lists every violation.
func (s *Source[T]) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var problems []string
	for id := 1; id <= s.last; id++ {
		switch n := s.settled[id]; {
		case n == 0:
			problems = append(problems, fmt.Sprintf("message %d has no outcome", id))
		case n > 1:
			problems = append(problems, fmt.Sprintf("message %d has %d outcomes", id, n))
		}
	}
	var unknown []int
	for id := range s.settled {
		if id < 1 || id > s.last {
			unknown = append(unknown, id)
		}
	}
	sort.Ints(unknown)
	for _, id := range unknown {
		problems = append(problems, fmt.Sprintf("outcome for message %d, which was never handed out", id))
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New("sheltertest: " + strings.Join(problems, "; "))
}
