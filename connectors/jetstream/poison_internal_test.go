package jetstream

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// A message's failures add up; with WithMaxDeliver(3) it is given up at its
// third failure, not before, and the give-up is reported once.
func TestPoisonCountsFailuresUpToMaxDeliver(t *testing.T) {
	c := newConfig([]Option{WithMaxDeliver(3), WithNackBackoff(time.Hour, time.Hour)})
	p := newPoison()
	t0 := time.Unix(1000, 0)
	for i := range 2 {
		p.fail(7, t0, &c)
		if n := p.failing.Load(); n != 1 {
			t.Fatalf("after %d failures of one message, failing = %d, want 1", i+1, n)
		}
		skip, _, fails, _ := p.verdict(7, t0, &c)
		if skip || fails != uint64(i+1) {
			t.Fatalf("after %d failures: skip %v, fails %d", i+1, skip, fails)
		}
	}
	p.fail(7, t0, &c)
	skip, report, fails, due := p.verdict(7, t0, &c)
	if !skip || !report || fails != 3 || !due.IsZero() {
		t.Fatalf("after 3 failures: skip %v, report %v, fails %d, due %v; want skipped and reported after 3", skip, report, fails, due)
	}
	if skip, report, _, _ := p.verdict(7, t0, &c); !skip || report {
		t.Fatalf("second verdict: skip %v, report %v; want skipped, reported once", skip, report)
	}
	// Another message is untouched by 7's account.
	if skip, report, fails, due := p.verdict(8, t0, &c); skip || report || fails != 0 || !due.IsZero() {
		t.Fatalf("a message that never failed: %v %v %d %v", skip, report, fails, due)
	}
}

// Without a bound (the default, -1) a message is never given up.
func TestPoisonWithoutBoundNeverGivesUp(t *testing.T) {
	c := newConfig([]Option{WithNackBackoff(time.Nanosecond, time.Nanosecond)})
	p := newPoison()
	t0 := time.Unix(1000, 0)
	for range 5 {
		p.fail(1, t0, &c)
	}
	if skip, _, fails, _ := p.verdict(1, t0.Add(time.Second), &c); skip || fails != 5 {
		t.Fatalf("skip %v, fails %d; want handed out after 5 failures", skip, fails)
	}
}

// A failed message is held until its back-off (base, doubled per failure)
// from its last failure has passed, and handed out from that instant on.
func TestPoisonHoldsARetryForItsBackoff(t *testing.T) {
	ms := time.Millisecond
	c := newConfig([]Option{WithNackBackoff(10*ms, time.Second)})
	p := newPoison()
	t0 := time.Unix(1000, 0)
	p.fail(4, t0, &c)
	if _, _, _, due := p.verdict(4, t0.Add(10*ms-1), &c); !due.Equal(t0.Add(10 * ms)) {
		t.Fatalf("one failure, just before its back-off: due %v, want %v", due, t0.Add(10*ms))
	}
	if _, _, fails, due := p.verdict(4, t0.Add(10*ms), &c); !due.IsZero() || fails != 1 {
		t.Fatalf("one failure, at its back-off: due %v, fails %d; want handed out", due, fails)
	}
	t1 := t0.Add(time.Second)
	p.fail(4, t1, &c)
	if _, _, _, due := p.verdict(4, t1.Add(15*ms), &c); !due.Equal(t1.Add(20 * ms)) {
		t.Fatalf("two failures: due %v, want the doubled back-off from the last failure, %v", due, t1.Add(20*ms))
	}
}

// prune forgets the failures of the task's own messages below a sequence,
// and only those: its messages are the sequences = index mod parallelism.
func TestPoisonPrune(t *testing.T) {
	c := newConfig([]Option{WithNackBackoff(time.Hour, time.Hour)})
	p := newPoison()
	t0 := time.Unix(1000, 0)
	for seq := uint64(1); seq <= 8; seq++ {
		p.fail(seq, t0, &c)
	}
	p.prune(1, 2, 5) // task 1 of 2 owns the odd sequences: 1 and 3 go, 5 and 7 stay
	want := map[uint64]bool{2: true, 4: true, 5: true, 6: true, 7: true, 8: true}
	for seq := uint64(1); seq <= 8; seq++ {
		if _, _, fails, _ := p.verdict(seq, t0, &c); (fails == 1) != want[seq] {
			t.Errorf("after prune(1, 2, 5): sequence %d has %d failures, kept %v", seq, fails, want[seq])
		}
	}
	if n := p.failing.Load(); n != 6 {
		t.Fatalf("failing = %d after pruning 2 of 8, want 6", n)
	}
	p.prune(0, 1, 9) // one task owns every sequence
	if n := p.failing.Load(); n != 0 || len(p.failures) != 0 {
		t.Fatalf("failing = %d, %d entries after pruning all, want none", n, len(p.failures))
	}
	p.prune(0, 1, 9) // nothing failing: nothing to do
}

// A task's count of messages given up goes up by one each time and outlives
// its incarnations; another task's is its own.
func TestPoisonGaveUpCount(t *testing.T) {
	p := newPoison()
	for want := int64(1); want <= 3; want++ {
		if got := p.gaveUpOne(2); got != want {
			t.Fatalf("gaveUpOne(2) = %d, want %d", got, want)
		}
	}
	if got := p.gaveUpOne(0); got != 1 {
		t.Fatalf("gaveUpOne(0) = %d, want 1", got)
	}
}

// reportGiveUp counts the message in the task's metric and passes it to the
// WithGiveUp function when there is one.
func TestReportGiveUp(t *testing.T) {
	metrics := map[string]any{}
	info := dsl.TaskInfo{Metric: func(name string, v any) { metrics[name] = v }}
	var given []Message
	for _, fn := range []func(Message){nil, func(m Message) { given = append(given, m) }} {
		s := &source[Message]{info: info, log: zap.NewNop(), cfg: newConfig([]Option{WithGiveUp(fn)})}
		s.reportGiveUp(Message{StreamSeq: 9}, 3, 4, "skipping it")
	}
	if metrics["jetstream.gave-up"] != int64(4) {
		t.Fatalf("metric = %v, want 4", metrics["jetstream.gave-up"])
	}
	if len(given) != 1 || given[0].StreamSeq != 9 {
		t.Fatalf("WithGiveUp got %v, want the message at 9 once", given)
	}
}
