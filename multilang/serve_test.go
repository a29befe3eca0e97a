package multilang_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// fakeHost plays Storm's side of the protocol against Serve over pipes.
type fakeHost struct {
	t      *testing.T
	toKid  *io.PipeWriter
	frames *wire.FrameReader
	done   chan error
	pidDir string
}

func startServe(t *testing.T, topo *dsl.Topology, component string, task int) *fakeHost {
	t.Helper()
	kidIn, toKid := io.Pipe()
	fromKid, kidOut := io.Pipe()
	h := &fakeHost{t: t, toKid: toKid, frames: wire.NewFrameReader(fromKid, 0), done: make(chan error, 1), pidDir: t.TempDir()}
	go func() {
		err := multilang.Serve(context.Background(), topo, kidIn, kidOut)
		kidOut.Close()
		h.done <- err
	}()
	conf := multilang.StormConf(topo.Name, topo.Conf, topo.Settings)
	h.send(wire.Handshake{Conf: conf, PidDir: h.pidDir, Context: multilang.NewContext(topo, topo.Component(component), task)})
	pid := h.expect(wire.KindPid)
	if pid.Pid != os.Getpid() {
		t.Fatalf("pid answer %d, want %d", pid.Pid, os.Getpid())
	}
	if _, err := os.Stat(filepath.Join(h.pidDir, strconv.Itoa(pid.Pid))); err != nil {
		t.Fatalf("no pid file: %v", err)
	}
	return h
}

func (h *fakeHost) send(v any) {
	h.t.Helper()
	if err := wire.WriteFrame(h.toKid, v); err != nil {
		h.t.Fatalf("writing to the child: %v", err)
	}
}

func (h *fakeHost) read() *wire.Message {
	h.t.Helper()
	f, err := h.frames.Next()
	if err != nil {
		h.t.Fatalf("reading from the child: %v", err)
	}
	m, err := wire.Decode(f)
	if err != nil {
		h.t.Fatalf("child sent %s: %v", f, err)
	}
	return m
}

// expect reads messages, skipping logs and metrics, until one of kind k.
func (h *fakeHost) expect(k wire.Kind) *wire.Message {
	h.t.Helper()
	for {
		m := h.read()
		if m.Kind == k {
			return m
		}
		if m.Kind != wire.KindLog && m.Kind != wire.KindMetrics {
			h.t.Fatalf("got %+v, want a %q", m, k)
		}
	}
}

// close ends the child's input and waits for Serve to return.
func (h *fakeHost) close() error {
	h.t.Helper()
	h.toKid.Close()
	go func() { _, _ = io.Copy(io.Discard, readerOf(h.frames)) }()
	select {
	case err := <-h.done:
		return err
	case <-time.After(5 * time.Second):
		h.t.Fatal("Serve did not return after its input ended")
		return nil
	}
}

// readerOf drains what the child still writes.
func readerOf(fr *wire.FrameReader) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		if _, err := fr.Next(); err != nil {
			return 0, err
		}
		return 0, nil
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// handlerFunc and manualFunc make handlers of functions, for per-task
// constructors that close over their TaskInfo.
type handlerFunc[In any] func(in In, out dsl.Emitter) error

func (f handlerFunc[In]) Execute(in In, out dsl.Emitter) error { return f(in, out) }

type manualFunc[In any] func(in In, input dsl.Tuple, c dsl.Collector) error

func (f manualFunc[In]) Execute(in In, input dsl.Tuple, c dsl.Collector) error {
	return f(in, input, c)
}

// servedSource is a reliable source that counts to 3 and records outcomes.
type servedSource struct {
	mu         sync.Mutex
	n          int
	acked      []int
	nacked     []int
	activated  int
	deactivate int
}

