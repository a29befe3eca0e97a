package actors

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/internal/testsupport"
)

// TestDeadLetterThrottleEndsRightAfterADeadLetter pins the dead-letter throttle
// interval NewSystem sets. protoactor-go starts a goroutine on the first dead
// letter of a period (a late message to a task that has just stopped) and it
// lives for the whole period: 1 s by default, long enough to outlive a Stop and
// fail every leak check after it. The test reads the interval off the system's
// config (a fact, where timing the goroutine on a loaded machine would be a
// guess), then awaits the goroutine's end after a real dead letter.
func TestDeadLetterThrottleEndsRightAfterADeadLetter(t *testing.T) {
	sys := NewSystem(zap.NewNop(), func(Failure) {})
	defer sys.Shutdown()
	// Far under the default second, and under goleak's own retries, so that
	// the goroutine is gone before any leak check after a Stop.
	if d := sys.actors.Config.DeadLetterThrottleInterval; d <= 0 || d > 10*time.Millisecond {
		t.Fatalf("the dead-letter throttle interval is %v: too long to let a stopped topology leave no goroutine behind", d)
	}
	lettered := make(chan struct{}, 1)
	sub := sys.actors.EventStream.Subscribe(func(msg any) {
		if _, ok := msg.(*actor.DeadLetterEvent); ok {
			select {
			case lettered <- struct{}{}:
			default:
			}
		}
	})
	defer sys.actors.EventStream.Unsubscribe(sub)

	pid := sys.actors.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	if err := sys.actors.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatalf("stopping the actor: %v", err)
	}
	sys.actors.Root.Send(pid, "late") // to an actor no longer there: a dead letter
	select {
	case <-lettered:
	case <-time.After(waitFor):
		t.Fatal("no dead letter was published for a message to a stopped actor")
	}
	testsupport.WaitUntil(t, waitFor, "protoactor-go's dead-letter throttle goroutine to end after a dead letter", func() bool {
		return !throttleRunning()
	})
}

// throttleRunning reports whether protoactor-go's throttle goroutine is alive
// (its function is actor.NewThrottle.func1, or actor.NewDeadLetter.NewThrottle.func4.1
// when the compiler inlined NewThrottle).
func throttleRunning() bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("NewThrottle.func"))
}
