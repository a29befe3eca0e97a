package dsl

import (
	"fmt"
	"math"
	"reflect"
)

// GroupingKind says how a [Grouping] spreads a stream's tuples over a bolt's
// tasks. Its zero value is no grouping, which [Builder.Build] rejects.
type GroupingKind int

// The kinds of [Grouping], one per constructor of the same name.
const (
	ShuffleGrouping GroupingKind = iota + 1 // round robin over the tasks
	FieldsGrouping                          // by a stable hash of a key, so equal keys meet on one task
	AllGrouping                             // every task gets every tuple
	DirectGrouping                          // the emitter names the task (EmitDirect)
	GlobalGrouping                          // the task with the lowest id
	// LocalOrShuffleGrouping prefers tasks in the emitter's worker process,
	// which for goshelter (one process) is every task: it routes as Shuffle.
	LocalOrShuffleGrouping
	// NoneGrouping leaves the choice to the runtime; goshelter shuffles, as Storm does.
	NoneGrouping
)

// groupingNames are Storm's names of the kinds, lower case, by kind.
var groupingNames = [...]string{
	ShuffleGrouping: "shuffle", FieldsGrouping: "fields", AllGrouping: "all", DirectGrouping: "direct",
	GlobalGrouping: "global", LocalOrShuffleGrouping: "local_or_shuffle", NoneGrouping: "none",
}

// String returns the kind's name as Storm spells it in lower case
// ("shuffle", "local_or_shuffle"), or GroupingKind(n) for a value that is no
// kind.
func (k GroupingKind) String() string {
	if k > 0 && int(k) < len(groupingNames) {
		return groupingNames[k]
	}
	return fmt.Sprintf("GroupingKind(%d)", int(k))
}

// Grouping subscribes a bolt to one stream (the type parameter of the constructor)
// and says how its tuples are spread over the bolt's tasks.
type Grouping struct {
	// Kind is how the tuples are spread.
	Kind GroupingKind
	// Stream is the stream's Go type.
	Stream reflect.Type
	// Fields are the field names a fields grouping keys on (used for validation,
	// Storm's fields grouping and graphs).
	Fields []string
	// Key hashes a tuple's key for a fields grouping; it is stable across processes.
	Key func(tuple any) uint64
}

// String describes the grouping, e.g. "fields(word)".
func (g Grouping) String() string {
	if g.Kind == FieldsGrouping {
		return fmt.Sprintf("fields%v", g.Fields)
	}
	return g.Kind.String()
}

// Shuffle spreads tuples of stream T evenly over the bolt's tasks.
func Shuffle[T any]() Grouping { return Grouping{Kind: ShuffleGrouping, Stream: reflect.TypeFor[T]()} }

// All sends every tuple of stream T to every task of the bolt; each copy is a
// separate edge of the tuple tree.
func All[T any]() Grouping { return Grouping{Kind: AllGrouping, Stream: reflect.TypeFor[T]()} }

// Direct lets the emitter choose the task of each tuple of stream T: a bolt
// with EmitDirect, a spout whose Source has a DirectTask method (see
// [Source]), a shell component's child with an emit's "task". An [Unreliable]
// spout has no way to name a task, so [Builder.Build] refuses it a Direct
// subscriber; a reliable spout whose Source lacks DirectTask fails each
// message it emits on the stream, with a logged error.
func Direct[T any]() Grouping { return Grouping{Kind: DirectGrouping, Stream: reflect.TypeFor[T]()} }

// Global sends every tuple of stream T to the bolt's task with the lowest id.
func Global[T any]() Grouping { return Grouping{Kind: GlobalGrouping, Stream: reflect.TypeFor[T]()} }

// LocalOrShuffle is Storm's local-or-shuffle grouping: tuples of stream T go to
// the bolt's tasks in the emitter's worker process if there are any, shuffled.
// goshelter runs every task in one process, so it spreads them as [Shuffle];
// multilang.Flux exports it as LOCAL_OR_SHUFFLE, which saves network hops on a
// Storm cluster of several workers.
func LocalOrShuffle[T any]() Grouping {
	return Grouping{Kind: LocalOrShuffleGrouping, Stream: reflect.TypeFor[T]()}
}

// None is Storm's none grouping: the subscriber does not care which task gets
// each tuple of stream T. goshelter (like Storm) spreads them as [Shuffle].
func None[T any]() Grouping { return Grouping{Kind: NoneGrouping, Stream: reflect.TypeFor[T]()} }

// hashable is what a fields grouping may key on: values with a stable hash.
type hashable interface {
	~string | ~bool |
		~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Fields sends tuples of stream T with equal keys to the same task. key extracts
// the key, a string, bool, integer or float (or a type defined on one), hashed
// the same in every process; fields names the stream fields it is made of,
// which Build checks.
//
// A float key is hashed by its value: 0 and -0 are equal keys (one task gets
// both), and every NaN, whatever its sign and payload, goes to one task, the
// same for all NaNs of the stream, although NaN equals nothing in Go.
func Fields[T any, K hashable](key func(T) K, fields ...string) Grouping {
	return Grouping{
		Kind:   FieldsGrouping,
		Stream: reflect.TypeFor[T](),
		Fields: fields,
		Key:    func(tuple any) uint64 { return hashKey(key(tuple.(T))) },
	}
}

// hashKey hashes k with a function that is the same in every process and run
// (FNV-1a for strings, a splitmix64 finaliser for numbers), unlike Go's map hash.
func hashKey[K hashable](k K) uint64 {
	switch v := any(k).(type) {
	case string:
		return hashString(v)
	case bool:
		if v {
			return mix64(1)
		}
		return mix64(0)
	case float32:
		if v == 0 || v != v {
			return mix64(floatBits(float64(v)))
		}
		return mix64(uint64(math.Float32bits(v)))
	case float64:
		return mix64(floatBits(v))
	case int:
		return mix64(uint64(v))
	case int32:
		return mix64(uint64(v))
	case int64:
		return mix64(uint64(v))
	case uint:
		return mix64(uint64(v))
	case uint32:
		return mix64(uint64(v))
	case uint64:
		return mix64(v)
	}
	rv := reflect.ValueOf(k) // named types and the rarer kinds
	switch rv.Kind() {
	case reflect.String:
		return hashString(rv.String())
	case reflect.Bool:
		if rv.Bool() {
			return mix64(1)
		}
		return mix64(0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return mix64(uint64(rv.Int()))
	case reflect.Float32, reflect.Float64:
		return mix64(floatBits(rv.Float()))
	default:
		return mix64(rv.Uint())
	}
}

// canonicalNaN stands for every NaN in a key's hash.
var canonicalNaN = math.Float64bits(math.NaN())

// floatBits returns f's bits, with the values that compare equal (0 and -0)
// or that are all "not a number" (NaNs of any sign and payload) made one, so
// that a fields grouping sends them to one task (see [Fields]).
func floatBits(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return canonicalNaN
	}
	return math.Float64bits(f)
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
