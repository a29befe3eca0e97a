package actors

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state"
)

// A store records, in its meta space and with every checkpoint, which
// topology wrote it: the topology's name, and what each component that keeps
// something in the store is (a spout's positions, a stateful bolt's state
// and the schema it is stored in). A start on a store written by another
// topology, or by this one with a component gone or its state's types
// changed, is refused: restoring would hand one topology's state and
// positions to another, or decode a state with the wrong types. A spout is
// recorded when it is in the cut (reliable, not dsl.OutsideCheckpoint). A component
// the store does not know yet is fine (it starts empty), and so is a store
// written before these records existed.

var topologyKey = []byte("topology")

const componentPrefix = "component/"

// foreignStore returns an error when the store's checkpoints were written by
// a topology of another name.
func foreignStore(top *dsl.Topology, stored map[string][]byte, last uint64) error {
	name, ok := stored[string(topologyKey)]
	if !ok || string(name) == top.Name {
		return nil
	}
	return fmt.Errorf("topology %q: the store holds checkpoints (up to %d) of topology %q: start %q on a store of its own, or %q on this one",
		top.Name, last, name, top.Name, name)
}

// componentRecord describes what component c keeps in the store; empty when
// it keeps nothing there.
func componentRecord(c *dsl.Component) string {
	switch {
	case c.Spout != nil && c.Spout.Reliable && !c.OutsideCheckpoint:
		return "spout"
	case c.Stateful():
		return "stateful bolt, state " + c.Bolt.StateSchema
	}
	return ""
}

// componentProblems compares the components recorded in the store with
// top's.
func componentProblems(top *dsl.Topology, stored map[string][]byte) []error {
	byID := make(map[string]*dsl.Component, len(top.Components))
	for _, c := range top.Components {
		byID[c.ID] = c
	}
	keys := slices.Sorted(maps.Keys(stored)) // problems in a stable order
	var problems []error
	for _, k := range keys {
		id, ok := strings.CutPrefix(k, componentPrefix)
		if !ok {
			continue
		}
		was := string(stored[k])
		c := byID[id]
		switch now := ""; {
		case c == nil || componentRecord(c) == "":
			if c != nil {
				now = ", now " + keepsNothing(c)
			}
			problems = append(problems, fmt.Errorf("component %q (%s) keeps state or positions in the store, and topology %q has no such component%s: they would be lost; keep it, or start on a new store",
				id, was, top.Name, now))
		case componentRecord(c) != was:
			problems = append(problems, fmt.Errorf("component %q was checkpointed as %s, and is now %s: what the store holds cannot be read back as such; keep its types, or start on a new store",
				id, was, componentRecord(c)))
		}
	}
	return problems
}

// identity is the meta records of top, written with every checkpoint.
func identity(top *dsl.Topology) []state.Change {
	changes := []state.Change{{Space: metaSpace, Key: topologyKey, Value: []byte(top.Name)}}
	for _, c := range top.Components {
		if r := componentRecord(c); r != "" {
			changes = append(changes, state.Change{Space: metaSpace, Key: []byte(componentPrefix + c.ID), Value: []byte(r)})
		}
	}
	return changes
}

// keepsNothing describes a component that keeps nothing in the store.
func keepsNothing(c *dsl.Component) string {
	switch {
	case c.Spout == nil:
		return fmt.Sprintf("a %s bolt", c.Bolt.Kind)
	case c.OutsideCheckpoint:
		return "a spout outside the checkpoints (dsl.OutsideCheckpoint)"
	}
	return "an unreliable spout"
}
