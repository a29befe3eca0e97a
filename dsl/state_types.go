package dsl

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// A State stores its keys and values in a binary form (strings, numbers) or
// as JSON (the rest), so a type whose values JSON cannot give back is
// refused at Build rather than stored wrong: restored, such a state would
// differ from the one checkpointed, and no error would say so.
//
//   - Structs with unexported fields, at any depth: JSON skips them (a key
//     struct{id int} is stored as {}, so every key of a task becomes one
//     after a restore). A field tagged `json:"-"` is skipped on purpose and
//     allowed.
//   - Interfaces: JSON stores what they hold without its type, and reads
//     back maps and float64s.
//   - Funcs, channels, unsafe pointers and complex numbers: JSON cannot
//     store them at all.
//   - Maps whose keys are not strings, integers or encoding.TextMarshalers:
//     JSON cannot store them.
//   - Pointers in keys: keys compare by address, which a restore cannot
//     give back. Pointers in values are allowed: JSON stores what they point
//     to (nil included), though two values sharing one pointee come back
//     with a copy each.
//
// A type that marshals itself (json.Marshaler and json.Unmarshaler, or
// encoding.TextMarshaler and TextUnmarshaler, on the value or its pointer:
// time.Time, big.Int) is trusted and not looked into.

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// marshalsItself reports whether JSON stores t through t's own methods.
func marshalsItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return (t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler)) && p.Implements(jsonUnmarshaler) ||
		(t.Implements(textMarshaler) || p.Implements(textMarshaler)) && p.Implements(textUnmarshaler)
}

// roundTripProblems lists why values of t would not come back from the
// store as they went in; key is set for a State's key type.
func roundTripProblems(t reflect.Type, key bool) []string {
	r := fidelity{seen: map[reflect.Type]bool{}}
	r.visit(t, t.String(), key)
	return r.problems
}

type fidelity struct {
	seen     map[reflect.Type]bool
	problems []string
}

func (r *fidelity) add(path, format string, args ...any) {
	r.problems = append(r.problems, path+": "+fmt.Sprintf(format, args...))
}

// visit checks t, reached at path (for messages).
func (r *fidelity) visit(t reflect.Type, path string, key bool) {
	if r.seen[t] {
		return // a recursive type: checked where it was first met
	}
	r.seen[t] = true
	defer delete(r.seen, t) // a type met again elsewhere (not in itself) is checked there too
	if t.Kind() != reflect.Pointer && marshalsItself(t) {
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		r.add(path, "an interface (%s): what it holds is stored without its type and read back as maps and float64s", t)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		r.add(path, "a %s cannot be stored", t.Kind())
	case reflect.Pointer:
		if key {
			r.add(path, "a pointer in a key: keys compare by address, which a restore cannot give back")
			return
		}
		r.visit(t.Elem(), path, key)
	case reflect.Slice, reflect.Array:
		r.visit(t.Elem(), path+"[]", key)
	case reflect.Map:
		if !jsonMapKey(t.Key()) {
			r.add(path, "a map with %s keys: JSON stores only string, integer and encoding.TextMarshaler keys", t.Key())
		}
		r.visit(t.Key(), path+" key", key)
		r.visit(t.Elem(), path+"[k]", key)
	case reflect.Struct:
		r.fields(t, path, key)
	}
}

// fields checks the fields of struct t as JSON stores them.
func (r *fidelity) fields(t reflect.Type, path string, key bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("json") == "-" {
			continue // left out on purpose
		}
		at := path + "." + f.Name
		switch {
		case f.IsExported():
			r.visit(f.Type, at, key)
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			r.visit(f.Type, at, key) // JSON stores an embedded struct's exported fields as its own
		default:
			r.add(at, "unexported field of type %s: it is not stored, and comes back as its zero value", f.Type)
		}
	}
}

// jsonMapKey reports whether JSON stores maps with keys of type k.
func jsonMapKey(k reflect.Type) bool {
	switch k.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return k.Implements(textMarshaler) && reflect.PointerTo(k).Implements(textUnmarshaler)
}

// stateSchema describes how a State of K and V is stored: the shape of
// both types, not their names, so that renaming a type keeps a store
// readable and changing what is stored (a field's type, int to string) does
// not. The host records it with the checkpoints and refuses to restore a
// state stored under another schema.
func stateSchema(k, v reflect.Type) string {
	return "key " + shape(k, nil) + ", value " + shape(v, nil)
}

// shape writes t's stored shape: kinds, element types and the fields JSON
// stores, with their JSON names. A type that marshals itself is named, as
// its form is its own; a recursive type is named where it recurs.
func shape(t reflect.Type, outer []reflect.Type) string {
	for _, o := range outer {
		if o == t {
			return t.String()
		}
	}
	if t.Kind() != reflect.Pointer && marshalsItself(t) {
		return t.PkgPath() + "." + t.Name()
	}
	outer = append(outer, t)
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + shape(t.Elem(), outer)
	case reflect.Slice:
		return "[]" + shape(t.Elem(), outer)
	case reflect.Array:
		return "[" + strconv.Itoa(t.Len()) + "]" + shape(t.Elem(), outer)
	case reflect.Map:
		return "map[" + shape(t.Key(), outer) + "]" + shape(t.Elem(), outer)
	case reflect.Struct:
		var b strings.Builder
		b.WriteString("struct{")
		for i := range t.NumField() {
			f := t.Field(i)
			if (!f.IsExported() && !f.Anonymous) || f.Tag.Get("json") == "-" {
				continue
			}
			if b.Len() > len("struct{") {
				b.WriteString("; ")
			}
			b.WriteString(f.Name + " " + shape(f.Type, outer))
			if tag := f.Tag.Get("json"); tag != "" {
				b.WriteString(" " + strconv.Quote(tag))
			}
		}
		b.WriteString("}")
		return b.String()
	}
	return t.Kind().String()
}

// stateTypes refuses a stateful bolt whose state's key or value type would
// not come back from the store as stored.
func (v *validator) stateTypes(c *Component) {
	k, val := c.Bolt.stateKey, c.Bolt.stateValue
	if k == nil || val == nil {
		return
	}
	for _, p := range roundTripProblems(k, true) {
		v.problem("stateful bolt %q: its state's key type %s cannot be checkpointed faithfully: %s", c.ID, k, p)
	}
	for _, p := range roundTripProblems(val, false) {
		v.problem("stateful bolt %q: its state's value type %s cannot be checkpointed faithfully: %s", c.ID, val, p)
	}
}
