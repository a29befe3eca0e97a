package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// A drain that ends with tuples in flight releases the tasks parked on full
// mailboxes at once. Here bolt "pass" is parked on the mailbox of "failed",
// which failed and will never take another input, and the spout on pass's:
// the drain timeout is 20 s, so the bolts' grace is 40 s, but Stop's ctx
// has ended and Stop must return within seconds, with nothing stuck.
func TestStopReleasesATaskParkedOnAFullMailboxWhenTheDrainEnds(t *testing.T) {
	const slots = 2
	b := dsl.New("parked", dsl.Conf{dsl.ReceiveBufferSize: slots, dsl.BatchSize: 1})
	spout := b.Spout("numbers", dsl.Unreliable(func() (num, bool) { return num{1}, true }))
	pass := b.Bolt("pass", dsl.AutoAck(func(in num, out dsl.Emitter) error {
		out.Emit(in)
		return nil
	}))
	failed := b.Bolt("failed", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[num] {
		once := sync.Once{}
		return handlerFunc(func(num, dsl.Emitter) error {
			once.Do(func() { info.Fail(errors.New("gone for good")) })
			return nil
		})
	}))
	b.Unanchored(spout, pass, dsl.Shuffle[num]())
	b.Unanchored(pass, failed, dsl.Shuffle[num]())
	h := newHost(t)
	top := h.start(t, build(t, b), Config{DrainTimeout: 20 * time.Second})
	if f := h.failure(t); f.Component != "failed" {
		t.Fatalf("failure %+v, want one of bolt failed", f)
	}
	full := func() bool {
		snaps, _ := top.Stats()
		depth := map[string]int{}
		for _, s := range snaps {
			depth[s.Component] = s.MailboxDepth
		}
		return depth["pass"] == slots && depth["failed"] == slots
	}
	waitUntil(t, "the mailboxes of pass and failed to fill", full) // polling the stats: nothing to wait on

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no drain: what is in flight stays there
	stopped := make(chan []Failure, 1)
	go func() { stopped <- top.Stop(ctx) }()
	select {
	case stuck := <-stopped:
		if len(stuck) > 0 {
			t.Errorf("Stop left %d tasks stuck: %+v", len(stuck), stuck)
		}
	case <-time.After(waitFor):
		t.Fatalf("Stop still waits %v after a drain that ended at once: the parked bolt holds it for the grace", waitFor)
	}
}
