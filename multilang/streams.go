package multilang

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// Shell tuples are JSON arrays; goshelter tuples are structs. The mapping is by
// position: the i-th value fills the struct's i-th exported field (the stream's
// i-th field), decoded by encoding/json into the field's type.

// streamOf returns topo's stream of Go type t, or nil.
func streamOf(topo *dsl.Topology, t reflect.Type) *dsl.Stream {
	for _, s := range topo.Streams {
		if s.Type == t {
			return s
		}
	}
	return nil
}

// fieldIndexes caches the exported field indexes of stream types: reflection
// on every tuple a child sends would otherwise walk the struct each time.
var fieldIndexes sync.Map // reflect.Type -> []int

func exportedFields(t reflect.Type) []int {
	if v, ok := fieldIndexes.Load(t); ok {
		return v.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			idx = append(idx, i)
		}
	}
	fieldIndexes.Store(t, idx)
	return idx
}

// decodeValues builds a tuple of stream s from a child's JSON values.
func decodeValues(s *dsl.Stream, raw []json.RawMessage) (any, error) {
	fields := exportedFields(s.Type)
	if len(raw) != len(fields) {
		return nil, fmt.Errorf("stream %q has %d fields %v but the tuple has %d values", s.Name, len(fields), s.Fields, len(raw))
	}
	v := reflect.New(s.Type).Elem()
	for i, f := range fields {
		if err := json.Unmarshal(raw[i], v.Field(f).Addr().Interface()); err != nil {
			return nil, fmt.Errorf("stream %q field %q (%v): value %s: %v", s.Name, s.Fields[i], s.Type.Field(f).Type, wire.Preview(raw[i]), err)
		}
	}
	return v.Interface(), nil
}

// encodeValues returns a tuple's fields in order, for JSON.
func encodeValues(s *dsl.Stream, tuple any) []any {
	if s == nil {
		return []any{}
	}
	v := reflect.ValueOf(tuple)
	fields := exportedFields(s.Type)
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = v.Field(f).Interface()
	}
	return out
}
