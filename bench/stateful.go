package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state/pebble"
	"github.com/goshelter/goshelter/supervision"
)

// The stateful word count (issue 23) beside the same topology without state,
// in one run: sentences (reliable, positioned) -> split (anchored, shuffle)
// -> count (anchored, fields on the word, 2 tasks). In wordcount-acked count
// is an AutoAck bolt with a map per task; in wordcount-stateful it is a
// dsl.Stateful bolt checkpointed every second to a Pebble store in a fresh
// temporary directory, so its inputs are acked when their checkpoint
// commits (fsynced).

// statePending is the max pending of both cases in the table. A stateful bolt acks an
// input only when its checkpoint commits, so a spout can complete at most
// max-pending trees per checkpoint interval: with the table's 4096 and 1 s
// checkpoints the stateful case would measure that cap (4096 sentences/s),
// not the runtime. A sentence is acked 1.2-1.7 s after its emit, so a spout
// at full speed needs over a second's emits in flight: 1<<18 still stalled
// each interval's end (docs/BENCHMARKS.md).
const statePending = 1 << 20

// stateInterval is the checkpoint interval the target is set for.
const stateInterval = time.Second

// positionedSource is the word counts' spout: the sentences in turn, with
// the count of sentences emitted as its position. Message ids are the emit
// stamp of sampled tuples (0 for the others), as eventSource's.
type positionedSource struct {
	p   *probe
	seq uint64
}

func (s *positionedSource) Next() (int64, Sentence, bool) {
	s.seq++
	var id int64
	if s.seq%sampleEvery == 0 {
		id = stamp()
	}
	return id, Sentence{&sentences[s.seq%uint64(len(sentences))]}, true
}

func (s *positionedSource) Ack(id int64) {
	if id != 0 {
		s.p.lat.record(time.Duration(stamp() - id))
	}
}

func (s *positionedSource) Nack(int64) { s.p.nacks.Add(1) }

// Position and Rewind make the source one whose place a checkpoint stores.
func (s *positionedSource) Position() []byte { return binary.AppendUvarint(nil, s.seq) }

func (s *positionedSource) Rewind(p []byte) error {
	n, size := binary.Uvarint(p)
	if size <= 0 {
		return fmt.Errorf("bad position %x", p)
	}
	s.seq = n
	return nil
}

// countingTopology builds the acked word count, with a stateful count bolt
// when stateful.
func countingTopology(s setup, stateful bool) (*dsl.Topology, error) {
	conf := goshelterConf(s) // the table runs both with statePending
	conf[dsl.CheckpointInterval] = stateInterval
	b := dsl.New("bench-state", conf)
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.ReliableFrom(func(dsl.TaskInfo) *positionedSource { return &positionedSource{p: s.probe} }))
	split := b.Bolt("split", splitBolt())
	var count *dsl.BoltSpec
	if stateful {
		count = dsl.StatefulFrom(func(dsl.TaskInfo) func(Word, *dsl.State[string, int], dsl.Emitter) error {
			t := s.probe.tally()
			return func(w Word, st *dsl.State[string, int], _ dsl.Emitter) error {
				n, _ := st.Get(*w.Text)
				st.Put(*w.Text, n+1)
				t.inc()
				return nil
			}
		})
	} else {
		count = countBolt(s)
	}
	b.Anchored(spout, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, b.Bolt("count", count, dsl.Parallelism(2)), dsl.Fields(func(w Word) string { return *w.Text }, "word"))
	return b.Build()
}

// statefulPipe is a running stateful word count and its store.
type statefulPipe struct {
	goshelterPipe
	store interface{ Close() error }
	dir   string
}

func startCounting(s setup) (pipeline, error) {
	stateful := s.shape == statefulCount
	topo, err := countingTopology(s, stateful)
	if err != nil {
		return nil, err
	}
	if !stateful {
		r, err := supervision.Run(context.Background(), topo, supervision.WithoutRestarts(), supervision.WithDrainTimeout(10*time.Second))
		if err != nil {
			return nil, err
		}
		return goshelterPipe{r}, nil
	}
	dir, err := os.MkdirTemp("", "goshelter-bench-state-")
	if err != nil {
		return nil, err
	}
	store, err := pebble.Open(dir)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	r, err := supervision.Run(context.Background(), topo, supervision.WithStore(store),
		supervision.WithoutRestarts(), supervision.WithDrainTimeout(10*time.Second))
	if err != nil {
		return nil, errors.Join(err, store.Close(), os.RemoveAll(dir))
	}
	return statefulPipe{goshelterPipe{r}, store, dir}, nil
}

func (p statefulPipe) Stop() error {
	return errors.Join(p.goshelterPipe.Stop(), p.store.Close(), os.RemoveAll(p.dir))
}
