package sheltertest

import "testing"

func TestParseStat(t *testing.T) {
	tests := []struct {
		stat     string
		comm, st string
		ppid     int
		ok       bool
	}{
		{"123 (sleep) S 77 123 77 0 -1", "sleep", "S", 77, true},
		{"9 (a (b) c) Z 1 9 9", "a (b) c", "Z", 1, true}, // the command ends at the last ')'
		{"9 (two words) R 42", "two words", "R", 42, true},
		{"9 (short) S", "", "", 0, false},
		{"9 (bad) S x", "", "", 0, false},
		{"no parentheses", "", "", 0, false},
		{"(first) S 3", "first", "S", 3, true}, // a '(' at the very start still opens the command
		{"9 )x( S 3", "", "", 0, false},        // a ')' before the '('

	}
	for _, tt := range tests {
		comm, st, ppid, ok := parseStat([]byte(tt.stat))
		if comm != tt.comm || st != tt.st || ppid != tt.ppid || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q, %q, %d, %v; want %q, %q, %d, %v",
				tt.stat, comm, st, ppid, ok, tt.comm, tt.st, tt.ppid, tt.ok)
		}
	}
}

func TestNewFDsSortsByNumberAndSkipsWithoutProc(t *testing.T) {
	if got := newFDs(nil); got != nil {
		t.Errorf("newFDs(nil) = %v, want nil: no /proc, no check", got)
	}
	if got := newChildren(nil); got != nil {
		t.Errorf("newChildren(nil) = %v, want nil", got)
	}
	before := openFDs()
	if before == nil {
		t.Skip("no /proc")
	}
	if got := newFDs(before); len(got) != 0 {
		t.Errorf("newFDs right after openFDs = %v, want none", got)
	}
	if fdNumber("10 -> pipe:[1]") != 10 || fdNumber("9 -> /dev/null") != 9 {
		t.Error("fdNumber misreads")
	}
}

// warmUpPoller opens nothing it keeps: a second call leaves the fds as the
// first left them.
func TestWarmUpPollerClosesItsPipe(t *testing.T) {
	warmUpPoller()
	before := openFDs()
	if before == nil {
		t.Skip("no /proc")
	}
	warmUpPoller()
	if fresh := newFDs(before); len(fresh) != 0 {
		t.Errorf("warmUpPoller left %v open", fresh)
	}
}
