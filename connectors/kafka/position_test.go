package kafka

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestPositionRoundTrip(t *testing.T) {
	for _, next := range []map[key]int64{
		{},
		{{"in", 0}: 0},
		{{"b", 3}: 1 << 40, {"a", 0}: 7, {"b", 0}: 0, {"a", 12}: 99},
	} {
		b := encodePosition(next)
		got, err := decodePosition(b)
		if err != nil {
			t.Fatalf("decoding %x: %v", b, err)
		}
		if len(got) != len(next) {
			t.Fatalf("decoded %v, want %v", got, next)
		}
		for k, at := range next {
			if got[k] != at {
				t.Errorf("%v: %d, want %d", k, got[k], at)
			}
		}
		if again := encodePosition(got); string(again) != string(b) {
			t.Errorf("encoding is not canonical: %x then %x", b, again)
		}
	}
}

func TestPositionRefusesWhatItCannotRead(t *testing.T) {
	good := encodePosition(map[key]int64{{"topic", 1}: 300})
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"empty":       {nil, "empty"},
		"version":     {append([]byte{9}, good[1:]...), "version 9"},
		"truncated":   {good[:len(good)-1], "truncated"},
		"name cut":    {good[:4], "truncated"},
		"extra bytes": {append(append([]byte{}, good...), 0), "1 bytes after"},
	} {
		if _, err := decodePosition(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", name, err, tc.want)
		}
	}
}

func TestOwnerSpreadsEachTopicAndNeverMovesAPartition(t *testing.T) {
	// One topic: partition j goes to task j mod tasks.
	for j := range int32(10) {
		if got := owner(0, j, 4); got != int(j)%4 {
			t.Errorf("partition %d: task %d, want %d", j, got, j%4)
		}
	}
	// The next topic starts one task further on, so that topics of one
	// partition each do not all land on task 0. (A topic that grows keeps
	// its partitions' owners by construction: owner does not take the
	// partition count.)
	for j := range int32(10) {
		if got := owner(1, j, 4); got != (int(j)+1)%4 {
			t.Errorf("second topic, partition %d: task %d, want %d", j, got, (j+1)%4)
		}
	}
}

func TestConfigRefusesABadShareOrDiscoveryPeriod(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  Option
		want string
	}{
		"discovery 0":        {WithPartitionDiscovery(0), "partition discovery period 0s"},
		"share index = n":    {WithProcessShare(2, 2), "process share 2 of 2"},
		"share index < 0":    {WithProcessShare(-1, 2), "process share -1 of 2"},
		"share of nobody":    {WithProcessShare(0, 0), "process share 0 of 0"},
		"share 1 of 2 is ok": {WithProcessShare(1, 2), ""},
	} {
		cfg := defaults()
		tc.opt(&cfg)
		err := cfg.validate("spout")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one that says %q", name, err, tc.want)
		}
	}
}

// The encoding is canonical: partitions sorted by topic, then id, whatever
// the map's order.
func TestPositionEncodingIsSorted(t *testing.T) {
	want := []byte{positionVersion, 2, 1, 'a', 3, 0, 10, 1, 11, 2, 12, 1, 'b', 1, 7, 13}
	for range 50 {
		next := map[key]int64{{"b", 7}: 13}
		for id := range int32(3) {
			next[key{"a", id}] = 10 + int64(id)
		}
		if got := encodePosition(next); !bytes.Equal(got, want) {
			t.Fatalf("encodePosition = %v, want %v", got, want)
		}
	}
}

// A partition id beyond int32 or an offset beyond int64 is refused; the
// largest of each is read.
func TestPositionRefusesOutOfRangeValues(t *testing.T) {
	enc := func(id, off uint64) []byte {
		b := []byte{positionVersion, 1, 1, 't', 1}
		b = binary.AppendUvarint(b, id)
		return binary.AppendUvarint(b, off)
	}
	got, err := decodePosition(enc(1<<31-1, 1<<63-1))
	if err != nil || got[key{"t", 1<<31 - 1}] != 1<<63-1 {
		t.Errorf("the largest partition and offset: %v, %v", got, err)
	}
	for _, b := range [][]byte{enc(1<<31, 0), enc(0, 1<<63)} {
		if _, err := decodePosition(b); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("decodePosition(%x) = %v, want out of range", b, err)
		}
	}
}
