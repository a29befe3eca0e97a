package dsl

// In-package tests of the optional hook checks: which methods named like a
// hook are mistakes, and what the problem says.

import (
	"reflect"
	"strings"
	"testing"
)

type hookNum struct{ N int }

type (
	tickRight       struct{}
	tickNoCollector struct{}
	tickVariadic    struct{}
	tickOnPtr       struct{}
	tickBadOnPtr    struct{}
	tickIface       interface{ Tick(Tick) error }
	directRight     struct{}
	directTwo       struct{}
	activateOnly    struct{}
	deactivateArg   struct{}
)

func (*tickRight) Tick(Tick, Collector) error      { return nil }
func (tickNoCollector) Tick(Tick) error            { return nil }
func (tickVariadic) Tick(Tick, ...Collector) error { return nil }
func (*tickOnPtr) Tick(Tick, Collector) error      { return nil }
func (*tickBadOnPtr) Tick(Tick, Collector)         {}
func (directRight) DirectTask(hookNum) int         { return 0 }
func (directTwo) DirectTask(hookNum) (int, error)  { return 0, nil }
func (activateOnly) Activate()                     {}
func (deactivateArg) Deactivate(reason string)     {}

func TestHookProblems(t *testing.T) {
	cases := []struct {
		name  string
		typ   reflect.Type
		hooks []hook
		want  string // "" for no problem
	}{
		{"right Tick", reflect.TypeFor[*tickRight](), handlerHooks, ""},
		{"no hook at all", reflect.TypeFor[hookNum](), handlerHooks, ""},
		{"Tick without the collector", reflect.TypeFor[tickNoCollector](), handlerHooks,
			"its handler type dsl.tickNoCollector has a method Tick(dsl.Tick) error, but tick tuples are delivered only to a method Tick(dsl.Tick, dsl.Collector) error"},
		{"variadic Tick", reflect.TypeFor[*tickVariadic](), handlerHooks,
			"has a method Tick(dsl.Tick, ...dsl.Collector) error, but"},
		{"right Tick on the pointer of a value", reflect.TypeFor[tickOnPtr](), handlerHooks,
			"its handler type dsl.tickOnPtr lacks the method Tick(dsl.Tick, dsl.Collector) error, which has a pointer receiver: only a *dsl.tickOnPtr has it (return a *dsl.tickOnPtr from the constructor)"},
		{"wrong Tick on the pointer of a value", reflect.TypeFor[tickBadOnPtr](), handlerHooks,
			"has a method Tick(dsl.Tick, dsl.Collector), but tick tuples"},
		{"interface with a wrong Tick", reflect.TypeFor[tickIface](), handlerHooks,
			"its handler type dsl.tickIface has a method Tick(dsl.Tick) error, but"},
		{"two-phase hooks", reflect.TypeFor[*twoPhaseSink](), handlerHooks, ""},
		{"CommitCheckpoint without its error", reflect.TypeFor[*commitNoError](), handlerHooks,
			"has a method CommitCheckpoint(uint64), but a committed checkpoint is reported only to a method CommitCheckpoint(uint64) error"},
		{"right DirectTask", reflect.TypeFor[directRight](), sourceHooks[hookNum](), ""},
		{"DirectTask of another stream", reflect.TypeFor[directRight](), sourceHooks[string](),
			"has a method DirectTask(dsl.hookNum) int, but the task of a message is asked only of a method DirectTask(string) int"},
		{"DirectTask with an error", reflect.TypeFor[directTwo](), sourceHooks[hookNum](),
			"has a method DirectTask(dsl.hookNum) (int, error), but"},
		{"Activate alone", reflect.TypeFor[activateOnly](), sourceHooks[hookNum](), ""},
		{"Deactivate with an argument", reflect.TypeFor[deactivateArg](), sourceHooks[hookNum](),
			"has a method Deactivate(string), but deactivation is reported only to a method Deactivate()"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			what := "source"
			if c.hooks[0].name == "Tick" {
				what = "handler"
			}
			got := hookProblems(what, c.typ, c.hooks)
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("problems %q, want none", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("problems %q, want one containing %q", got, c.want)
			}
		})
	}
}

func TestHookCheckOfAnInterfaceChecksEachValue(t *testing.T) {
	check := newHookCheck[Handler[hookNum]]("handler", handlerHooks)
	if len(check.problems) > 0 || !check.dynamic {
		t.Fatalf("check of an interface = %+v, want no problem and a check of each value", check)
	}
	check.value(nil)          // nothing to check
	check.value(&tickRight{}) // right
	defer func() {
		err, _ := recover().(error)
		if err == nil || !strings.Contains(err.Error(), "dsl: its handler type dsl.tickNoCollector has a method Tick(dsl.Tick) error") {
			t.Errorf("value of a wrong type: recovered %v, want an error naming the method", err)
		}
	}()
	check.value(tickNoCollector{})
	t.Error("a wrong value passed")
}

func TestHookCheckOfAConcreteTypeIsDoneAtDefinition(t *testing.T) {
	check := newHookCheck[tickNoCollector]("handler", handlerHooks)
	if len(check.problems) != 1 || check.dynamic {
		t.Fatalf("check = %+v, want one problem and no check of each value", check)
	}
	check.value(tickNoCollector{}) // Build reports it: no panic here
}

type twoPhaseSink struct{}

func (*twoPhaseSink) RecoverCheckpoint([]byte) error           { return nil }
func (*twoPhaseSink) PrepareCheckpoint(uint64) ([]byte, error) { return nil, nil }
func (*twoPhaseSink) CommitCheckpoint(uint64) error            { return nil }

type commitNoError struct{ twoPhaseSinkHalf }

func (*commitNoError) CommitCheckpoint(uint64) {}

type twoPhaseSinkHalf struct{}

func (*twoPhaseSinkHalf) RecoverCheckpoint([]byte) error           { return nil }
func (*twoPhaseSinkHalf) PrepareCheckpoint(uint64) ([]byte, error) { return nil, nil }

// mixedReceivers has the two-phase hooks on a value receiver and on pointer
// receivers: a value of it, whose handler the runtime calls through a pointer,
// has them all.
type mixedReceivers struct{}

func (mixedReceivers) RecoverCheckpoint([]byte) error            { return nil }
func (*mixedReceivers) PrepareCheckpoint(uint64) ([]byte, error) { return nil, nil }
func (*mixedReceivers) CommitCheckpoint(uint64) error            { return nil }

// The two-phase hooks are a set: a handler with some of them is refused,
// naming what it has and what it lacks.
func TestTwoPhaseHooksTogether(t *testing.T) {
	got := setProblems("handler", reflect.TypeFor[*twoPhaseSinkHalf](), handlerHooks)
	want := "its handler type *dsl.twoPhaseSinkHalf has RecoverCheckpoint, PrepareCheckpoint but lacks CommitCheckpoint"
	if len(got) != 1 || !strings.Contains(got[0], want) {
		t.Errorf("problems %q, want one containing %q", got, want)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[*twoPhaseSink](), reflect.TypeFor[tickRight](), reflect.TypeFor[mixedReceivers]()} {
		if got := setProblems("handler", typ, handlerHooks); len(got) > 0 {
			t.Errorf("%v: problems %q, want none", typ, got)
		}
	}
	if got := setProblems("source", reflect.TypeFor[*twoPhaseSinkHalf](), sourceHooks[int]()); len(got) > 0 {
		t.Errorf("source hooks: problems %q, want none (the set is a handler's)", got)
	}
}
