package dsl

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

type (
	plainKey   struct{ A, B string }
	hiddenKey  struct{ id int }
	deepHidden struct{ Inner struct{ n int } }
	skipped    struct {
		A    int
		Memo string `json:"-"`
	}
	embedded    struct{ inner }
	inner       struct{ X int }
	withAny     struct{ V any }
	withFunc    struct{ F func() }
	structMap   map[plainKey]int
	textKeyMap  map[textKey]int
	withPointer struct{ P *int }
	tree        struct{ Kids []tree }
	withTime    struct{ At time.Time }
)

// textKey marshals itself: its unexported field is its own business.
type textKey struct{ n int }

func (k textKey) MarshalText() ([]byte, error) { return []byte{byte(k.n)}, nil }
func (k *textKey) UnmarshalText(b []byte) error {
	k.n = int(b[0])
	return nil
}

func TestRoundTripProblems(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		key  bool
		want string // a problem's substring; empty for none
	}{
		{reflect.TypeFor[string](), true, ""},
		{reflect.TypeFor[plainKey](), true, ""},
		{reflect.TypeFor[hiddenKey](), true, "hiddenKey.id: unexported field of type int"},
		{reflect.TypeFor[deepHidden](), false, "deepHidden.Inner.n: unexported field"},
		{reflect.TypeFor[[]deepHidden](), false, "[]dsl.deepHidden[].Inner.n: unexported field"},
		{reflect.TypeFor[skipped](), false, ""},
		{reflect.TypeFor[embedded](), false, ""},
		{reflect.TypeFor[any](), true, "an interface (interface {})"},
		{reflect.TypeFor[withAny](), false, "withAny.V: an interface"},
		{reflect.TypeFor[withFunc](), false, "withFunc.F: a func cannot be stored"},
		{reflect.TypeFor[chan int](), false, "a chan cannot be stored"},
		{reflect.TypeFor[complex128](), false, "a complex128 cannot be stored"},
		{reflect.TypeFor[structMap](), false, "a map with dsl.plainKey keys"},
		{reflect.TypeFor[map[string][]int](), false, ""},
		{reflect.TypeFor[map[int]string](), false, ""},
		{reflect.TypeFor[textKeyMap](), false, ""},
		{reflect.TypeFor[*int](), true, "a pointer in a key"},
		{reflect.TypeFor[withPointer](), true, "withPointer.P: a pointer in a key"},
		{reflect.TypeFor[withPointer](), false, ""},
		{reflect.TypeFor[tree](), false, ""},
		{reflect.TypeFor[withTime](), false, ""}, // time.Time marshals itself
		{reflect.TypeFor[big.Int](), false, ""},
	} {
		got := strings.Join(roundTripProblems(tc.typ, tc.key), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("roundTripProblems(%v, key %v) = %q, want %q", tc.typ, tc.key, got, tc.want)
		}
	}
}

type (
	word     struct{ Text string }
	token    struct{ Text string } // word renamed
	wordN    struct{ Text int }
	wordJSON struct {
		Text string `json:"t"`
	}
)

// nestA and nestB are stored alike, and so are the structs that hold them.
type (
	nestA struct{ X int }
	nestB struct{ X int }
	wrapA struct{ N nestA }
	wrapB struct{ N nestB }
)

func TestStateSchema(t *testing.T) {
	s := func(k, v reflect.Type) string { return stateSchema(k, v) }
	str, i := reflect.TypeFor[string](), reflect.TypeFor[int]()
	if got, want := s(str, i), "key string, value int"; got != want {
		t.Errorf("stateSchema(string, int) = %q, want %q", got, want)
	}
	if got, want := s(str, reflect.TypeFor[tree]()), "key string, value struct{Kids []dsl.tree}"; got != want {
		t.Errorf("a recursive type: %q, want %q", got, want)
	}
	same := [][2]reflect.Type{{reflect.TypeFor[word](), reflect.TypeFor[token]()}, {reflect.TypeFor[wrapA](), reflect.TypeFor[wrapB]()}}
	for _, p := range same {
		if s(str, p[0]) != s(str, p[1]) {
			t.Errorf("%v and %v are stored alike, but their schemas differ: %q, %q", p[0], p[1], s(str, p[0]), s(str, p[1]))
		}
	}
	differ := [][2]reflect.Type{
		{str, i}, {i, reflect.TypeFor[int8]()}, {i, reflect.TypeFor[uint]()},
		{reflect.TypeFor[word](), reflect.TypeFor[wordN]()}, {reflect.TypeFor[word](), reflect.TypeFor[wordJSON]()},
		{reflect.TypeFor[[]byte](), str}, {reflect.TypeFor[time.Time](), reflect.TypeFor[big.Int]()},
	}
	for _, p := range differ {
		if s(str, p[0]) == s(str, p[1]) {
			t.Errorf("%v and %v are stored differently, but share the schema %q", p[0], p[1], s(str, p[0]))
		}
	}
}
