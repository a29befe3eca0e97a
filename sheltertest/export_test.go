package sheltertest

import "github.com/goshelter/goshelter/dsl"

// Feed is the source as a spout task sees it, for tests that drive it by hand:
// task 0, never activated; a hook's error panics.
func Feed[T any](s *Source[T]) dsl.Source[int, T] {
	return &feed[T]{s: s, fail: func(err error) { panic(err) }}
}

// Timers returns how many callbacks c has scheduled.
func Timers(c *Clock) int { return c.m.Timers() }
