package multilang_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// fakeHost plays Storm's side of the protocol against Serve over pipes.
type fakeHost struct {
	t       *testing.T
	toKid   *io.PipeWriter
	fromKid *io.PipeReader
	frames  *wire.FrameReader
	done    chan error
	pidDir  string
}

func startServe(t *testing.T, topo *dsl.Topology, component string, task int) *fakeHost {
	t.Helper()
	conf := multilang.StormConf(topo.Name, topo.Conf, topo.Settings)
	return newFakeHost(t, topo, conf, multilang.NewContext(topo, topo.Component(component), task))
}

// newFakeHost starts Serve and sends it a handshake with conf and ctx.
func newFakeHost(t *testing.T, topo *dsl.Topology, conf map[string]any, ctx wire.Context) *fakeHost {
	t.Helper()
	return newFakeHostOf(t, multilang.Serve, topo, conf, ctx)
}

// newFakeHostOf is newFakeHost for serve, Serve or a variant of it.
func newFakeHostOf(t *testing.T, serve func(context.Context, *dsl.Topology, io.Reader, io.Writer) error,
	topo *dsl.Topology, conf map[string]any, ctx wire.Context) *fakeHost {
	t.Helper()
	kidIn, toKid := io.Pipe()
	fromKid, kidOut := io.Pipe()
	h := &fakeHost{t: t, toKid: toKid, fromKid: fromKid, frames: wire.NewFrameReader(fromKid, 0), done: make(chan error, 1), pidDir: t.TempDir()}
	go func() {
		err := serve(context.Background(), topo, kidIn, kidOut)
		kidOut.Close()
		h.done <- err
	}()
	h.send(wire.Handshake{Conf: conf, PidDir: h.pidDir, Context: ctx})
	pid := h.expect(wire.KindPid)
	if pid.Pid != os.Getpid() {
		t.Fatalf("pid answer %d, want %d", pid.Pid, os.Getpid())
	}
	if _, err := os.Stat(filepath.Join(h.pidDir, strconv.Itoa(pid.Pid))); err != nil {
		t.Fatalf("no pid file: %v", err)
	}
	return h
}

// send writes v to the child. It waits at most 10 s (scaled) for the child to
// read it: a child that stopped reading fails the test instead of hanging it.
func (h *fakeHost) send(v any) {
	h.t.Helper()
	written := make(chan error, 1)
	go func() { written <- wire.WriteFrame(h.toKid, v) }()
	select {
	case err := <-written:
		if err != nil {
			h.t.Fatalf("writing to the child: %v", err)
		}
	case <-time.After(testsupport.Scaled(10 * time.Second)):
		h.toKid.CloseWithError(errors.New("the test stopped waiting")) // ends the write
		<-written
		h.t.Fatal("the child read nothing for 10s")
	}
}

// next returns the child's next frame, or the error that ended its output
// (see nextFrame).
func (h *fakeHost) next() ([]byte, error) {
	h.t.Helper()
	return nextFrame(h.t, h.frames, h.fromKid)
}

// nextFrame returns the next frame fr reads from r, or the error that ended
// r. It waits at most 10 s (scaled): a child that says nothing fails the
// test instead of hanging it.
func nextFrame(t *testing.T, fr *wire.FrameReader, r *io.PipeReader) ([]byte, error) {
	t.Helper()
	type next struct {
		frame []byte
		err   error
	}
	got := make(chan next, 1)
	go func() {
		f, err := fr.Next()
		got <- next{f, err}
	}()
	select {
	case n := <-got:
		return n.frame, n.err
	case <-time.After(testsupport.Scaled(10 * time.Second)):
		r.CloseWithError(errors.New("the test stopped waiting")) // ends the read
		<-got
		t.Fatal("the child said nothing for 10s")
		return nil, nil
	}
}