func (s *servedSource) Next() (int, Sentence, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 3 {
		return 0, Sentence{}, false
	}
	s.n++
	return s.n, Sentence{fmt.Sprint("sentence ", s.n)}, true
}
func (s *servedSource) Ack(id int)  { s.mu.Lock(); s.acked = append(s.acked, id); s.mu.Unlock() }
func (s *servedSource) Nack(id int) { s.mu.Lock(); s.nacked = append(s.nacked, id); s.mu.Unlock() }
func (s *servedSource) Activate()   { s.mu.Lock(); s.activated++; s.mu.Unlock() }
func (s *servedSource) Deactivate() { s.mu.Lock(); s.deactivate++; s.mu.Unlock() }

// servedTopology is sentences (a reliable Go spout) -> split (a Go bolt) -> count.
func servedTopology(t *testing.T, src *servedSource, split func(Sentence, dsl.Emitter) error) *dsl.Topology {
	t.Helper()
	b := dsl.New("served", dsl.Conf{"custom": "from topology"})
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Sentence] { return src }))
	bolt := b.Bolt("split", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Sentence] {
		info.Logger.Info("split ready")
		return handlerFunc[Sentence](split)
	}), dsl.Parallelism(2), dsl.WithConf(dsl.Conf{dsl.TickFrequency: time.Second}))
	count := b.Bolt("count", dsl.AutoAck(func(Word, dsl.Emitter) error { return nil }))
	b.Anchored(spout, bolt, dsl.Shuffle[Sentence]())
	b.Anchored(bolt, count, dsl.Fields(func(w Word) string { return w.Text }, "word"))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestServeRunsASpoutSynchronously(t *testing.T) {
	src := &servedSource{}
	h := startServe(t, servedTopology(t, src, nil), "sentences", 2)
	h.send(map[string]string{"command": "activate"})
	h.expect(wire.KindSync)

	var ids []wire.ID
	for i := 0; i < 3; i++ {
		h.send(map[string]string{"command": "next"})
		emit := h.expect(wire.KindEmit)
		if emit.Stream != "Sentence" || emit.NeedTaskIDs || emit.ID.IsZero() || string(emit.Tuple[0]) != fmt.Sprintf(`"sentence %d"`, i+1) {
			t.Fatalf("emit %+v", emit)
		}
		ids = append(ids, emit.ID)
		h.expect(wire.KindSync)
	}
	h.send(map[string]string{"command": "next"}) // nothing left: just sync
	h.expect(wire.KindSync)
	h.send(map[string]any{"command": "ack", "id": ids[0]})
	h.expect(wire.KindSync)
	h.send(map[string]any{"command": "fail", "id": ids[2]})
	h.expect(wire.KindSync)
	h.send(map[string]any{"command": "ack", "id": "never-emitted"}) // logged, still synced
	h.expect(wire.KindSync)
	h.send(map[string]string{"command": "deactivate"})
	h.expect(wire.KindSync)
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if fmt.Sprint(src.acked, src.nacked, src.activated, src.deactivate) != "[1] [3] 1 1" {
		t.Errorf("acked %v nacked %v activated %d deactivated %d", src.acked, src.nacked, src.activated, src.deactivate)
	}
}

