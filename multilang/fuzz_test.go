package multilang_test

// Fuzz targets for what a host can send to Serve (bad input of every kind):
// FuzzServeBolt and FuzzServeSpout feed a host's stream, after a valid
// handshake, to Serve running a Go bolt or spout, whose output must stay valid
// multilang. What a child can send is fuzzed in internal/wire (FuzzDecode,
// FuzzDecodeHost, FuzzChildStream).
//
// go test runs the seeds below and the corpus in testdata/fuzz/<Target>;
// go test -run XXX -fuzz FuzzServeBolt -fuzztime 30s ./multilang explores more.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// The topology Serve runs in the fuzz targets: numbers -> double -> sink.
type FuzzNum struct{ N int }
type FuzzDoubled struct{ N int }

func fuzzTopology(t *testing.T) *dsl.Topology {
	t.Helper()
	n := 0
	b := dsl.New("fuzz", nil)
	b.Streams(FuzzDoubled{})
	numbers := b.Spout("numbers", dsl.Reliable(func() (int, FuzzNum, bool) {
		n++
		if n%5 == 0 {
			return 0, FuzzNum{}, false // sometimes nothing to emit
		}
		return n, FuzzNum{N: n}, true
	}, func(int) {}, func(int) {}))
	double := b.Bolt("double", dsl.AutoAck(func(in FuzzNum, out dsl.Emitter) error {
		switch {
		case in.N == 13:
			panic("unlucky input") // a panicking bolt fails the input and goes on
		case in.N < 0:
			return errors.New("negative input")
		}
		out.Emit(FuzzDoubled{N: 2 * in.N})
		return nil
	}))
	sink := b.Bolt("sink", dsl.AutoAck(func(FuzzDoubled, dsl.Emitter) error { return nil }))
	b.Anchored(numbers, double, dsl.Shuffle[FuzzNum]())
	b.Anchored(double, sink, dsl.Shuffle[FuzzDoubled]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// fuzzServe runs component of topo under Serve with a valid handshake followed
// by stream, and checks that it ends in time and that everything it wrote is
// multilang the host accepts, starting with the pid.
func fuzzServe(t *testing.T, topo *dsl.Topology, component string, stream []byte) {
	c := topo.Component(component)
	var in bytes.Buffer
	hs := wire.Handshake{Conf: map[string]any{}, PidDir: t.TempDir(), Context: multilang.NewContext(topo, c, c.Tasks[0])}
	if err := wire.WriteFrame(&in, hs); err != nil {
		t.Fatal(err)
	}
	in.Write(stream)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- multilang.Serve(ctx, topo, io.NopCloser(&in), &out) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("Serve did not return on input %q", stream)
	}
	if ctx.Err() != nil {
		t.Fatalf("Serve ran until its context ended on input %q", stream)
	}
	fr := wire.NewFrameReader(&out, 0)
	for i := 0; ; i++ {
		frame, err := fr.Next()
		if err == io.EOF {
			if i == 0 {
				t.Fatal("Serve wrote nothing, not even its pid")
			}
			return
		}
		if err != nil {
			t.Fatalf("Serve's output is not framed: %v", err)
		}
		m, err := wire.Decode(frame)
		if err != nil {
			t.Fatalf("Serve wrote %q, which the host rejects: %v", frame, err)
		}
		if i == 0 && m.Kind != wire.KindPid {
			t.Fatalf("Serve's first message is %q, not the pid", frame)
		}
	}
}

// FuzzServeBolt feeds a served Go bolt arbitrary host input: tuples of wrong
// shapes and types, unknown streams, heartbeats, ticks, task id lists and
// garbage.
func FuzzServeBolt(f *testing.F) {
	for _, seed := range []string{
		`{"id":"1","comp":"numbers","stream":"FuzzNum","task":1,"tuple":[3]}` + "\nend\n",
		`{"id":"1","comp":"numbers","stream":"FuzzNum","task":1,"tuple":[13]}` + "\nend\n" +
			`{"id":"2","comp":"numbers","stream":"FuzzNum","task":1,"tuple":[-4]}` + "\nend\n",
		`{"id":"hb","comp":"","stream":"__heartbeat","task":-1,"tuple":[]}` + "\nend\n",
		`{"id":"t","comp":"__system","stream":"__tick","task":-1,"tuple":[30]}` + "\nend\n",
		`{"id":"1","comp":"numbers","stream":"FuzzNum","task":1,"tuple":["three"]}` + "\nend\n",
		`{"id":"1","comp":"nobody","stream":"nowhere","task":99,"tuple":[1,2,3]}` + "\nend\n",
		`{"id":null,"comp":"numbers","stream":"FuzzNum","task":1,"tuple":[1]}` + "\nend\n",
		"[1,2,3]\nend\n{\"command\":\"next\"}\nend\n",
		"{\"conf\":{},\"pidDir\":\"/nonexistent\",\"context\":{\"componentid\":\"double\"}}\nend\n",
		"garbage\nend\n",
		`{"id":"1","tuple":[1]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		fuzzServe(t, fuzzTopology(t), "double", stream)
	})
}

// FuzzServeSpout feeds a served Go spout arbitrary host commands: next, acks
// and fails of ids it never emitted, activation, and garbage.
func FuzzServeSpout(f *testing.F) {
	for _, seed := range []string{
		"{\"command\":\"activate\"}\nend\n{\"command\":\"next\"}\nend\n{\"command\":\"ack\",\"id\":\"1\"}\nend\n",
		"{\"command\":\"next\"}\nend\n{\"command\":\"fail\",\"id\":1}\nend\n{\"command\":\"next\"}\nend\n",
		"{\"command\":\"ack\",\"id\":\"not-a-root\"}\nend\n{\"command\":\"fail\",\"id\":-5}\nend\n",
		"{\"command\":\"ack\",\"id\":\"18446744073709551616\"}\nend\n{\"command\":\"deactivate\"}\nend\n",
		"{\"command\":\"emit\",\"tuple\":[1]}\nend\n",
		`{"id":"1","comp":"x","stream":"s","task":1,"tuple":[1]}` + "\nend\n",
		"{\"command\":\"ack\"}\nend\n",
		"{\"command\":\"next\"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		if bytes.Count(stream, []byte("next")) > 200 {
			return // an idle next sleeps a millisecond; keep each run short
		}
		fuzzServe(t, fuzzTopology(t), "numbers", stream)
	})
}
