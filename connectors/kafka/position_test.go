package kafka

import (
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
	// A topic that grows keeps the owners of the partitions it had.
	before := owner(1, 2, 3)
	if owner(1, 2, 3) != before {
		t.Error("owner is not a function of rank, partition and tasks")
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
