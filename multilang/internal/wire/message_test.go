package wire_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/multilang/internal/wire"
)

func raw(values ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		out[i] = json.RawMessage(v)
	}
	return out
}

func TestDecodeAppliesStormDefaults(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want wire.Message
	}{
		{"emit with nothing optional", `{"command":"emit","tuple":["a"]}`,
			wire.Message{Kind: wire.KindEmit, Stream: "default", Tuple: raw(`"a"`), NeedTaskIDs: true}},
		{"emit with everything", `{"command":"emit","id":12,"stream":"s","task":4,"anchors":["1",2],"need_task_ids":false,"tuple":[1,{"x":null}]}`,
			wire.Message{Kind: wire.KindEmit, ID: "12", Stream: "s", Task: 4, Anchors: []string{"1", "2"}, Tuple: raw(`1`, `{"x":null}`)}},
		{"single-string anchor", `{"command":"emit","anchors":"-695","tuple":[]}`,
			wire.Message{Kind: wire.KindEmit, Stream: "default", Anchors: []string{"-695"}, Tuple: raw(), NeedTaskIDs: true}},
		{"empty stream means default", `{"command":"emit","stream":"","tuple":[]}`,
			wire.Message{Kind: wire.KindEmit, Stream: "default", Tuple: raw(), NeedTaskIDs: true}},
		{"null task means none", `{"command":"emit","task":null,"tuple":[]}`,
			wire.Message{Kind: wire.KindEmit, Stream: "default", Tuple: raw(), NeedTaskIDs: true}},
		{"task 0 is none too", `{"command":"emit","task":0,"tuple":[]}`,
			wire.Message{Kind: wire.KindEmit, Stream: "default", Tuple: raw(), NeedTaskIDs: true}},
		{"string message id", `{"command":"emit","id":"m-1","tuple":[]}`,
			wire.Message{Kind: wire.KindEmit, ID: `"m-1"`, Stream: "default", Tuple: raw(), NeedTaskIDs: true}},
		{"multi-line JSON", "{\n\"command\": \"sync\"\n}\n", wire.Message{Kind: wire.KindSync}},
		{"ack with a string id", `{"command":"ack","id":"7"}`, wire.Message{Kind: wire.KindAck, ID: `"7"`}},
		{"fail with a numeric id", `{"command":"fail","id":-7}`, wire.Message{Kind: wire.KindFail, ID: "-7"}},
		{"log without level is info", `{"command":"log","msg":"hi"}`, wire.Message{Kind: wire.KindLog, Msg: "hi", Level: wire.LevelInfo}},
		{"log level 0 is trace", `{"command":"log","msg":"t","level":0}`, wire.Message{Kind: wire.KindLog, Msg: "t", Level: wire.LevelTrace}},
		{"log level 4 is error", `{"command":"log","msg":"e","level":4}`, wire.Message{Kind: wire.KindLog, Msg: "e", Level: wire.LevelError}},
		{"unknown log level is info", `{"command":"log","msg":"?","level":9}`, wire.Message{Kind: wire.KindLog, Msg: "?", Level: wire.LevelInfo}},
		{"error", `{"command":"error","msg":"oops"}`, wire.Message{Kind: wire.KindError, Msg: "oops"}},
		{"metrics", `{"command":"metrics","name":"n","params":[1, 2]}`, wire.Message{Kind: wire.KindMetrics, Name: "n", Params: json.RawMessage(`[1, 2]`)}},
		{"pid", `{"pid": 1234}`, wire.Message{Kind: wire.KindPid, Pid: 1234}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := wire.Decode([]byte(c.in))
			if err != nil {
				t.Fatalf("Decode(%s): %v", c.in, err)
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Fatalf("Decode(%s) =\n %+v, want\n %+v", c.in, *got, c.want)
			}
		})
	}
}

