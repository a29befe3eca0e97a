package sheltertest

import (
	"cmp"
	"slices"
)

// SourceOption configures a [Source]: give it to [Generate] or [Source.With].
type SourceOption func(*sourceOptions)

// sourceOptions are a Source's settings.
type sourceOptions struct {
	replays               int // 0: never; negative: without limit
	onNext, onAck, onNack func(id int) error
}

// Replay makes the source hand a nacked message out again, with its id,
// before any new message, at most n times (n < 0: without limit; 0, the
// default: never), as a spout over a broker would. Verify then expects one
// outcome per handout.
func Replay(n int) SourceOption { return func(o *sourceOptions) { o.replays = n } }

// OnNext makes every Next call fn with the id of the message it is about to
// hand out, on the spout task's goroutine, so a test can make Next panic,
// block or fail for one id. A panic fails the task as a panicking Next does;
// an error fails it through TaskInfo.Fail; blocking blocks the task. In all
// three the message is not handed out: it stays first in line, with its id,
// for the next Next (of this incarnation or the next).
func OnNext(fn func(id int) error) SourceOption { return func(o *sourceOptions) { o.onNext = fn } }

// OnAck makes every Ack call fn with its id, on the spout task's goroutine,
// after the ack is recorded: a panic, a block or an error (which fails the
// task through TaskInfo.Fail) happens to a call that counts.
func OnAck(fn func(id int) error) SourceOption { return func(o *sourceOptions) { o.onAck = fn } }

// OnNack is [OnAck] for Nack calls.
func OnNack(fn func(id int) error) SourceOption { return func(o *sourceOptions) { o.onNack = fn } }

// sortedKeys returns m's keys in ascending order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
