// Package statetest checks that a [state.Store] keeps its contract: [Run]
// runs one subtest per promise against fresh stores, and [RunDurable] checks
// that a durable store keeps its checkpoints across a reopen. Every store of
// the project runs them in its tests, and so can a store written elsewhere.
package statetest
