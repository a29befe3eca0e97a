package kafka

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// partition is a spout task's account of one assigned partition, Storm's
// OffsetManager: every record taken from the client and not yet done, in
// offset order, and the offsets committed and polled. It is the one place
// that knows a partition's position. A partition revoked or lost is marked
// gone and forgotten: the acks of its records that are still in the topology
// then find it gone and are ignored.
type partition struct {
	topic string
	id    int32
	// open[head:] are the records taken from the client and not done (acked,
	// given up), in offset order; the commit point is the first of them.
	// open[:head] are done entries not yet slid out. Entries are values, not
	// pointers: taking a record allocates nothing once the slice has grown to
	// the partition's flow.
	open []entry
	head int
	// polled is the offset after the last record taken; committed is the
	// offset last committed to the broker (or the first offset taken, before
	// any commit): the partition holds polled - committed uncommitted offsets.
	polled, committed int64
	paused            bool
	gone              bool

	// The positioned mode's account (see positioned.go). emitted is the
	// offset after the last record emitted (or skipped), where a rewind to
	// this task's position resumes: only the task's goroutine touches it.
	// acked is the offset after the last record acked, what the group is
	// told for lag monitoring. A held partition waits until holdUntil for a
	// retry's back-off, its records taken meanwhile in backlog.
	emitted, acked int64
	held           bool
	holdUntil      time.Time
	backlog        []queued
}

// entry is a record in a partition's account.
type entry struct {
	offset int64
	rec    *kgo.Record // nil once done
	done   bool
	fails  int
}

func newPartition(topic string, id int32, first int64) *partition {
	return &partition{topic: topic, id: id, polled: first, committed: first}
}

// take records a record taken from the client (offsets only grow).
func (p *partition) take(r *kgo.Record) {
	p.open = append(p.open, entry{offset: r.Offset, rec: r})
	p.polled = r.Offset + 1
}

// find returns the open entry at offset, or nil. The pointer is valid until
// the next take or finish.
func (p *partition) find(offset int64) *entry {
	open := p.open[p.head:]
	i := sort.Search(len(open), func(i int) bool { return open[i].offset >= offset })
	if i < len(open) && open[i].offset == offset {
		return &open[i]
	}
	return nil
}

// finish marks the entry at offset done and drops the done entries at the
// front, so the commit point moves past them. Nothing happens to an offset
// that is not open.
func (p *partition) finish(offset int64) {
	e := p.find(offset)
	if e == nil {
		return
	}
	e.done, e.rec = true, nil
	for p.head < len(p.open) && p.open[p.head].done {
		p.head++
	}
	// Slide the live entries to the front once the dropped ones are the
	// larger part, so take's append reuses the array instead of growing it
	// (amortised: each entry moves at most once per doubling).
	if p.head >= len(p.open)-p.head {
		n := copy(p.open, p.open[p.head:])
		clear(p.open[n:])
		p.open, p.head = p.open[:n], 0
	}
}

// first returns the first open entry, if any.
func (p *partition) first() (entry, bool) {
	if p.head < len(p.open) {
		return p.open[p.head], true
	}
	return entry{}, false
}

// commitPoint is the offset the partition may be committed at: its first
// record not done, or the offset after the last record taken (gaps in the
// log, compaction or transaction markers, are skipped this way).
func (p *partition) commitPoint() int64 {
	if e, ok := p.first(); ok {
		return e.offset
	}
	return p.polled
}

// uncommitted is the number of offsets between the committed one and the
// next to poll (Storm's numUncommittedOffsets, counting gaps too).
func (p *partition) uncommitted() int64 { return p.polled - p.committed }

// key identifies a partition in maps.
type key struct {
	topic string
	id    int32
}

// offsets builds a commit request for the partitions whose point moved past
// what is committed; point gives the offset to commit for each one.
func offsets(parts map[key]*partition, point func(*partition) int64) map[string]map[int32]kgo.EpochOffset {
	var out map[string]map[int32]kgo.EpochOffset
	for _, p := range parts {
		at := point(p)
		if at <= p.committed {
			continue
		}
		if out == nil {
			out = map[string]map[int32]kgo.EpochOffset{}
		}
		if out[p.topic] == nil {
			out[p.topic] = map[int32]kgo.EpochOffset{}
		}
		out[p.topic][p.id] = kgo.EpochOffset{Epoch: -1, Offset: at}
	}
	return out
}
