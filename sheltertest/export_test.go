package sheltertest

import "github.com/goshelter/goshelter/dsl"

// Feed is the source as a spout sees it, for tests that drive it by hand.
func Feed[T any](s *Source[T]) dsl.Source[int, T] { return feed[T]{s} }

// Timers returns how many callbacks c has scheduled.
func Timers(c *Clock) int { return c.m.Timers() }