func TestServeRunsABoltAsynchronously(t *testing.T) {
	topo := servedTopology(t, &servedSource{}, func(s Sentence, out dsl.Emitter) error {
		if s.Text == "boom" {
			panic("boom")
		}
		if s.Text == "bad" {
			return errors.New("bad sentence")
		}
		for _, w := range strings.Fields(s.Text) {
			out.Emit(Word{w})
		}
		return nil
	})
	h := startServe(t, topo, "split", 5)
	ready := h.expect(wire.KindLog)
	if !strings.HasPrefix(ready.Msg, "split ready") || ready.Level != wire.LevelInfo || !strings.Contains(ready.Msg, `"task": 5`) {
		t.Errorf("log %+v", ready)
	}

	h.send(map[string]any{"id": "-42", "comp": "sentences", "stream": "Sentence", "task": 2, "tuple": []string{"a b"}})
	for _, w := range []string{"a", "b"} {
		emit := h.expect(wire.KindEmit)
		if emit.Stream != "Word" || string(emit.Tuple[0]) != strconv.Quote(w) || fmt.Sprint(emit.Anchors) != "[-42]" || emit.NeedTaskIDs {
			t.Fatalf("emit %+v", emit)
		}
	}
	if ack := h.expect(wire.KindAck); ack.ID.String() != "-42" {
		t.Fatalf("ack %+v", ack)
	}
	h.send(map[string]any{"id": "hb", "comp": "__system", "stream": "__heartbeat", "task": -1, "tuple": []any{}})
	h.expect(wire.KindSync)
	for id, text := range map[string]string{"p": "boom", "e": "bad"} {
		h.send(map[string]any{"id": id, "comp": "sentences", "stream": "Sentence", "task": 2, "tuple": []string{text}})
		if fail := h.expect(wire.KindFail); fail.ID.String() != id {
			t.Fatalf("fail %+v for %q", fail, text)
		}
	}
	h.send(map[string]any{"id": "u", "comp": "x", "stream": "Unknown", "task": 9, "tuple": []int{1}})
	if fail := h.expect(wire.KindFail); fail.ID.String() != "u" {
		t.Fatalf("fail %+v for an unknown stream", fail)
	}
	h.send(map[string]any{"id": "t", "comp": "__system", "stream": "__tick", "task": -1, "tuple": []int{7}})
	if ack := h.expect(wire.KindAck); ack.ID.String() != "t" { // an auto-ack bolt acks ticks too
		t.Fatalf("tick %+v", ack)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestServeSendsMetricsAndFailsWhenTheTaskFails(t *testing.T) {
	b := dsl.New("metrics", dsl.Conf{"goshelter.multilang.metrics": true})
	b.Streams(Word{})
	spout := b.Spout("s", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	bolt := b.Bolt("m", dsl.Manual(func(info dsl.TaskInfo) dsl.ManualHandler[Sentence] {
		return manualFunc[Sentence](func(in Sentence, input dsl.Tuple, c dsl.Collector) error {
			info.Metric("seen", map[string]int{"n": 1})
			info.Post(func(c dsl.Collector) { c.Ack(input) })
			if in.Text == "fatal" {
				info.Fail(errors.New("cannot go on"))
			}
			return nil
		})
	}))
	b.Unanchored(spout, bolt, dsl.Shuffle[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := startServe(t, topo, "m", 1)
	h.send(map[string]any{"id": "1", "comp": "s", "stream": "Sentence", "task": 2, "tuple": []string{"x"}})
	m := h.read()
	if m.Kind != wire.KindMetrics || m.Name != "seen" || string(m.Params) != `{"n":1}` {
		t.Fatalf("metrics %+v", m)
	}
	if ack := h.expect(wire.KindAck); ack.ID.String() != "1" {
		t.Fatalf("posted ack %+v", ack)
	}
	h.send(map[string]any{"id": "2", "comp": "s", "stream": "Sentence", "task": 2, "tuple": []string{"fatal"}})
	if err := h.close(); err == nil || !strings.Contains(err.Error(), "cannot go on") {
		t.Errorf("Serve returned %v, want the task's failure", err)
	}
}

func TestServeRefusesAnUnknownComponent(t *testing.T) {
	topo := servedTopology(t, &servedSource{}, nil)
	kidIn, toKid := io.Pipe()
	fromKid, kidOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- multilang.Serve(context.Background(), topo, kidIn, kidOut)
		kidOut.Close()
	}()
	hs := wire.Handshake{Conf: map[string]any{}, PidDir: t.TempDir(), Context: wire.Context{ComponentID: "nope", TaskID: 1}}
	go func() { _ = wire.WriteFrame(toKid, hs) }()
	f, err := wire.NewFrameReader(fromKid, 0).Next()
	if err != nil {
		t.Fatal(err)
	}
	var msg map[string]string
	_ = json.Unmarshal(f, &msg)
	if msg["command"] != "error" || !strings.Contains(msg["msg"], `no component "nope"`) {
		t.Errorf("child said %s", f)
	}
	if err := <-done; !errors.Is(err, multilang.ErrNoComponent) {
		t.Errorf("Serve: %v", err)
	}
	toKid.Close()
}