func TestDecodeRejectsBadInputWithAReason(t *testing.T) {
	cases := map[string]string{
		"":                               "empty message",
		"   ":                            "empty message",
		"this is not json":               "not a JSON object",
		`[1,2]`:                          "not a JSON object",
		`{"command":`:                    "invalid JSON",
		`{}`:                             `no "command"`,
		`{"command":"dance"}`:            `unknown command "dance"`,
		`{"command":"next"}`:             `unknown command "next"`,
		`{"command":"emit"}`:             `"tuple" is missing`,
		`{"command":"emit","tuple":"a"}`: "not a JSON array",
		`{"command":"emit","tuple":[],"task":"3"}`:     `"task" is not a number`,
		`{"command":"emit","tuple":[],"task":1.5}`:     "not a whole number",
		`{"command":"emit","tuple":[],"task":-1}`:      "negative",
		`{"command":"emit","tuple":[],"id":{}}`:        "neither a string nor a number",
		`{"command":"emit","tuple":[],"anchors":{}}`:   `"anchors" is neither`,
		`{"command":"emit","tuple":[],"anchors":[{}]}`: `"anchors" holds`,
		`{"command":"ack"}`:                            `"id" is missing`,
		`{"command":"fail","id":true}`:                 "neither a string nor a number",
		`{"command":"log","level":"high"}`:             `"level" is not a number`,
		`{"command":"metrics"}`:                        `"name" is missing`,
		`{"pid":0}`:                                    "must be positive",
		`{"pid":"12"}`:                                 `"pid" is not a number`,
		`{"pid":1e40}`:                                 "not a whole number in range",
	}
	for in, want := range cases {
		_, err := wire.Decode([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%q) error = %v, want one containing %q", in, err, want)
		}
	}
}

// Numbers a child sends (pid, task, log level) are 32-bit, as Storm's Java
// ints: -2^31 and 2^31-1 are taken, one past either end is refused.
func TestDecodeTakesNumbersWithin32Bits(t *testing.T) {
	for in, want := range map[string]*wire.Message{
		`{"pid":2147483647}`:                              {Kind: wire.KindPid, Pid: 1<<31 - 1},
		`{"command":"emit","tuple":[],"task":2147483647}`: {Kind: wire.KindEmit, Stream: "default", Task: 1<<31 - 1, Tuple: raw(), NeedTaskIDs: true},
		// a level out of Storm's range is info; a number out of 32 bits is refused
		`{"command":"log","msg":"m","level":-2147483648}`: {Kind: wire.KindLog, Msg: "m", Level: wire.LevelInfo},
	} {
		got, err := wire.Decode([]byte(in))
		if err != nil {
			t.Errorf("Decode(%s): %v", in, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%s) = %+v, want %+v", in, got, want)
		}
	}
	for _, in := range []string{
		`{"pid":2147483648}`,
		`{"command":"emit","tuple":[],"task":2147483648}`,
		`{"command":"log","msg":"m","level":-2147483649}`,
		`{"command":"log","msg":"m","level":2147483648}`,
	} {
		if m, err := wire.Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), "not a whole number in range") {
			t.Errorf("Decode(%s) = %+v, %v; want it refused as out of range", in, m, err)
		}
	}
}

func TestMessageMarshalDecodesBack(t *testing.T) {
	msgs := []wire.Message{
		{Kind: wire.KindEmit, ID: `"x"`, Stream: "s", Task: 3, Tuple: raw(`1`, `"two"`), Anchors: []string{"a"}, NeedTaskIDs: false},
		{Kind: wire.KindEmit, Stream: "default", Tuple: raw(), NeedTaskIDs: true},
		{Kind: wire.KindAck, ID: "5"},
		{Kind: wire.KindFail, ID: `"5"`},
		{Kind: wire.KindLog, Msg: "m", Level: wire.LevelWarn},
		{Kind: wire.KindError, Msg: "bad"},
		{Kind: wire.KindMetrics, Name: "n", Params: json.RawMessage(`{"a":1}`)},
		{Kind: wire.KindSync},
		{Kind: wire.KindPid, Pid: 42},
	}
	for _, m := range msgs {
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("marshal %+v: %v", m, err)
		}
		got, err := wire.Decode(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !reflect.DeepEqual(*got, m) {
			t.Errorf("round trip of %+v gave %+v (via %s)", m, *got, b)
		}
	}
}

