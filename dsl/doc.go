// Package dsl is the model users write: topologies of spouts and bolts joined by
// typed streams and groupings. A [Builder] collects the definition and [Builder.Build]
// validates it once, doing all reflection, so the runtime only calls plain functions.
//
// # Streams
//
// Each stream is a Go struct type. The stream's name is the type's name (unless
// declared with [Builder.NamedStream]) and its fields are the struct's exported
// fields, named by a `storm:"name"` tag when present:
//
//	type Word struct{ Text string `storm:"word"` }
//
// # Defining a topology
//
//	t := dsl.New("wordcount", dsl.Conf{dsl.MaxSpoutPending: 1024})
//	t.Streams(Word{}, Count{})
//	sentences := t.Spout("sentences", dsl.Unreliable(nextSentence), dsl.Parallelism(4))
//	split := t.Bolt("split", dsl.AutoAck(splitSentence), dsl.Parallelism(4))
//	t.Anchored(sentences, split, dsl.Shuffle[Sentence]())
//	topo, err := t.Build() // every problem found, in one *ValidationError
//
// # Anchoring
//
// An edge is anchored or unanchored. Tuples that travel an anchored edge join the
// tuple tree of the input being processed (or, from a reliable spout, start a new
// tree), so the spout hears of their outcome. Tuples on an unanchored edge are
// fire-and-forget.
package dsl
