package jetstream

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestKeptRecordsRoundTrip(t *testing.T) {
	in := []*kept{
		{id: "t/sink/0/7/0/ab", subject: "out.a", data: []byte("one"), header: nats.Header{"K": {"v1", "v2"}, "E": {""}}},
		{id: "mine", subject: "out.b", data: nil},
		{id: "t/sink/0/7/2/ab", subject: "out.c", data: make([]byte, 300)},
	}
	b := encodeKept(in)
	out, err := decodeKept(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("decoded %d records, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].id != in[i].id || out[i].subject != in[i].subject || string(out[i].data) != string(in[i].data) {
			t.Errorf("record %d: got %q %q %q, want %q %q %q", i, out[i].id, out[i].subject, out[i].data, in[i].id, in[i].subject, in[i].data)
		}
		if len(out[i].header) != len(in[i].header) {
			t.Errorf("record %d: header %v, want %v", i, out[i].header, in[i].header)
		}
		for k, vs := range in[i].header {
			if got := out[i].header.Values(k); len(got) != len(vs) || (len(vs) > 0 && got[0] != vs[0]) {
				t.Errorf("record %d: header %q = %v, want %v", i, k, got, vs)
			}
		}
		if out[i].size < len(out[i].data) {
			t.Errorf("record %d: size %d under its data", i, out[i].size)
		}
	}
	b[len(b)-1] ^= 0xff
	for _, bad := range [][]byte{nil, {9}, b[:len(b)-10], append(encodeKept(in), 0)} {
		if _, err := decodeKept(bad); !errors.Is(err, errKeptFormat) {
			t.Errorf("decodeKept(%x...) = %v, want errKeptFormat", bad[:min(len(bad), 4)], err)
		}
	}
}
