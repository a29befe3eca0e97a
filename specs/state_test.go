package specs_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// Issue 23: stateful bolts whose checkpoints are consistent cuts of bolt
// state and source positions, so the state counts every message once.

type Line struct{ Text string }
type Word struct{ Text string }

// words returns lines of words and how often each word occurs.
func stateLines(n int) ([]Line, map[string]int) {
	vocab := []string{"apple", "pear", "fig", "plum", "kiwi", "lime", "date"}
	lines, want := make([]Line, n), map[string]int{}
	for i := range lines {
		ws := []string{vocab[i%len(vocab)], vocab[(i*3+1)%len(vocab)], vocab[(i*5+2)%len(vocab)]}
		for _, w := range ws {
			want[w]++
		}
		lines[i] = Line{Text: strings.Join(ws, " ")}
	}
	return lines, want
}

// statefulCount builds log -> split -> count, count keeping a State of
// word counts; counted sees every execute.
func statefulCount(name string, log *sheltertest.Log[Line], conf dsl.Conf, counted func(task int, st *dsl.State[string, int])) *dsl.Topology {
	b := dsl.New(name, conf)
	b.Streams(Line{}, Word{})
	lines := b.Spout("lines", log.Spout(), dsl.Parallelism(2))
	split := b.Bolt("split", dsl.AutoAck(func(in Line, out dsl.Emitter) error {
		for _, w := range strings.Fields(in.Text) {
			out.Emit(Word{Text: w})
		}
		return nil
	}), dsl.Parallelism(2))
	count := b.Bolt("count", dsl.Stateful(func(in Word, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		if counted != nil {
			counted(0, st)
		}
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(lines, split, dsl.Shuffle[Line]())
	b.Anchored(split, count, dsl.Fields(func(w Word) string { return w.Text }, "Text"))
	return Build(b)
}

// storedCounts reads the committed word counts of every count task.
func storedCounts(store state.Store, tasks int) map[string]int {
	got := map[string]int{}
	for i := 0; i < tasks; i++ {
		Expect(store.Scan(context.Background(), "bolt/count/"+string(rune('0'+i)), func(k, v []byte) error {
			var n int
			Expect(decodeVarint(v, &n)).To(Succeed())
			got[string(k)] += n
			return nil
		})).To(Succeed())
	}
	return got
}

var _ = Describe("Stateful bolts", Label("state"), func() {
	It("count every word once, and the spout hears of a message only when its checkpoint commits", func() {
		lines, want := stateLines(500)
		log := sheltertest.NewLog(lines...)
		store := state.NewMemory()
		var executed atomic.Int64
		topo := statefulCount("wordcount-state", log, dsl.Conf{dsl.CheckpointInterval: 20 * time.Millisecond}, func(int, *dsl.State[string, int]) { executed.Add(1) })
		r := sheltertest.Start(GinkgoTB(), topo, supervision.WithStore(store))
		Expect(log.WaitAcked(kitCtx())).To(Succeed())
		Stop(r)
		Expect(storedCounts(store, 2)).To(Equal(want))
	})
})

func decodeVarint(b []byte, n *int) error {
	v, size := binary.Varint(b)
	if size <= 0 || size != len(b) {
		return fmt.Errorf("bad varint %x", b)
	}
	*n = int(v)
	return nil
}
