package observe_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// protoactor-go throttles dead-letter logging: the first dead letter of
		// a period starts a goroutine that ends on its own a second later, which
		// outlives goleak's retries. A late message to a stopped task is a dead
		// letter, so stopping a topology may start one (see specs_suite_test.go).
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewThrottle.func1"),
	)
}
