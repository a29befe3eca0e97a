package dsl

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A hook is an optional method the runtime finds on a user's handler or
// Source by a type assertion (see "Optional hooks" in the package doc). A
// method with the hook's name and another signature fails the assertion and is
// never called, so the definition checks names: such a method is a mistake.
type hook struct {
	name string
	sig  reflect.Type // the method's type, without its receiver
	// reach completes "X, but ... a method <name><sig>": what the hook is for.
	reach string
}

// handlerHooks are the hooks of [Handler] and [ManualHandler] values.
var handlerHooks = []hook{
	{"Tick", reflect.TypeFor[func(Tick, Collector) error](), "tick tuples are delivered only to"},
	{"RecoverCheckpoint", reflect.TypeFor[func([]byte) error](), "a restart recovers the prepared checkpoint only of"},
	{"PrepareCheckpoint", reflect.TypeFor[func(uint64) ([]byte, error)](), "a checkpoint's barrier prepares only"},
	{"CommitCheckpoint", reflect.TypeFor[func(uint64) error](), "a committed checkpoint is reported only to"},
}

// sourceHooks are the hooks of a [Source] of T.
func sourceHooks[T any]() []hook {
	return []hook{
		{"Activate", reflect.TypeFor[func()](), "activation is reported only to"},
		{"Deactivate", reflect.TypeFor[func()](), "deactivation is reported only to"},
		{"DirectTask", reflect.TypeFor[func(T) int](), "the task of a message is asked only of"},
		{"Position", reflect.TypeFor[func() []byte](), "a checkpoint stores the position only of"},
		{"Rewind", reflect.TypeFor[func([]byte) error](), "a restart rewinds only"},
		{"Close", reflect.TypeFor[func() error](), "the end of an incarnation is reported only to"},
	}
}

// hookCheck checks the hooks of a constructor's result type R (what is
// "handler" or "source"). R is known when the component is defined; when it
// is an interface, the concrete type is not, so each value the constructor
// returns is checked as its task starts.
type hookCheck struct {
	what     string
	hooks    []hook
	problems []string // R's: reported by Build
	dynamic  bool     // R is an interface: check each value
	// hasPosition and hasRewind tell whether R has the position hooks, which
	// make sense only as a pair (Build checks it for stateful topologies).
	hasPosition, hasRewind bool
}

func newHookCheck[R any](what string, hooks []hook) hookCheck {
	typ := reflect.TypeFor[R]()
	return hookCheck{what: what, hooks: hooks, problems: append(hookProblems(what, typ, hooks), setProblems(what, typ, hooks)...),
		dynamic:     typ.Kind() == reflect.Interface,
		hasPosition: typ.Implements(reflect.TypeFor[interface{ Position() []byte }]()),
		hasRewind:   typ.Implements(reflect.TypeFor[interface{ Rewind([]byte) error }]())}
}

// value panics, failing the task being created, if v's concrete type has a
// hook with the wrong signature that its declared type hid from Build.
func (c hookCheck) value(v any) {
	if !c.dynamic || v == nil {
		return
	}
	if p := hookProblems(c.what, reflect.TypeOf(v), c.hooks); len(p) > 0 {
		panic(fmt.Errorf("dsl: %s", strings.Join(p, "; ")))
	}
}

// hookProblems lists the methods of typ named like a hook that the runtime
// will not call: another signature, or (on a non-pointer type) a pointer
// receiver, which leaves the method out of the value's method set.
func hookProblems(what string, typ reflect.Type, hooks []hook) []string {
	var problems []string
	for _, h := range hooks {
		want := h.name + strings.TrimPrefix(h.sig.String(), "func")
		m, ok := typ.MethodByName(h.name)
		onPointer := false
		if !ok && typ.Kind() != reflect.Interface && typ.Kind() != reflect.Pointer {
			m, ok = reflect.PointerTo(typ).MethodByName(h.name)
			onPointer = ok
		}
		if !ok {
			continue
		}
		switch got := methodType(m, typ.Kind() == reflect.Interface); {
		case got != h.sig:
			problems = append(problems, fmt.Sprintf("its %s type %v has a method %s%s, but %s a method %s",
				what, typ, h.name, strings.TrimPrefix(got.String(), "func"), h.reach, want))
		case onPointer:
			problems = append(problems, fmt.Sprintf(
				"its %s type %v lacks the method %s, which has a pointer receiver: only a *%v has it (return a *%v from the constructor)",
				what, typ, want, typ, typ))
		}
	}
	return problems
}

// twoPhaseHooks are the handler hooks that only work together: a sink that
// prepares output at barriers must commit it and recover it after a crash.
var twoPhaseHooks = []string{"RecoverCheckpoint", "PrepareCheckpoint", "CommitCheckpoint"}

// setProblems reports a type with some of the two-phase hooks but not all
// (when hooks include them).
func setProblems(what string, typ reflect.Type, hooks []hook) []string {
	var have, lack []string
	for _, h := range hooks {
		if !slices.Contains(twoPhaseHooks, h.name) {
			continue
		}
		_, ok := typ.MethodByName(h.name)
		if !ok && typ.Kind() != reflect.Interface && typ.Kind() != reflect.Pointer {
			_, ok = reflect.PointerTo(typ).MethodByName(h.name)
		}
		if ok {
			have = append(have, h.name)
		} else {
			lack = append(lack, h.name)
		}
	}
	if len(have) == 0 || len(lack) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("its %s type %v has %s but lacks %s: the two-phase hooks %s work only together",
		what, typ, strings.Join(have, ", "), strings.Join(lack, ", "), strings.Join(twoPhaseHooks, ", "))}
}

// methodType is m's type without its receiver (an interface's methods have none).
func methodType(m reflect.Method, iface bool) reflect.Type {
	if iface {
		return m.Type
	}
	in := make([]reflect.Type, m.Type.NumIn()-1)
	for i := range in {
		in[i] = m.Type.In(i + 1)
	}
	out := make([]reflect.Type, m.Type.NumOut())
	for i := range out {
		out[i] = m.Type.Out(i)
	}
	return reflect.FuncOf(in, out, m.Type.IsVariadic())
}
