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
// # Emitting without an allocation per tuple
//
// Emit takes the tuple as an interface value. Go boxes a value of one pointer's
// size for free; anything larger (a string, a struct of two words) costs the
// emitter one allocation per Emit. On a hot stream, give the struct a single
// pointer field and point it into values allocated many at a time:
//
//	type Word struct{ Text *string `storm:"word"` } // pointer-shaped: boxed for free
//
//	words := make([]string, 0, 256) // per task: a new chunk every 256 words
//	...
//	if len(words) == cap(words) {
//		words = make([]string, 0, 256)
//	}
//	words = append(words, w)
//	out.Emit(Word{Text: &words[len(words)-1]})
//
// Never reuse a slot: an emitted value is immutable and other tasks may still
// hold it; the chunk is freed when no tuple points into it. Allocating 256 at a
// time costs 1/256 of an allocation per tuple (see ExampleEmitter_chunked and
// the word count in docs/BENCHMARKS.md).
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
// # Optional hooks
//
// Besides the methods of its interface, a handler or [Source] may have these
// methods, which the runtime calls when they are there, with exactly these
// signatures. Each is called on its task's goroutine; each works without the
// others, except where a group says so.
//
//	Tick(t dsl.Tick, c dsl.Collector) error      // Handler (AutoAckFrom), ManualHandler (Manual)
//	RecoverCheckpoint(prepared []byte) error     // Handler, ManualHandler: the three together
//	PrepareCheckpoint(id uint64) ([]byte, error) // Handler, ManualHandler
//	CommitCheckpoint(id uint64) error            // Handler, ManualHandler
//	Activate()                                   // Source (ReliableFrom)
//	Deactivate()                                 // Source
//	DirectTask(tuple T) (task int)               // Source of stream T
//	Position() []byte                            // Source: the two together
//	Rewind(position []byte) error                // Source
//	Close() error                                // Source
//
// Position and Rewind put a source in the checkpoints of a topology with
// state ([Stateful]): Position says where the source's next message comes
// from, taken between two Next calls at each checkpoint's cut and stored
// with it; Rewind moves the source back to a stored position before the
// first Next of a restart, forgetting what it handed out since. In such a
// topology Build refuses a reliable source without them unless its spout is
// declared [OutsideCheckpoint]. A Nack that comes after the task's
// [TaskInfo.Context] ended is a message abandoned with its incarnation, not
// one that failed: under state, the rewind replays it.
//
// The two-phase hooks make a sink exactly-once in a topology with state (see
// docs/STATE.md): RecoverCheckpoint runs once before the first input with
// what PrepareCheckpoint returned for the last committed checkpoint (nil if
// none), to finish it idempotently and discard anything else;
// PrepareCheckpoint runs at checkpoint id's barrier, once every input before
// the cut was acked or failed, and its bytes are committed atomically with
// the checkpoint; CommitCheckpoint runs after checkpoint id committed, and
// before the next PrepareCheckpoint. An error from any of them fails the
// task, and the topology rolls back to the last commit.
//
// Close tells a source that its task's incarnation has ended (the topology
// stops, or restarts after a failure): it is called once per task the
// constructor made, on the task's goroutine, after its last Next and after the
// last Ack or Nack it will get (the messages still pending are nacked first,
// after the task's Context ended), so the source releases what it holds there:
// its client, its connection, a file. An error it returns, or a panic, is
// logged; the stop goes on. A restart makes a new source, which gets its own
// Close. Under multilang.Serve it runs when Serve is done with the spout.
//
// Tick receives the bolt's tick tuples, every [TickFrequency] of the bolt's
// or the topology's conf (none by default); they are not tracked. Activate is
// called when the spout's task is activated, before its first Next, and
// Deactivate when it is deactivated (its last Next has returned). DirectTask
// names the task of each message for a [Direct] subscriber (see [Source]).
// Bolts hear of activation through [LifecycleTuples], not through Activate.
// The functions given to [AutoAck], [Reliable], [Unreliable], [Terminator]
// and [Windowed] have no hooks.
//
// A method of one of these names with another signature would never be
// called, so [Builder.Build] refuses it, naming the signature above: a
// Tick(dsl.Tick) error, say, or an Activate() error. It also refuses a hook
// with a pointer receiver on a type the constructor returns by value, whose
// method set lacks it. Build sees the type the constructor is declared to
// return, so declare the concrete type:
//
//	count := t.Bolt("count", dsl.AutoAckFrom(func(dsl.TaskInfo) *counter { return &counter{} }))
//
// A constructor declared to return the interface (func(dsl.TaskInfo)
// dsl.Handler[Word]) hides the type from Build: each value it returns is
// checked as its task is created, and a mistake fails the task with the same
// message.
//
// # Anchoring
//
// A reliable spout's tuples are tracked on every edge they travel, as in Storm
// and FsShelter: a spout emit with a message id starts a tuple tree, and the
// message is acked only when every bolt it reached acked it. An edge's
// anchoring concerns the bolt it leads INTO, as the reference's routing
// document has it ("s1 ==> b1 // Anchored: b1's emits are tracked"): the
// bolt's emits, made while it processes an input from an anchored edge, join
// that input's tree on every edge out of the bolt, so the spout hears of
// their outcome; from an unanchored edge they are fire-and-forget. The edges
// out of a bolt play no part. In the document's example
//
//	t.Anchored(numbers, addOne, dsl.Shuffle[Original]())
//	t.Anchored(addOne, logOdd, dsl.Shuffle[Odd]())
//	t.Unanchored(addOne, logEven, dsl.Shuffle[Even]())
//
// addOne's emits are tracked on both its edges: a failure or a timeout in
// logEven reaches numbers. With numbers --> addOne ==> logOdd, addOne's emits
// are untracked and logOdd's failures cost nothing. A bolt with several input
// edges decides input by input, and an explicit anchor (EmitAnchored) joins
// only if the edge it came in on is anchored; a window's emits join the trees
// of the window's inputs that came in on anchored edges. [Terminator], a sink
// that fails its input, belongs where nothing is tracked: Build rejects it on
// an edge whose tuples can be tracked (from a reliable spout, or from a bolt
// with an anchored input edge that carries tracked tuples).
//
// # Windows
//
// A [Windowed] bolt gets its inputs a window at a time, as Storm's windowed
// bolts do: by count or by time, tumbling or sliding, in processing time or in
// event time with watermarks. It acks each input once the input has left every
// window that holds it, and anchors its emits to the whole window. The top
// words of the last 20 seconds, every 5 seconds:
//
//	top := t.Bolt("top", dsl.Windowed(func(dsl.TaskInfo) func(dsl.Window[Word], dsl.Emitter) error {
//		counts := map[string]int{} // the task's own: the handler runs on its goroutine
//		return func(w dsl.Window[Word], out dsl.Emitter) error {
//			for _, word := range w.New {
//				counts[word.Text]++
//			}
//			for _, word := range w.Expired {
//				counts[word.Text]--
//			}
//			out.Emit(Trend{Top: topN(counts, 10), End: w.End}) // anchored to every word in w
//			return nil
//		}
//	}, dsl.WindowSpec[Word]{Length: 20 * time.Second, Slide: 5 * time.Second}))
//	t.Anchored(split, top, dsl.Global[Word]()) // Build checks 20 s + 5 s fit the message timeout
package dsl
