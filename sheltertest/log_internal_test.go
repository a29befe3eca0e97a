package sheltertest

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

// tasks returns n tasks of l's spout, as the runtime makes them.
func tasks(l *Log[int], n int) []*logTask[int] {
	l.stride = n
	var ts []*logTask[int]
	for i := range n {
		ts = append(ts, &logTask[int]{l: l, index: i, stride: n, ctx: context.Background()})
	}
	return ts
}

func drained(l *Log[int]) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.drainedLocked()
}

// A Log read by more tasks than it has values is drained once the values
// are acked: the tasks with no value have nothing to hand out.
func TestLogOfFewerValuesThanTasksDrains(t *testing.T) {
	l := NewLog(10, 20)
	ts := tasks(l, 3)
	if _, _, ok := ts[2].Next(); ok {
		t.Fatal("the third task of a log of two values got one")
	}
	if drained(l) {
		t.Fatal("drained before any value was handed out")
	}
	for _, task := range ts[:2] {
		i, v, ok := task.Next()
		if !ok || v != l.values[i] || i != task.index {
			t.Fatalf("task %d got %d (%d, %v)", task.index, v, i, ok)
		}
		if drained(l) {
			t.Fatal("drained with a value out")
		}
		task.Ack(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.WaitDrained(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitAcked(ctx); err != nil || l.Acked() != 2 {
		t.Fatalf("WaitAcked = %v, acked %d", err, l.Acked())
	}
}

func TestLogWaitDrainedWaitsForEveryOutcome(t *testing.T) {
	l := NewLog(1, 2, 3)
	if drained(l) {
		t.Fatal("drained before any task asked")
	}
	ts := tasks(l, 1)
	task := ts[0]
	var ids []int
	for {
		i, _, ok := task.Next()
		if !ok {
			break
		}
		ids = append(ids, i)
	}
	if len(ids) != 3 || l.out != 3 {
		t.Fatalf("handed out %v, %d out", ids, l.out)
	}
	task.Ack(ids[0])
	task.Nack(ids[1])
	task.Ack(ids[2])
	if drained(l) {
		t.Fatal("drained with a nacked value to hand out again")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if err := l.WaitDrained(ctx); err == nil || !strings.Contains(err.Error(), "log not drained, 0 values awaiting an outcome") {
		t.Errorf("WaitDrained = %v, want the log not drained", err)
	}
	done := make(chan error, 1)
	waitCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	go func() { done <- l.WaitDrained(waitCtx) }()
	i, _, ok := task.Next()
	if !ok || i != ids[1] || l.Handouts(i) != 2 {
		t.Fatalf("the retry handed out %d (%v), %d times", i, ok, l.Handouts(i))
	}
	select {
	case err := <-done:
		t.Fatalf("WaitDrained returned %v with the retry out", err)
	default:
	}
	task.Ack(i)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitDrained did not return once every value was acked")
	}
	if l.Acked() != 3 || l.acks[i] != 1 {
		t.Errorf("acked %d, value %d acked %d times", l.Acked(), i, l.acks[i])
	}
}

func TestLogRewind(t *testing.T) {
	l := NewLog(1, 2, 3)
	task := tasks(l, 2)[1]
	if got, _ := binary.Uvarint(task.Position()); got != 1 {
		t.Errorf("a fresh task's position is %d, want its index 1", got)
	}
	for _, bad := range [][]byte{nil, {}, binary.AppendUvarint(nil, 6), append(binary.AppendUvarint(nil, 1), 0)} {
		if err := task.Rewind(bad); err == nil || !strings.Contains(err.Error(), "is not an index of a log of 3 values") {
			t.Errorf("Rewind(%x) = %v, want an error", bad, err)
		}
	}
	if l.Rewinds() != 0 {
		t.Fatalf("a refused rewind counted: %d", l.Rewinds())
	}
	i, _, _ := task.Next()
	task.Nack(i)
	if err := task.Rewind(binary.AppendUvarint(nil, 5)); err != nil { // len + stride: past the end
		t.Fatal(err)
	}
	if _, _, ok := task.Next(); ok || l.Rewinds() != 1 || len(l.retry[1]) != 0 {
		t.Errorf("after a rewind past the end: a value handed out %v, rewinds %d, retries %v", ok, l.Rewinds(), l.retry[1])
	}
	if err := task.Rewind(binary.AppendUvarint(nil, 1)); err != nil {
		t.Fatal(err)
	}
	if i, v, ok := task.Next(); !ok || i != 1 || v != 2 {
		t.Errorf("after a rewind to 1: %d, %d, %v", i, v, ok)
	}
	if got, _ := binary.Uvarint(task.Position()); got != 3 {
		t.Errorf("position after value 1 with stride 2 = %d, want 3", got)
	}
}

// A Nack while the task runs is a failure of its value; the Nacks of an
// incarnation's end (the task's context over) are not.
func TestLogFailuresCountOnlyNacksWhileTheTaskRuns(t *testing.T) {
	l := NewLog(10, 11, 12)
	task := tasks(l, 1)[0]
	ctx, end := context.WithCancel(context.Background())
	task.ctx = ctx
	first, _, _ := task.Next()
	second, _, _ := task.Next()
	task.Nack(first)
	end()
	task.Nack(second) // abandoned with the incarnation
	if got := []int{l.Failures(0), l.Failures(1), l.Failures(2)}; got[0] != 1 || got[1] != 0 || got[2] != 0 {
		t.Errorf("failures %v, want [1 0 0]", got)
	}
}
