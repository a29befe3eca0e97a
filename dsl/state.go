package dsl

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"reflect"
)

// State is a stateful bolt task's key-value state (see [Stateful]). The
// runtime restores it from the topology's last committed checkpoint before
// the task's first input, and stores what changed at every checkpoint. It
// belongs to its task: the handler reads and changes it on the task's
// goroutine only, and must not keep it past the call.
//
// Keys and values are stored in a binary form for strings and numbers, and
// as JSON for other types. Build refuses a K or V that JSON cannot give back
// as it was (an unexported field at any depth, an interface, a func, a
// channel; a pointer in K), and the host refuses to restore a state stored
// with other types.
type State[K comparable, V any] struct {
	// entries holds every key with a value, and every key deleted since the
	// last checkpoint (deleted set), so that a Get and a Put cost one map
	// lookup each and the snapshot finds what changed without a second map.
	entries map[K]*entry[V]
	changed []K // keys whose entry is dirty, in the order they first changed
	live    int // entries not deleted
	key     codec[K]
	value   codec[V]
}

// entry is one key's value and what the next checkpoint must store of it.
type entry[V any] struct {
	value   V
	dirty   bool // changed since the last checkpoint
	deleted bool // removed: stored as a delete, then dropped
}

func newState[K comparable, V any]() *State[K, V] {
	return &State[K, V]{entries: map[K]*entry[V]{}, key: codecFor[K](), value: codecFor[V]()}
}

// Get returns the value of key, and whether it has one.
func (s *State[K, V]) Get(key K) (V, bool) {
	if e := s.entries[key]; e != nil && !e.deleted {
		return e.value, true
	}
	var zero V
	return zero, false
}

// Put sets the value of key.
func (s *State[K, V]) Put(key K, value V) {
	e := s.entries[key]
	switch {
	case e == nil:
		s.entries[key] = &entry[V]{value: value, dirty: true}
		s.changed = append(s.changed, key)
		s.live++
		return
	case e.deleted:
		e.deleted = false
		s.live++
	}
	e.value = value
	s.markDirty(key, e)
}

// Delete removes key; a key without a value is left as it is.
func (s *State[K, V]) Delete(key K) {
	e := s.entries[key]
	if e == nil || e.deleted {
		return
	}
	var zero V
	e.value, e.deleted = zero, true
	s.live--
	s.markDirty(key, e)
}

func (s *State[K, V]) markDirty(key K, e *entry[V]) {
	if !e.dirty {
		e.dirty = true
		s.changed = append(s.changed, key)
	}
}

// Len returns how many keys have a value.
func (s *State[K, V]) Len() int { return s.live }

// All iterates over every key and its value, in no particular order. The
// state must not change during the iteration.
func (s *State[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for k, e := range s.entries {
			if !e.deleted && !yield(k, e.value) {
				return
			}
		}
	}
}

// restore loads one stored key; the runtime calls it before the first input.
func (s *State[K, V]) restore(key, value []byte) error {
	k, err := s.key.decode(key)
	if err != nil {
		return fmt.Errorf("decoding a key of type %v: %w", reflect.TypeFor[K](), err)
	}
	v, err := s.value.decode(value)
	if err != nil {
		return fmt.Errorf("decoding the value of key %v: %w", k, err)
	}
	if _, ok := s.entries[k]; !ok {
		s.live++
	}
	s.entries[k] = &entry[V]{value: v}
	return nil
}

// snapshot hands every change since the last snapshot to put (a nil value
// for a deleted key) and forgets them; it returns the bytes handed.
func (s *State[K, V]) snapshot(put func(key, value []byte)) (size int, err error) {
	for _, k := range s.changed {
		e := s.entries[k]
		kb, err := s.key.encode(k)
		if err != nil { // the runtime fails the task: its state is restored from the store
			return size, fmt.Errorf("encoding key %v: %w", k, err)
		}
		var vb []byte
		if !e.deleted {
			if vb, err = s.value.encode(e.value); err != nil {
				return size, fmt.Errorf("encoding the value of key %v: %w", k, err)
			}
			if vb == nil {
				vb = []byte{}
			}
		}
		put(kb, vb)
		size += len(kb) + len(vb)
		e.dirty = false
		if e.deleted {
			delete(s.entries, k)
		}
	}
	clear(s.changed)
	s.changed = s.changed[:0]
	return size, nil
}

// codec turns keys or values into bytes and back; chosen once per type.
type codec[T any] struct {
	encode func(T) ([]byte, error)
	decode func([]byte) (T, error)
}

// codecFor picks a binary form for the basic kinds and JSON for the rest.
func codecFor[T any]() codec[T] {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.String:
		return codec[T]{
			encode: func(v T) ([]byte, error) { return []byte(reflect.ValueOf(v).String()), nil },
			decode: func(b []byte) (T, error) { return convert[T](reflect.ValueOf(string(b))), nil },
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return codec[T]{
			encode: func(v T) ([]byte, error) { return binary.AppendVarint(nil, reflect.ValueOf(v).Int()), nil },
			decode: func(b []byte) (T, error) {
				n, size := binary.Varint(b)
				if size <= 0 || size != len(b) {
					var zero T
					return zero, fmt.Errorf("bad varint %x", b)
				}
				return convert[T](reflect.ValueOf(n)), nil
			},
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return codec[T]{
			encode: func(v T) ([]byte, error) { return binary.AppendUvarint(nil, reflect.ValueOf(v).Uint()), nil },
			decode: func(b []byte) (T, error) {
				n, size := binary.Uvarint(b)
				if size <= 0 || size != len(b) {
					var zero T
					return zero, fmt.Errorf("bad uvarint %x", b)
				}
				return convert[T](reflect.ValueOf(n)), nil
			},
		}
	case reflect.Float32, reflect.Float64:
		return codec[T]{
			encode: func(v T) ([]byte, error) {
				return binary.BigEndian.AppendUint64(nil, math.Float64bits(reflect.ValueOf(v).Float())), nil
			},
			decode: func(b []byte) (T, error) {
				if len(b) != 8 {
					var zero T
					return zero, fmt.Errorf("a float takes 8 bytes, got %d", len(b))
				}
				return convert[T](reflect.ValueOf(math.Float64frombits(binary.BigEndian.Uint64(b)))), nil
			},
		}
	}
	return codec[T]{
		encode: func(v T) ([]byte, error) { return json.Marshal(v) },
		decode: func(b []byte) (T, error) {
			var v T
			err := json.Unmarshal(b, &v)
			return v, err
		},
	}
}

// convert returns v as T, which has v's kind (a named string type, say).
func convert[T any](v reflect.Value) T {
	return v.Convert(reflect.TypeFor[T]()).Interface().(T)
}