func (h *fakeHost) read() *wire.Message {
	h.t.Helper()
	f, err := h.next()
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
	src.mu.Lock()
	activated, deactivated := src.activated, src.deactivate
	src.mu.Unlock()
	if activated != 1 || deactivated != 0 {
		t.Fatalf("after activate: activated %d, deactivated %d", activated, deactivated)
	}

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

// TestServePausesASpoutThatHadNothing: Storm's ShellSpout expects a shell
// spout to pause before answering a "next" in which it emitted nothing (it
// asks again at once); a "next" that emitted answers at once. The pause is
// recorded, not timed: the moment sync arrives, it has been made exactly once
// per idle "next".
func TestServePausesASpoutThatHadNothing(t *testing.T) {
	var mu sync.Mutex
	var pauses []time.Duration
	record := func(d time.Duration) { mu.Lock(); pauses = append(pauses, d); mu.Unlock() }
	made := func() []time.Duration { mu.Lock(); defer mu.Unlock(); return append([]time.Duration(nil), pauses...) }
	serve := func(ctx context.Context, topo *dsl.Topology, in io.Reader, out io.Writer) error {
		return multilang.ServeWith(ctx, topo, in, out, record)
	}
	src := &servedSource{}
	topo := servedTopology(t, src, nil)
	h := newFakeHostOf(t, serve, topo, multilang.StormConf(topo.Name, topo.Conf, topo.Settings), multilang.NewContext(topo, topo.Component("sentences"), 2))
	h.send(map[string]string{"command": "activate"})
	h.expect(wire.KindSync)
	for i := 0; i < 3; i++ {
		h.send(map[string]string{"command": "next"})
		h.expect(wire.KindEmit)
		h.expect(wire.KindSync)
	}
	if p := made(); len(p) != 0 {
		t.Fatalf("pauses %v after three nexts that emitted, want none", p)
	}
	for want := 1; want <= 2; want++ {
		h.send(map[string]string{"command": "next"}) // nothing left
		h.expect(wire.KindSync)
		if p := made(); len(p) != want || p[want-1] != multilang.IdleSpoutPause || multilang.IdleSpoutPause <= 0 {
			t.Fatalf("pauses %v after %d idle nexts, want %d of %v", p, want, want, multilang.IdleSpoutPause)
		}
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
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
		// Storm UI's "last error": sent after the fail, the task goes on.
		if e := h.expect(wire.KindError); !strings.Contains(e.Msg, `component "split" task 5`) || !strings.Contains(e.Msg, map[string]string{"p": "panicked: boom", "e": "bad sentence"}[id]) {
			t.Fatalf("error %q for %q", e.Msg, text)
		}
	}
	h.send(map[string]any{"id": "u", "comp": "x", "stream": "Unknown", "task": 9, "tuple": []int{1}})
	if fail := h.expect(wire.KindFail); fail.ID.String() != "u" {
		t.Fatalf("fail %+v for an unknown stream", fail)
	}
	if e := h.expect(wire.KindError); !strings.Contains(e.Msg, `component "x" sends no stream "Unknown"`) {
		t.Fatalf("error %q for an unknown stream", e.Msg)
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
	h.expect(wire.KindAck)
	if e := h.expect(wire.KindError); !strings.Contains(e.Msg, "cannot go on") { // for Storm UI, before the exit
		t.Errorf("error %q", e.Msg)
	}
	if err := h.close(); err == nil || !strings.Contains(err.Error(), "cannot go on") {
		t.Errorf("Serve returned %v, want the task's failure", err)
	}
}

func TestServeRefusesAComponentItCannotHost(t *testing.T) {
	stateful := func(t *testing.T) *dsl.Topology {
		b := dsl.New("served-state", dsl.Conf{dsl.MaxSpoutPending: 1 << 20})
		b.Streams(Word{})
		spout := b.Spout("sentences", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Sentence] { return &servedSource{} }))
		count := b.Bolt("count", dsl.Stateful(func(Sentence, *dsl.State[string, int], dsl.Emitter) error { return nil }))
		b.Anchored(spout, count, dsl.Shuffle[Sentence]())
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return topo
	}
	for _, c := range []struct {
		name, component, says string
		topo                  func(*testing.T) *dsl.Topology
		is                    error
	}{
		{"unknown", "nope", `no component "nope"`, func(t *testing.T) *dsl.Topology { return servedTopology(t, &servedSource{}, nil) }, multilang.ErrNoComponent},
		// Storm checkpoints its own stateful bolts; a served one would keep
		// its state in the child's memory only.
		{"stateful", "count", `bolt "count" is stateful`, stateful, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			kidIn, toKid := io.Pipe()
			fromKid, kidOut := io.Pipe()
			done := make(chan error, 1)
			topo := c.topo(t)
			go func() {
				done <- multilang.Serve(context.Background(), topo, kidIn, kidOut)
				kidOut.Close()
			}()
			hs := wire.Handshake{Conf: map[string]any{}, PidDir: t.TempDir(), Context: wire.Context{ComponentID: c.component, TaskID: 1}}
			go func() { _ = wire.WriteFrame(toKid, hs) }()
			fr := wire.NewFrameReader(fromKid, 0)
			f, err := nextFrame(t, fr, fromKid)
			if err != nil {
				t.Fatal(err)
			}
			if m, err := wire.Decode(f); err != nil || m.Kind != wire.KindPid { // Storm reads only a pid first
				t.Errorf("child said %s first, want its pid", f)
			}
			if f, err = nextFrame(t, fr, fromKid); err != nil {
				t.Fatal(err)
			}
			var msg map[string]string
			_ = json.Unmarshal(f, &msg)
			if msg["command"] != "error" || !strings.Contains(msg["msg"], c.says) {
				t.Errorf("child said %s", f)
			}
			err = testsupport.Recv(t, done, 10*time.Second, "Serve's end")
			if err == nil || !strings.Contains(err.Error(), c.says) || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("Serve: %v", err)
			}
			toKid.Close()
		})
	}
}

