package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

func rec(p *partition, offset int64) {
	p.take(&kgo.Record{Topic: p.topic, Partition: p.id, Offset: offset})
}

// The per-partition record list stays bounded: once the done records at its
// head are as many as those after them, it is compacted, so a partition read
// for ever with every record acked in turn holds one record, not all.
func TestPartitionListStaysBounded(t *testing.T) {
	p := newPartition("t", 0, 0)
	for off := range int64(1000) {
		rec(p, off)
		p.finish(off)
		if len(p.open) > 1 || p.head != 0 {
			t.Fatalf("after %d records acked in turn the list holds %d (head %d)", off+1, len(p.open), p.head)
		}
	}
	// Two open, the first done: half the list is done, it is compacted.
	rec(p, 1000)
	rec(p, 1001)
	p.finish(1000)
	if len(p.open) != 1 || p.head != 0 || p.open[0].offset != 1001 {
		t.Fatalf("with 1 done of 2 the list is %v (head %d), want [1001] (head 0)", p.open, p.head)
	}
	// Three open, the first done: fewer done than not, it waits.
	rec(p, 1002)
	rec(p, 1003)
	p.finish(1001)
	if len(p.open) != 3 || p.head != 1 {
		t.Fatalf("with 1 done of 3 the list is %v (head %d), want 3 entries (head 1)", p.open, p.head)
	}
	// Done out of order: the head moves over every done entry.
	p.finish(1003)
	if p.head != 1 || p.commitPoint() != 1002 {
		t.Fatalf("head %d, commit point %d after acking 1003 before 1002", p.head, p.commitPoint())
	}
	p.finish(1002)
	if len(p.open) != 0 || p.head != 0 || p.commitPoint() != 1004 {
		t.Fatalf("all done: list %v (head %d), commit point %d, want empty, 1004", p.open, p.head, p.commitPoint())
	}
	if p.uncommitted() != 1004 {
		t.Errorf("uncommitted = %d, want 1004", p.uncommitted())
	}
	p.finish(5) // long done: nothing to do
	if p.find(5) != nil || p.find(99999) != nil {
		t.Error("find found an offset that is not open")
	}
}

func TestCommitPointAndOffsets(t *testing.T) {
	p := newPartition("t", 3, 10)
	if p.commitPoint() != 10 {
		t.Fatalf("an empty partition commits at its first offset, got %d", p.commitPoint())
	}
	rec(p, 10)
	rec(p, 11)
	p.finish(11)
	if p.commitPoint() != 10 {
		t.Fatalf("commit point %d with 10 open, want 10", p.commitPoint())
	}
	if p.uncommitted() != 2 {
		t.Errorf("uncommitted = %d with 10 and 11 polled past the commit at 10, want 2", p.uncommitted())
	}
	parts := map[key]*partition{{"t", 3}: p}
	if got := offsets(parts, (*partition).commitPoint); got != nil {
		t.Errorf("offsets at the committed point = %v, want nil", got)
	}
	p.finish(10)
	got := offsets(parts, (*partition).commitPoint)
	if eo, ok := got["t"][3]; !ok || eo.Offset != 12 || eo.Epoch != -1 {
		t.Errorf("offsets = %v, want t[3] at 12, epoch -1", got)
	}
	p.committed = 12
	if got := offsets(parts, (*partition).commitPoint); got != nil {
		t.Errorf("offsets once committed = %v, want nil", got)
	}
}

// bareSpout is a consumer-group spout task with no client: Ack and Nack
// need none while no commit is due and it is not stopping.
func bareSpout(retry backoff, giveUp func(Record)) *spout[Record] {
	cfg := defaults()
	cfg.retry, cfg.giveUp = retry, giveUp
	return &spout[Record]{cfg: cfg, log: zap.NewNop(), metric: func(string, any) {}, parts: map[key]*partition{}, goneAt: map[key]uint64{}}
}

func TestNackRetriesOnTheScheduleThenGivesUp(t *testing.T) {
	var given []Record
	s := bareSpout(backoff{initial: time.Hour, period: 2 * time.Hour, max: 5 * time.Hour, retries: 2}, func(r Record) { given = append(given, r) })
	p := newPartition("t", 0, 0)
	s.parts[key{"t", 0}] = p
	rec(p, 0)
	for i, want := range []time.Duration{time.Hour, 4 * time.Hour} {
		s.open++
		before := time.Now()
		s.Nack(msgID{p, 0})
		if len(s.retries) != 1 {
			t.Fatalf("after fail %d, %d retries scheduled, want 1", i+1, len(s.retries))
		}
		r := s.retries[0]
		if r.p != p || r.offset != 0 || r.due.Before(before.Add(want)) || r.due.After(time.Now().Add(want)) {
			t.Errorf("retry %d due in %v, want %v", i+1, r.due.Sub(before), want)
		}
		s.retries = s.retries[:0]
	}
	s.open++
	s.Nack(msgID{p, 0}) // the third fail is over the 2 retries
	if len(s.retries) != 0 || s.gaveUp != 1 || len(given) != 1 || given[0].Topic != "t" || p.commitPoint() != 1 {
		t.Errorf("after the last retry: %d retries, %d given up (%v), commit point %d", len(s.retries), s.gaveUp, given, p.commitPoint())
	}
	if s.open != 0 {
		t.Errorf("open = %d after three nacks of three emits", s.open)
	}
}

// A nack or an ack of a record whose partition was revoked is ignored: no
// retry, no give-up, no index into the forgotten list.
func TestNackAndAckOfARevokedPartition(t *testing.T) {
	s := bareSpout(backoff{retries: 0}, func(Record) { t.Error("gave up a record of a revoked partition") })
	p := newPartition("t", 1, 0)
	s.parts[key{"t", 1}] = p
	for off := range int64(3) {
		rec(p, off)
	}
	s.open = 2
	if req := s.forget(map[string][]int32{"t": {1}}, true); req != nil {
		t.Errorf("forget commits %v with nothing done", req)
	}
	if !p.gone || s.parts[key{"t", 1}] != nil {
		t.Fatal("the partition is not forgotten")
	}
	s.Nack(msgID{p, 2})
	s.Ack(msgID{p, 1})
	if len(s.retries) != 0 || s.gaveUp != 0 || s.open != 0 {
		t.Errorf("retries %d, given up %d, open %d", len(s.retries), s.gaveUp, s.open)
	}
}

func TestForgetCommitsWhatIsDone(t *testing.T) {
	s := bareSpout(defaults().retry, nil)
	p := newPartition("t", 0, 0)
	s.parts[key{"t", 0}] = p
	rec(p, 0)
	rec(p, 1)
	p.finish(0)
	req := s.forget(map[string][]int32{"t": {0}}, true)
	if eo := req["t"][0]; eo.Offset != 1 {
		t.Errorf("forget commits %v, want t[0] at 1", req)
	}
	if s.goneAt[key{"t", 0}] != 1 || s.epoch != 1 {
		t.Errorf("epoch %d, goneAt %v", s.epoch, s.goneAt)
	}
	if s.forget(map[string][]int32{"t": {0}}, true) != nil {
		t.Error("forgetting it twice commits again")
	}
}
