package observe

import (
	"encoding/binary"
	"net/http"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// TestStormConfigurationListsEveryKeyTheTopologyRunsWith: Storm UI's topology
// page shows the whole configuration, defaults included; goshelter's listed
// only the keys the user set.
func TestStormConfigurationListsEveryKeyTheTopologyRunsWith(t *testing.T) {
	b := dsl.New("t", dsl.Conf{
		dsl.MaxSpoutPending:      500,
		dsl.MessageTimeout:       1500 * time.Millisecond, // finer than the key's seconds
		dsl.CheckpointInterval:   250 * time.Millisecond,
		"topology.workers":       3, // Storm's, passed through
		"my.own.key":             "yes",
		"topology.kryo.register": []any{"a.B"},
		dsl.BatchFlushInterval:   0, // off
	})
	src := b.Spout("src", dsl.Unreliable(func() (line, bool) { return line{}, false }))
	bolt := b.Bolt("bolt", dsl.AutoAck(func(line, dsl.Emitter) error { return nil }))
	b.Anchored(src, bolt, dsl.Shuffle[line]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	conf := configuration(topo)
	want := map[string]any{
		"topology.name": "t",
		// set by the user, in the key's unit
		dsl.MaxSpoutPending: 500, dsl.MessageTimeout: 1.5, dsl.CheckpointInterval: int64(250), dsl.BatchFlushInterval: int64(0),
		"topology.workers": 3, "my.own.key": "yes",
		// defaults
		dsl.AckerTasks: 4, dsl.AckerExecutors: 2, dsl.ReceiveBufferSize: 256, dsl.SpoutWait: int64(100), dsl.Debug: false,
		dsl.SubprocessTimeout: int64(30), dsl.AckerCapacity: 1 << 20, dsl.BatchSize: 64, "topology.bolts.window.max.tuples": 1 << 20,
	}
	for k, v := range want {
		if got, ok := conf[k]; !ok || got != v {
			t.Errorf("configuration[%q] = %#v, want %#v", k, got, v)
		}
	}
	if _, ok := conf[dsl.TickFrequency]; ok {
		t.Errorf("configuration has %q = %v with no tick tuples (Storm's default is none)", dsl.TickFrequency, conf[dsl.TickFrequency])
	}

	// The API serves it, as JSON.
	srv, err := listen("127.0.0.1:0", newHandler(topo, script(supervision.Stats{Topology: "t", Time: t0, Incarnation: 1})), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := getJSON(t, "http://"+srv.Addr+"/api/v1/topology/t", http.StatusOK)
	served := body["configuration"].(map[string]any)
	for k, v := range map[string]any{dsl.MessageTimeout: 1.5, dsl.AckerTasks: 4.0, "topology.name": "t", "topology.kryo.register": []any{"a.B"}} {
		if got := mustJSON(t, served[k]); got != mustJSON(t, v) {
			t.Errorf("served configuration[%q] = %s, want %s", k, got, mustJSON(t, v))
		}
	}
}

// positioned is a source with positions: in the checkpoint of a topology with state.
type positioned struct{ n uint64 }

func (s *positioned) Next() (uint64, line, bool) { return 0, line{}, false }
func (s *positioned) Ack(uint64)                 {}
func (s *positioned) Nack(uint64)                {}
func (s *positioned) Position() []byte           { return binary.AppendUvarint(nil, s.n) }
func (s *positioned) Rewind([]byte) error        { return nil }

// plain is a reliable source without positions.
type plain struct{}

func (plain) Next() (uint64, line, bool) { return 0, line{}, false }
func (plain) Ack(uint64)                 {}
func (plain) Nack(uint64)                {}

// TestStormMarksTheSpoutsOutsideTheCheckpoint: in a topology with state, a
// reliable spout declared dsl.OutsideCheckpoint() says so (its messages are
// at-least-once for the state); the others, and every spout of a topology
// without state, do not.
func TestStormMarksTheSpoutsOutsideTheCheckpoint(t *testing.T) {
	b := dsl.New("t", nil)
	in := b.Spout("in", dsl.ReliableFrom(func(dsl.TaskInfo) *positioned { return &positioned{} }))
	side := b.Spout("side", dsl.ReliableFrom(func(dsl.TaskInfo) plain { return plain{} }), dsl.OutsideCheckpoint())
	count := b.Bolt("count", dsl.Stateful(func(in line, st *dsl.State[string, int], _ dsl.Emitter) error { return nil }))
	b.Anchored(in, count, dsl.Shuffle[line]())
	b.Anchored(side, count, dsl.Shuffle[line]())
	topo := build(t, b)
	srv, err := listen("127.0.0.1:0", newHandler(topo, script(supervision.Stats{Topology: "t", Time: t0, Incarnation: 1})), defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := getJSON(t, "http://"+srv.Addr+"/api/v1/topology/t", http.StatusOK)
	if body["stateful"] != true {
		t.Fatalf("stateful = %v", body["stateful"])
	}
	for id, want := range map[string]bool{"in": false, "side": true} {
		if got := byKey(t, body["spouts"], "spoutId", id)["outsideCheckpoint"]; got != want {
			t.Errorf("spout %s: outsideCheckpoint = %v, want %v", id, got, want)
		}
	}
	// Without state there is no checkpoint to be outside of.
	body = getJSON(t, serve(t, sampleStats(time.Second, 1))+"/api/v1/topology/t", http.StatusOK)
	if got := byKey(t, body["spouts"], "spoutId", "src")["outsideCheckpoint"]; got != false {
		t.Errorf("a spout of a topology without state: outsideCheckpoint = %v", got)
	}
}
