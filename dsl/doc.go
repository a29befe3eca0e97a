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
// A reliable spout's tuples are tracked on every edge they travel, as in Storm
// and FsShelter: a spout emit with a message id starts a tuple tree, and the
// message is acked only when every bolt it reached acked it. An edge's
// anchoring concerns bolts: on an anchored edge a bolt's emits join the tree of
// the input being processed, so the spout hears of their outcome; on an
// unanchored edge they are fire-and-forget. [Terminator], a sink that fails its
// input, is for unanchored edges only: Build rejects it on an anchored one.
package dsl
