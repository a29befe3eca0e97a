package dsl

import (
	"fmt"
	"reflect"
)

// Stream is a declared stream: a Go struct type, its name and its field names.
// Streams are created by [Builder.Build] and are read-only afterwards.
type Stream struct {
	// Index is the stream's position in [Topology.Streams]; the runtime uses it
	// instead of the name on the per-tuple path.
	Index int
	// Name is the stream id (the type's name unless overridden).
	Name string
	// Type is the Go type of the stream's tuples.
	Type reflect.Type
	// Fields are the output field names, in struct order.
	Fields []string
}

// hasField reports whether the stream has a field called name.
func (s *Stream) hasField(name string) bool {
	for _, f := range s.Fields {
		if f == name {
			return true
		}
	}
	return false
}

// fieldsOf returns the exported field names of struct type t, honouring `storm` tags.
func fieldsOf(t reflect.Type) ([]string, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("stream type %v is not a struct", t)
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("storm"); tag != "" {
			name = tag
		}
		names = append(names, name)
	}
	return names, nil
}

type streamDecl struct {
	name string
	typ  reflect.Type
}
