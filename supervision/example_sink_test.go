package supervision_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// Total is what the exactly-once example's count emits: a word's count
// after one more of it.
type Total struct {
	Text string
	N    int
}

// ledger is the example sink's target: a table keyed by an id that the sink
// derives from the checkpoint, so writing an entry again changes nothing
// (an idempotent upsert).
type ledger struct {
	mu   sync.Mutex
	rows map[string]Total
}

func (l *ledger) upsert(id string, t Total) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows[id] = t
}

// ledgerSink is a user's exactly-once sink built on the two-phase hooks: it
// keeps the outputs of the inputs since the last checkpoint, hands them to
// the checkpoint when it is prepared, and writes them once it committed, or
// again after a crash (the ids make the second write a no-op).
type ledgerSink struct {
	task     int
	target   *ledger
	kept     []Total
	prepared map[uint64][]Total
}

func (s *ledgerSink) Execute(t Total, input dsl.Tuple, c dsl.Collector) error {
	s.kept = append(s.kept, t)
	c.Ack(input) // the checkpoint carries it from here on
	return nil
}

// RecoverCheckpoint writes what the last committed checkpoint prepared: a
// crash may have come before CommitCheckpoint wrote it.
func (s *ledgerSink) RecoverCheckpoint(prepared []byte) error {
	if prepared == nil {
		return nil
	}
	var batch struct {
		ID   uint64
		Rows []Total
	}
	if err := json.Unmarshal(prepared, &batch); err != nil {
		return err
	}
	s.write(batch.ID, batch.Rows)
	return nil
}

func (s *ledgerSink) PrepareCheckpoint(id uint64) ([]byte, error) {
	rows := s.kept
	s.kept = nil
	s.prepared[id] = rows
	return json.Marshal(struct {
		ID   uint64
		Rows []Total
	}{id, rows})
}

func (s *ledgerSink) CommitCheckpoint(id uint64) error {
	s.write(id, s.prepared[id])
	delete(s.prepared, id)
	return nil
}

func (s *ledgerSink) write(id uint64, rows []Total) {
	for i, r := range rows {
		s.target.upsert(fmt.Sprintf("%d/%d/%d", s.task, id, i), r)
	}
}

// A sink with the two-phase hooks writes its output exactly once, whatever
// rollbacks and restarts the topology goes through: here a count of words
// from a positioned source (the kit's Log) writes each new count to a
// ledger.
func Example_exactlyOnceSink() {
	words := sheltertest.NewLog(Word{"fig"}, Word{"kiwi"}, Word{"fig"}, Word{"plum"}, Word{"fig"})
	target := &ledger{rows: map[string]Total{}}
	b := dsl.New("ledger", nil)
	b.Streams(Word{}, Total{})
	src := b.Spout("words", words.Spout())
	count := b.Bolt("count", dsl.Stateful(func(w Word, st *dsl.State[string, int], out dsl.Emitter) error {
		n, _ := st.Get(w.Text)
		st.Put(w.Text, n+1)
		out.Emit(Total{Text: w.Text, N: n + 1})
		return nil
	}))
	sink := b.Bolt("ledger", dsl.Manual(func(info dsl.TaskInfo) *ledgerSink {
		return &ledgerSink{task: info.Index, target: target, prepared: map[uint64][]Total{}}
	}))
	b.Anchored(src, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	b.Anchored(count, sink, dsl.Shuffle[Total]())
	topo, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	running, err := supervision.Run(context.Background(), topo,
		supervision.WithStore(state.NewMemory()), supervision.WithLogger(zap.NewNop()))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := words.WaitAcked(context.Background()); err != nil {
		fmt.Println(err)
	}
	if err := running.Stop(context.Background()); err != nil { // its last checkpoint commits the rest
		fmt.Println(err)
	}
	var rows []string
	for _, t := range target.rows {
		rows = append(rows, fmt.Sprintf("%s=%d", t.Text, t.N))
	}
	sort.Strings(rows)
	fmt.Println(rows)
	// Output:
	// [fig=1 fig=2 fig=3 kiwi=1 plum=1]
}
