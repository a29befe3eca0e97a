package actors

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
)

// TestDeadLetterThrottleEndsRightAfterADeadLetter pins the dead-letter throttle
// interval NewSystem sets. protoactor-go starts a goroutine on the first dead
// letter of a period (a late message to a task that has just stopped) and it
// lives for the whole period: 1 s by default, long enough to outlive a Stop and
// fail every leak check after it. With NewSystem's interval it is gone at once;
// 250 ms is only a safety bound (with the default it cannot end before 1 s).
func TestDeadLetterThrottleEndsRightAfterADeadLetter(t *testing.T) {
	sys := NewSystem(zap.NewNop(), func(Failure) {})
	defer sys.Shutdown()
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
	sent := time.Now()
	for throttleRunning() {
		if time.Since(sent) > 250*time.Millisecond {
			t.Fatalf("protoactor-go's dead-letter throttle goroutine is still running %s after a dead letter: "+
				"its interval is too long to let a stopped topology leave no goroutine behind", time.Since(sent).Round(time.Millisecond))
		}
		time.Sleep(time.Millisecond)
	}
}

// throttleRunning reports whether protoactor-go's throttle goroutine is alive
// (its function is actor.NewThrottle.func1, or actor.NewDeadLetter.NewThrottle.func4.1
// when the compiler inlined NewThrottle).
func throttleRunning() bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("NewThrottle.func"))
}