func TestIDKeepsItsJSONForm(t *testing.T) {
	if got := wire.StringID("a\"b").String(); got != "a\"b" {
		t.Errorf("String() = %q", got)
	}
	if got := wire.ID("12").String(); got != "12" {
		t.Errorf("numeric String() = %q", got)
	}
	b, _ := json.Marshal(struct{ ID wire.ID }{wire.ID("12")})
	if string(b) != `{"ID":12}` {
		t.Errorf("marshal = %s", b)
	}
}

func TestDecodeHost(t *testing.T) {
	hs := `{"conf":{"topology.name":"t"},"pidDir":"/tmp/p","context":{"taskid":3,"componentid":"split","task->component":{"3":"split"}}}`
	m, err := wire.DecodeHost([]byte(hs))
	if err != nil || m.Kind != wire.KindHandshake || m.Handshake.Context.ComponentID != "split" || m.Handshake.PidDir != "/tmp/p" || m.Handshake.Context.TaskID != 3 {
		t.Fatalf("handshake: %+v, %v", m, err)
	}
	for in, kind := range map[string]wire.Kind{
		`{"command":"next"}`:         wire.KindNext,
		`{"command":"activate"}`:     wire.KindActivate,
		`{"command":"deactivate"}`:   wire.KindDeactivate,
		`{"command":"ack","id":"1"}`: wire.KindAck,
		`{"command":"fail","id":1}`:  wire.KindFail,
		`[1, 2]`:                     wire.KindTaskIDs,
		`{"id":"1","comp":"c","stream":"__heartbeat","task":-1,"tuple":[]}`: wire.KindTuple,
	} {
		m, err := wire.DecodeHost([]byte(in))
		if err != nil || m.Kind != kind {
			t.Errorf("DecodeHost(%s) = %+v, %v; want kind %q", in, m, err, kind)
		}
	}
	for _, bad := range []string{``, `x`, `["a"]`, `{"command":"dance"}`, `{"command":"ack"}`, `{}`, `{"tuple":"x"}`, `{"context":[]}`} {
		if _, err := wire.DecodeHost([]byte(bad)); err == nil {
			t.Errorf("DecodeHost(%q) accepted bad input", bad)
		}
	}
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// encodes to a message it decodes to the same thing.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"command":"emit","tuple":["a"]}`,
		`{"command":"emit","id":12,"stream":"s","task":4,"anchors":["1",2],"need_task_ids":false,"tuple":[1,{"x":null}]}`,
		`{"command":"emit","anchors":"x","tuple":[]}`,
		`{"command":"ack","id":"7"}`, `{"command":"fail","id":-7}`,
		`{"command":"log","msg":"hi","level":3}`, `{"command":"error","msg":"e"}`,
		`{"command":"metrics","name":"n","params":{}}`, `{"command":"sync"}`, `{"pid":1}`,
		``, `[]`, `{"command":1}`, "{\"command\":\"sync\"}\nend",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := wire.Decode(data)
		if err != nil {
			return
		}
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("cannot encode accepted message %+v: %v", m, err)
		}
		again, err := wire.Decode(b)
		if err != nil {
			t.Fatalf("cannot decode %s (from %q): %v", b, data, err)
		}
		if again.Kind != m.Kind || again.ID != m.ID || again.Stream != m.Stream || again.Task != m.Task ||
			!reflect.DeepEqual(again.Anchors, m.Anchors) || again.NeedTaskIDs != m.NeedTaskIDs || again.Msg != m.Msg ||
			again.Level != m.Level || again.Name != m.Name || again.Pid != m.Pid || len(again.Tuple) != len(m.Tuple) {
			t.Fatalf("round trip changed %+v into %+v", m, again)
		}
	})
}

// FuzzDecodeHost checks that DecodeHost never panics.
func FuzzDecodeHost(f *testing.F) {
	for _, seed := range []string{`{"command":"next"}`, `[1,2]`, `{"command":"ack","id":3}`,
		`{"conf":{},"pidDir":"/p","context":{"taskid":1}}`, `{"id":"1","comp":"c","stream":"s","task":1,"tuple":[1]}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = wire.DecodeHost(data)
	})
}
