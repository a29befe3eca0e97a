package sheltertest

import (
	"reflect"
	"strings"
	"testing"
)

const dump = `goroutine 1 [running]:
main.main()
	/x/main.go:10 +0x1

goroutine 7 [select, 2 minutes]:
pkg.(*T).loop(0xc000, 0x1)
	/x/t.go:5 +0x2
pkg.run(...)
	/x/t.go:9
created by pkg.Start in goroutine 1
	/x/t.go:3 +0x3

not a goroutine

goroutine x [running]:
main.main()

goroutine 9 [chan receive]:
(anonymous)
	/x/w.go:1
created by pkg.Other
	/x/w.go:2`

func TestParseStacks(t *testing.T) {
	got := parseStacks([]byte(dump))
	want := []goroutine{
		{id: 1, state: "running", funcs: []string{"main.main"}},
		{id: 7, state: "select", funcs: []string{"pkg.(*T).loop", "pkg.run"}, createdBy: "pkg.Start"},
		{id: 9, state: "chan receive", funcs: []string{"(anonymous)"}, createdBy: "pkg.Other"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseStacks =\n%+v\nwant\n%+v", got, want)
	}
	if (goroutine{}).top() != "?" || got[1].top() != "pkg.(*T).loop" {
		t.Errorf("top of none %q, of 7 %q", (goroutine{}).top(), got[1].top())
	}
	if !got[1].under([]string{"pkg.run"}) || !got[2].under([]string{"pkg.Oth"}) || got[0].under([]string{"pkg."}) {
		t.Error("under looks at every frame and the creator, and at nothing else")
	}
}

func TestDescribeLeaksGroupsAndCounts(t *testing.T) {
	a := goroutine{id: 2, state: "select", funcs: []string{"pkg.a"}, createdBy: "pkg.Start"}
	b := goroutine{id: 3, state: "chan receive", funcs: []string{"pkg.b"}}
	a2 := a
	a2.id = 4
	got := describeLeaks([]goroutine{b, a, a2})
	want := "3 goroutines outlived the test, by top function:\n  2 × pkg.a [select], created by pkg.Start\n  1 × pkg.b [chan receive]\n  What to do:"
	if !strings.HasPrefix(got, want) {
		t.Errorf("describeLeaks =\n%s\nwant it to start with\n%s", got, want)
	}
	// Equal counts: by top function and creator.
	c := goroutine{id: 5, state: "select", funcs: []string{"pkg.c"}}
	got = describeLeaks([]goroutine{c, b})
	if want := "2 goroutines outlived the test, by top function:\n  1 × pkg.b [chan receive]\n  1 × pkg.c [select]\n"; !strings.HasPrefix(got, want) {
		t.Errorf("describeLeaks =\n%s\nwant it to start with\n%s", got, want)
	}
}