// Storm sends an input with the stream id its sender declared: a shell bolt's
// "default" here, which Flux exports for split; Serve resolves it from the
// sender (issue 13: every split -> count tuple failed).
func TestServeResolvesAnInputStreamByItsSendersDeclaredID(t *testing.T) {
	topo := wordCount(t, false)
	h := startServe(t, topo, "count", 5)
	h.send(map[string]any{"id": "-5", "comp": "split", "stream": "default", "task": 9, "tuple": []string{"the"}})
	if ack := h.expect(wire.KindAck); ack.ID.String() != "-5" {
		t.Fatalf("got %+v, want the input acked", ack)
	}
	h.send(map[string]any{"id": "-6", "comp": "split", "stream": "Word", "task": 9, "tuple": []string{"cow"}}) // goshelter's name
	if ack := h.expect(wire.KindAck); ack.ID.String() != "-6" {
		t.Fatalf("got %+v, want the input acked", ack)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	// A sender with two streams to the bolt: each id names its own.
	b := dsl.New("two-streams", nil)
	b.Streams(Word{}, Count{})
	spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	split := b.Bolt("split", multilang.Bolt(multilang.Command{Path: "python3", Args: []string{"split.py"},
		Outputs: map[string]any{"default": Word{}, "totals": Count{}}}))
	got := make(chan any, 2)
	sink := b.Bolt("sink", dsl.AutoAck(func(in any, _ dsl.Emitter) error { got <- in; return nil }))
	b.Unanchored(spout, split, dsl.Shuffle[Sentence]())
	b.Unanchored(split, sink, dsl.Shuffle[Word]())
	b.Unanchored(split, sink, dsl.Shuffle[Count]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h = startServe(t, topo, "sink", 1)
	h.send(map[string]any{"id": "w", "comp": "split", "stream": "default", "task": 3, "tuple": []any{"the"}})
	h.send(map[string]any{"id": "c", "comp": "split", "stream": "totals", "task": 3, "tuple": []any{"the", 3}})
	for _, id := range []string{"w", "c"} {
		if ack := h.expect(wire.KindAck); ack.ID.String() != id {
			t.Fatalf("got %+v, want input %q acked", ack, id)
		}
	}
	if a, b := testsupport.Recv(t, got, 10*time.Second, "the word"), testsupport.Recv(t, got, 10*time.Second, "the count"); a != (Word{"the"}) || b != (Count{"the", 3}) {
		t.Errorf("the bolt got %v and %v", a, b)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// Storm numbers tasks its own way (its ackers sort among the components): a
// served component sees the host's ids in TaskInfo.Model, and its direct
// emits name them.
func TestServeUsesTheHostsTaskIDs(t *testing.T) {
	b := dsl.New("numbering", nil)
	b.Streams(Word{})
	spout := b.Spout("a-lines", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	seen := make(chan string, 1)
	bolt := b.Bolt("b-split", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Sentence] {
		seen <- fmt.Sprint(info.Model.Component("z-sink").Tasks, info.Model.AckerTasks, info.Index, info.Parallelism)
		return handlerFunc[Sentence](func(s Sentence, out dsl.Emitter) error {
			out.EmitDirect(info.Model.Component("z-sink").Tasks[1], Word{s.Text})
			return nil
		})
	}), dsl.Parallelism(2))
	sink := b.Bolt("z-sink", dsl.AutoAck(func(Word, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
	b.Unanchored(spout, bolt, dsl.Shuffle[Sentence]())
	b.Unanchored(bolt, sink, dsl.Direct[Word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// goshelter: a-lines 1, b-split 2-3, z-sink 4-5, ackers 6-9. Storm: __acker
	// 1-2 sorts before the lowercase ids.
	storm := map[string]string{"1": "__acker", "2": "__acker", "3": "a-lines", "4": "b-split", "5": "b-split", "6": "z-sink", "7": "z-sink"}
	h := newFakeHost(t, topo, map[string]any{}, wire.Context{ComponentID: "b-split", TaskID: 5, TaskToComponent: storm})
	if got := testsupport.Recv(t, seen, 10*time.Second, "the bolt's context"); got != "[6 7] [1 2] 1 2" {
		t.Errorf("model tasks, ackers, index, parallelism: %s", got)
	}
	h.send(map[string]any{"id": "1", "comp": "a-lines", "stream": "Sentence", "task": 3, "tuple": []string{"hi"}})
	if emit := h.expect(wire.KindEmit); emit.Task != 7 {
		t.Errorf("direct emit %+v, want task 7", emit)
	}
	h.expect(wire.KindAck)
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// Only the entries at the level the conf asks (info by default) cross the pipe.
func TestServeSendsTheLogLevelAsked(t *testing.T) {
	b := dsl.New("levels", nil)
	spout := b.Spout("s", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	bolt := b.Bolt("b", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Sentence] {
		info.Logger.Debug("a debug line")
		info.Logger.Info("an info line")
		return handlerFunc[Sentence](func(Sentence, dsl.Emitter) error { return nil })
	}))
	b.Unanchored(spout, bolt, dsl.Shuffle[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		conf  map[string]any
		first string
		level wire.Level
	}{
		{map[string]any{}, "an info line", wire.LevelInfo},
		{map[string]any{"goshelter.multilang.log.level": "debug"}, "a debug line", wire.LevelDebug},
		{map[string]any{"goshelter.multilang.log.level": "warn"}, "", wire.LevelInfo},
	} {
		h := newFakeHost(t, topo, tc.conf, wire.Context{ComponentID: "b", TaskID: 2, TaskToComponent: map[string]string{"1": "s", "2": "b"}})
		h.send(map[string]any{"id": "hb", "comp": nil, "stream": "__heartbeat", "task": -1, "tuple": []any{}})
		m := h.read()
		if tc.first == "" {
			if m.Kind != wire.KindSync {
				t.Errorf("conf %v: got %+v before the sync, want nothing", tc.conf, m)
			}
		} else if m.Kind != wire.KindLog || !strings.HasPrefix(m.Msg, tc.first) || m.Level != tc.level {
			t.Errorf("conf %v: first message %+v, want %q", tc.conf, m, tc.first)
		}
		if err := h.close(); err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
}

// directSentences sends every sentence to the last task of "z-sink".
type directSentences struct {
	info dsl.TaskInfo
	sent bool
}

func (d *directSentences) Next() (int, Sentence, bool) {
	if d.sent {
		return 0, Sentence{}, false
	}
	d.sent = true
	return 1, Sentence{"direct"}, true
}
func (d *directSentences) Ack(int)  {}
func (d *directSentences) Nack(int) {}
func (d *directSentences) DirectTask(Sentence) int {
	tasks := d.info.Model.Component("z-sink").Tasks
	return tasks[len(tasks)-1]
}

// A served spout emits direct with the host's id of the target task, and gets
// no task ids back (Storm sends none for a direct emit).
func TestServeSpoutEmitsDirectWithTheHostsTaskIDs(t *testing.T) {
	b := dsl.New("direct-spout", nil)
	spout := b.Spout("a-sentences", dsl.ReliableFrom(func(info dsl.TaskInfo) dsl.Source[int, Sentence] {
		return &directSentences{info: info}
	}))
	sink := b.Bolt("z-sink", dsl.AutoAck(func(Sentence, dsl.Emitter) error { return nil }), dsl.Parallelism(2))
	b.Anchored(spout, sink, dsl.Direct[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	storm := map[string]string{"1": "__acker", "2": "a-sentences", "3": "z-sink", "4": "z-sink"}
	h := newFakeHost(t, topo, map[string]any{}, wire.Context{ComponentID: "a-sentences", TaskID: 2, TaskToComponent: storm})
	h.send(map[string]string{"id": "", "command": "next"})
	emit := h.expect(wire.KindEmit)
	if emit.Task != 4 || emit.ID.IsZero() || emit.NeedTaskIDs || emit.Stream != "Sentence" {
		t.Errorf("emit %+v, want a tracked direct emit to task 4", emit)
	}
	h.expect(wire.KindSync)
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// phase is the lifecycle tuple of lifecycleTopology's bolt.
type phase struct{ Name string }

// lifecycleTopology is words -> sink, the sink (task 2) a manual bolt that
// handles its Words and its lifecycle tuples phase{"up"} and phase{"down"}
// with handle.
func lifecycleTopology(t *testing.T, name string, handle func(v any, in dsl.Tuple, c dsl.Collector) error) *dsl.Topology {
	t.Helper()
	b := dsl.New(name, nil)
	b.Streams(Word{}, phase{})
	s := b.Spout("words", dsl.Unreliable(func() (Word, bool) { return Word{}, false }))
	sink := b.Bolt("sink", dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[any] {
		return manualFunc[any](handle)
	}), dsl.LifecycleTuples(phase{"up"}, phase{"down"}))
	b.Anchored(s, sink, dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestServeDeliversLifecycleTuplesAsTheRuntimeDoes: a served bolt hears its
// activation tuple before its first input and its deactivation tuple when the
// host closes its input, untracked, from Storm's system component.
func TestServeDeliversLifecycleTuplesAsTheRuntimeDoes(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	topo := lifecycleTopology(t, "lifecycle", func(v any, in dsl.Tuple, c dsl.Collector) error {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%v from %s/%d tracked=%v", v, in.Source, in.Task, in.ID.Edge != 0))
		mu.Unlock()
		c.Ack(in)
		return nil
	})
	h := startServe(t, topo, "sink", 2)
	h.send(map[string]any{"id": "7", "comp": "words", "stream": "Word", "task": 1, "tuple": []string{"hello"}})
	if ack := h.expect(wire.KindAck); ack.ID.String() != "7" {
		t.Fatalf("ack %+v", ack)
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"{up} from __system/-1 tracked=false", "{hello} from words/1 tracked=true", "{down} from __system/-1 tracked=false"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("the bolt saw %q, want %q", seen, want)
	}
}

// TestServeEndsTheComponentsContextWhenItReturns: a served component doing
// I/O under TaskInfo.Context hears that Serve is over, as a runtime task
// hears its stop.
func TestServeEndsTheComponentsContextWhenItReturns(t *testing.T) {
	ctxs := make(chan context.Context, 1)
	b := dsl.New("ctx", nil)
	b.Streams(Word{})
	s := b.Spout("words", dsl.Unreliable(func() (Word, bool) { return Word{}, false }))
	b.Anchored(s, b.Bolt("sink", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Word] {
		ctxs <- info.Context()
		return handlerFunc[Word](func(Word, dsl.Emitter) error { return nil })
	})), dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := startServe(t, topo, "sink", 2)
	ctx := testsupport.Recv(t, ctxs, 10*time.Second, "the task's context")
	if ctx.Err() != nil {
		t.Fatalf("the context ended while Serve runs: %v", context.Cause(ctx))
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the component's context did not end when Serve returned")
	}
}

// tickingSplit is a served bolt's handler that hears ticks.
type tickingSplit struct{}

func (tickingSplit) Execute(Sentence, dsl.Emitter) error { return nil }
func (tickingSplit) Tick(t dsl.Tick, c dsl.Collector) error {
	c.Emit(Word{fmt.Sprintf("%d %v", t.RateSecs, t.Period)})
	return nil
}

// A served bolt hears Storm's tick (one field, rate_secs) as goshelter's
// Tick: the rate, and a period of that many seconds; a tick without the
// field is a rate of 0.
func TestServeDeliversStormsTicksAsTicks(t *testing.T) {
	b := dsl.New("ticks", nil)
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	split := b.Bolt("split", dsl.AutoAckFrom(func(dsl.TaskInfo) tickingSplit { return tickingSplit{} }), dsl.WithConf(dsl.Conf{dsl.TickFrequency: time.Second}))
	b.Unanchored(spout, split, dsl.Shuffle[Sentence]())
	b.Unanchored(split, b.Bolt("count", dsl.AutoAck(func(Word, dsl.Emitter) error { return nil })), dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := startServe(t, topo, "split", topo.Component("split").Tasks[0])
	for _, tt := range []struct {
		values []int
		want   string
	}{{[]int{7}, `"7 7s"`}, {[]int{}, `"0 0s"`}} {
		h.send(map[string]any{"id": "t", "comp": "__system", "stream": "__tick", "task": -1, "tuple": tt.values})
		if emit := h.expect(wire.KindEmit); string(emit.Tuple[0]) != tt.want {
			t.Errorf("tick %v: the handler saw %s, want %s", tt.values, emit.Tuple[0], tt.want)
		}
		h.expect(wire.KindAck)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// Serve refuses a first message that is not a handshake, or not JSON at all,
// quoting it.
func TestServeRefusesABadHandshake(t *testing.T) {
	topo := servedTopology(t, &servedSource{}, nil)
	for _, first := range []string{`{"command":"next"}`, `not json`} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := multilang.Serve(ctx, topo, strings.NewReader(first+"\nend\n"), io.Discard)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "multilang: bad handshake "+strconv.Quote(first)) {
			t.Errorf("first message %s: Serve = %v, want a bad handshake quoting it", first, err)
		}
	}
}

// A served bolt's emits obey the stream's directness as the runtime's router
// does: a direct emit on a direct stream goes to the task named if it
// subscribes; one to another task, a plain emit on a direct stream and a
// direct emit on a stream that is not direct fail the input, saying why.
func TestServeBoltChecksDirectEmits(t *testing.T) {
	b := dsl.New("direct-bolt", nil)
	b.Streams(Word{}, Count{})
	spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	split := b.Bolt("split", dsl.AutoAck(func(s Sentence, out dsl.Emitter) error {
		var task int
		kind, _, _ := strings.Cut(s.Text, " ")
		fmt.Sscanf(s.Text, kind+" %d", &task)
		switch kind {
		case "word":
			out.EmitDirect(task, Word{s.Text})
		case "plain":
			out.Emit(Word{s.Text})
		case "count":
			out.EmitDirect(task, Count{Word: s.Text})
		}
		return nil
	}))
	b.Anchored(spout, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, b.Bolt("z-sink", dsl.AutoAck(func(Word, dsl.Emitter) error { return nil }), dsl.Parallelism(2)), dsl.Direct[Word]())
	b.Anchored(split, b.Bolt("total", dsl.AutoAck(func(Count, dsl.Emitter) error { return nil })), dsl.Shuffle[Count]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	storm := map[string]string{"1": "__acker", "2": "sentences", "3": "split", "4": "total", "5": "z-sink", "6": "z-sink"}
	h := newFakeHost(t, topo, map[string]any{}, wire.Context{ComponentID: "split", TaskID: 3, TaskToComponent: storm})
	h.send(map[string]any{"id": "ok", "comp": "sentences", "stream": "Sentence", "task": 2, "tuple": []string{"word 6"}})
	if emit := h.expect(wire.KindEmit); emit.Task != 6 || emit.Stream != "Word" {
		t.Errorf("emit %+v, want a direct emit to task 6", emit)
	}
	if ack := h.expect(wire.KindAck); ack.ID.String() != "ok" {
		t.Errorf("ack %+v", ack)
	}
	for _, tt := range []struct{ id, text, why string }{
		{"elsewhere", "word 4", "cannot emit Word: task 4 does not subscribe to the stream"},
		{"plain", "plain", "cannot emit Word: the stream is direct: use EmitDirect with a task id"},
		{"count", "count 4", "cannot emit Count: EmitDirect on a stream whose subscribers do not use direct grouping"},
	} {
		h.send(map[string]any{"id": tt.id, "comp": "sentences", "stream": "Sentence", "task": 2, "tuple": []string{tt.text}})
		if fail := h.expect(wire.KindFail); fail.ID.String() != tt.id {
			t.Fatalf("%q: got %+v, want its fail", tt.text, fail)
		}
		if e := h.expect(wire.KindError); !strings.Contains(e.Msg, `component "split" `+tt.why) {
			t.Errorf("%q: error %q, want it to say %q", tt.text, e.Msg, tt.why)
		}
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// finish ends the child's input and returns what Serve still said, up to the
// end of its output, and Serve's error.
func (h *fakeHost) finish() ([]*wire.Message, error) {
	h.t.Helper()
	h.toKid.Close()
	var said []*wire.Message
	for {
		f, err := h.next()
		if err != nil {
			break // Serve closed its output: it returned
		}
		m, err := wire.Decode(f)
		if err != nil {
			h.t.Fatalf("child sent %s: %v", f, err)
		}
		said = append(said, m)
	}
	return said, testsupport.Recv(h.t, h.done, 10*time.Second, "Serve's end")
}

// logsOf returns the messages of the log entries among msgs.
func logsOf(msgs []*wire.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Kind == wire.KindLog {
			out = append(out, m.Msg)
		}
	}
	return out
}

// closingSource is a Source with nothing to emit whose Close returns err, or
// panics with it if panics is set.
type closingSource struct {
	err    error
	panics bool
}

func (closingSource) Next() (int, Sentence, bool) { return 0, Sentence{}, false }
func (closingSource) Ack(int)                     {}
func (closingSource) Nack(int)                    {}
func (s closingSource) Close() error {
	if s.panics {
		panic(s.err)
	}
	return s.err
}

// A served spout's Source is closed when Serve is done with it; an error it
// returns, or a panic, is logged to the host, which gets the entry before
// Serve's output ends. A clean Close logs nothing.
func TestServeLogsASpoutsUncleanClose(t *testing.T) {
	for _, tt := range []struct {
		src  closingSource
		want string // the one entry logged after the input ended, "" for none
	}{
		{closingSource{err: errors.New("the file would not close")}, "spout did not close cleanly"},
		{closingSource{err: errors.New("closing blew up"), panics: true}, "spout panicked while closing"},
		{closingSource{}, ""},
	} {
		b := dsl.New("closing", nil)
		spout := b.Spout("s", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Sentence] { return tt.src }))
		b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(Sentence, dsl.Emitter) error { return nil })), dsl.Shuffle[Sentence]())
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		h := startServe(t, topo, "s", 1)
		said, err := h.finish()
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		logs := logsOf(said)
		if tt.want == "" && len(logs) != 0 {
			t.Errorf("a clean Close was logged: %q", logs)
		}
		if tt.want != "" && (len(logs) != 1 || !strings.HasPrefix(logs[0], tt.want) || !strings.Contains(logs[0], tt.src.err.Error())) {
			t.Errorf("the host heard %q after the input ended, want one entry %q saying %q", logs, tt.want, tt.src.err)
		}
	}
}

// A served bolt's lifecycle tuple that its handler fails is logged to the
// host (there is no input to fail); one it handles is not.
func TestServeLogsALifecycleTupleTheBoltFailed(t *testing.T) {
	topo := lifecycleTopology(t, "lifecycle-fails", func(v any, in dsl.Tuple, c dsl.Collector) error {
		if v == (phase{"up"}) {
			return errors.New("cannot start")
		}
		if v != (phase{"down"}) {
			c.Ack(in)
		}
		return nil
	})
	h := startServe(t, topo, "sink", 2)
	h.send(map[string]any{"id": "7", "comp": "words", "stream": "Word", "task": 1, "tuple": []string{"hello"}})
	var before []*wire.Message // what Serve said up to the input's ack
	for m := h.read(); m.Kind != wire.KindAck; m = h.read() {
		before = append(before, m)
	}
	if logs := logsOf(before); len(logs) != 1 || !strings.Contains(logs[0], "bolt failed a lifecycle tuple") || !strings.Contains(logs[0], "cannot start") {
		t.Errorf("the host heard %q before the input's ack, want the activation's failure logged", logs)
	}
	said, err := h.finish()
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if logs := logsOf(said); len(logs) != 0 {
		t.Errorf("the deactivation, handled, was logged: %q", logs)
	}
}

// A host that runs a Go sender as a shell component without declared ids
// names its only stream to the bolt "default": Serve takes that stream.
func TestServeResolvesDefaultToTheSendersOnlyStream(t *testing.T) {
	b := dsl.New("go-sender", nil)
	b.Streams(Word{})
	spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
	split := b.Bolt("split", dsl.AutoAck(func(Sentence, dsl.Emitter) error { return nil }))
	got := make(chan any, 1)
	sink := b.Bolt("sink", dsl.AutoAck(func(in any, _ dsl.Emitter) error { got <- in; return nil }))
	b.Unanchored(spout, split, dsl.Shuffle[Sentence]())
	b.Unanchored(split, sink, dsl.Shuffle[Word]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := startServe(t, topo, "sink", topo.Component("sink").Tasks[0])
	h.send(map[string]any{"id": "d", "comp": "split", "stream": "default", "task": 2, "tuple": []string{"the"}})
	if ack := h.expect(wire.KindAck); ack.ID.String() != "d" {
		t.Fatalf("got %+v, want the input acked", ack)
	}
	if in := testsupport.Recv(t, got, 10*time.Second, "the input"); in != (Word{"the"}) {
		t.Errorf("the bolt got %v, want the Word", in)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// A stream id a shell sender declared wins over a stream name it shadows,
// whatever the order of the edges: here split's "Word" is its Count stream,
// and its Word stream is "default".
func TestServePrefersADeclaredIDToAStreamName(t *testing.T) {
	for _, countFirst := range []bool{true, false} {
		b := dsl.New("shadowing", nil)
		b.Streams(Word{}, Count{})
		spout := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) { return Sentence{}, false }))
		split := b.Bolt("split", multilang.Bolt(multilang.Command{Path: "python3", Args: []string{"split.py"},
			Outputs: map[string]any{"default": Word{}, "Word": Count{}}}))
		got := make(chan any, 2)
		sink := b.Bolt("sink", dsl.AutoAck(func(in any, _ dsl.Emitter) error { got <- in; return nil }))
		b.Unanchored(spout, split, dsl.Shuffle[Sentence]())
		if countFirst {
			b.Unanchored(split, sink, dsl.Shuffle[Count]())
		}
		b.Unanchored(split, sink, dsl.Shuffle[Word]())
		if !countFirst {
			b.Unanchored(split, sink, dsl.Shuffle[Count]())
		}
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		h := startServe(t, topo, "sink", topo.Component("sink").Tasks[0])
		h.send(map[string]any{"id": "c", "comp": "split", "stream": "Word", "task": 3, "tuple": []any{"the", 3}})
		h.send(map[string]any{"id": "w", "comp": "split", "stream": "default", "task": 3, "tuple": []any{"cow"}})
		for _, id := range []string{"c", "w"} {
			if ack := h.expect(wire.KindAck); ack.ID.String() != id {
				t.Fatalf("count first %v: got %+v, want input %q acked", countFirst, ack, id)
			}
		}
		if a, b := testsupport.Recv(t, got, 10*time.Second, "the count"), testsupport.Recv(t, got, 10*time.Second, "the word"); a != (Count{"the", 3}) || b != (Word{"cow"}) {
			t.Errorf("count first %v: the bolt got %v and %v", countFirst, a, b)
		}
		if err := h.close(); err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
}

// When Serve returns for another reason than the end of its input (here a
// spout that panics), it closes an input that is an io.Closer: the host's
// writes fail from then on.
func TestServeClosesItsInputWhenItReturns(t *testing.T) {
	b := dsl.New("panicking", nil)
	spout := b.Spout("s", dsl.Unreliable(func() (Sentence, bool) { panic("no more sentences") }))
	b.Unanchored(spout, b.Bolt("sink", dsl.AutoAck(func(Sentence, dsl.Emitter) error { return nil })), dsl.Shuffle[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := startServe(t, topo, "s", 1)
	h.send(map[string]string{"command": "next"})
	if e := h.expect(wire.KindError); !strings.Contains(e.Msg, "no more sentences") {
		t.Errorf("error %q, want the panic", e.Msg)
	}
	go func() { _, _ = io.Copy(io.Discard, readerOf(h.frames)) }()
	if err := testsupport.Recv(t, h.done, 10*time.Second, "Serve's end"); err == nil {
		t.Error("Serve returned nil after the spout panicked")
	}
	if _, err := h.toKid.Write([]byte("{}\nend\n")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the host's write after Serve returned gave %v, want io.ErrClosedPipe", err)
	}
	h.toKid.Close()
}

// numberSource emits its numbers once each, as measures, and records which
// it heard acked and nacked.
type numberSource struct {
	mu            sync.Mutex
	values        []float64
	next          int
	acked, nacked []int
}

type Measure struct{ V float64 }

func (s *numberSource) Next() (int, Measure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == len(s.values) {
		return 0, Measure{}, false
	}
	s.next++
	return s.next, Measure{s.values[s.next-1]}, true
}
func (s *numberSource) Ack(id int)  { s.mu.Lock(); s.acked = append(s.acked, id); s.mu.Unlock() }
func (s *numberSource) Nack(id int) { s.mu.Lock(); s.nacked = append(s.nacked, id); s.mu.Unlock() }

// A served spout's message that cannot be sent (NaN is no JSON) is nacked
// and the spout goes on: each message sent has a message id of its own,
// distinct from every other message's in flight, whose ack the spout hears.
func TestServeSpoutGoesOnAfterAMessageThatCannotBeSent(t *testing.T) {
	src := &numberSource{values: []float64{math.NaN(), 1.5, 2.5, math.NaN()}}
	b := dsl.New("measures", nil)
	spout := b.Spout("m", dsl.ReliableFrom(func(dsl.TaskInfo) dsl.Source[int, Measure] { return src }))
	b.Anchored(spout, b.Bolt("sink", dsl.AutoAck(func(Measure, dsl.Emitter) error { return nil })), dsl.Shuffle[Measure]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := startServe(t, topo, "m", 1)
	var sent []wire.ID
	for _, v := range src.values {
		h.send(map[string]string{"command": "next"})
		if math.IsNaN(v) {
			if e := h.expect(wire.KindError); !strings.Contains(e.Msg, "cannot be sent as JSON") {
				t.Errorf("error %q, want the NaN refused", e.Msg)
			}
		} else {
			emit := h.expect(wire.KindEmit)
			if string(emit.Tuple[0]) != fmt.Sprint(v) || emit.ID.IsZero() || slices.Contains(sent, emit.ID) {
				t.Fatalf("emit %+v, want %v with a message id of its own (sent before: %v)", emit, v, sent)
			}
			sent = append(sent, emit.ID)
		}
		h.expect(wire.KindSync)
	}
	for _, id := range sent {
		h.send(map[string]any{"command": "ack", "id": id})
		h.expect(wire.KindSync)
	}
	src.mu.Lock()
	acked, nacked := src.acked, src.nacked
	src.mu.Unlock()
	if !reflect.DeepEqual(acked, []int{2, 3}) || !reflect.DeepEqual(nacked, []int{1, 4}) {
		t.Errorf("the source heard acks %v and nacks %v, want [2 3] and [1 4]", acked, nacked)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
