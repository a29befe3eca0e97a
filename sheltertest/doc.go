// Package sheltertest is goshelter's test kit, as net/http/httptest is
// net/http's: it runs a topology for the length of a test, feeds it from a
// recording reliable source, records what its bolts receive, moves time only
// when told, and waits without returning early. README.md's "Testing a
// topology" is a complete test on it.
//
// # A topology under test
//
//	clk := sheltertest.NewClock(time.Unix(0, 0))
//	src := sheltertest.Generate(300, func(i int) Parcel { return Parcel{ID: i + 1, Lost: (i+1)%100 == 0} })
//	shipped := new(sheltertest.Recorder[Parcel])
//	b := dsl.New("shipping", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
//	parcels := b.Spout("parcels", src.Spout())
//	b.Anchored(parcels, b.Bolt("ship", shipped.Manual(ackUnlessLost)), dsl.Shuffle[Parcel]())
//	topo, err := b.Build()
//	...
//	running := sheltertest.Start(t, topo, clk.Option()) // stopped and checked when t ends
//	err = shipped.Wait(ctx, 300)                         // every parcel reached the bolt
//	err = src.WaitOutcomes(ctx, 297)                     // and every delivered one is acked
//	clk.Advance(45 * time.Second)                        // the lost parcels' trees time out
//	err = sheltertest.WaitIdle(ctx, running)             // their nacks arrive: nothing in flight
//	err = src.Verify()                                   // each id acked or nacked exactly once
//
// The waits before Advance are the recipe's point: Advance fires the timers
// that fall due and returns (see [Clock.Advance]), so it times out the trees
// that are open when their acker rotates. A tree whose tuple has reached a
// bolt is open there, since its acker hears of it before the bolt does; a
// tree whose ack is still on its way is timed out too. Advancing right after
// Start would time out parcels the bolt was about to ack.
//
// # Every helper
//
// Running:
//   - [Start] runs a topology for a test (with ginkgo, pass GinkgoTB()): its
//     warnings go to the test's log, a bounded Stop runs at the test's
//     cleanup, and the test fails if a goroutine, file descriptor or child
//     process outlives it.
//
// Sources:
//   - [NewLog] is a source with positions, as a topic's partition has:
//     checkpoints of a topology with stateful bolts store them and a restart
//     rewinds to them; [Log.WaitAcked], [Log.WaitDrained], [Log.Handouts],
//     [Log.Acked] and [Log.Rewinds] read it.
//   - [NewSource] holds a list of values; [Generate] makes n of them (or
//     without end) as they are asked for; [Source.Push] adds more to a running
//     source; [Source.Spout] is the reliable spout over it, for any parallelism.
//   - Options, given to Generate or [Source.With]: [Replay] hands nacked
//     messages out again (at most n times); [OnNext], [OnAck] and [OnNack]
//     hook the calls for one id, to make them panic, block or fail.
//   - Records: [Source.Handouts] (what was handed out, to which task, which
//     attempt, when), [Source.MaxOutstanding] (what max spout pending
//     bounds), [Source.Outcomes], [Source.Acked] and [Source.Nacked].
//   - [Source.Verify] reports a message with no outcome or more than one per
//     handout, an outcome for an id never handed out, a Next from a
//     deactivated task, any call after [Source.Close], and a source that
//     handed out nothing.
//
// Recording and handlers:
//   - [Recorder] keeps what each task of a bolt received, in order:
//     [Recorder.Bolt] acks every input, [Recorder.Manual] hands it to the
//     test's own handler; [Recorder.All], [Recorder.ByTask] and
//     [Recorder.Len] read it.
//   - [HandlerFunc] and [ManualFunc] adapt functions to dsl.Handler and
//     dsl.ManualHandler, for per-task constructors returning closures.
//
// Time:
//   - [NewClock] makes a manual [Clock]; [Clock.Option] runs a topology on
//     it (it is supervision.WithClock's clock); [Clock.Advance] moves it,
//     firing what falls due (tuple timeouts, tick tuples, restart
//     back-offs) and returning: a test then waits for the effect with the
//     waits below; [Clock.Now] reads it.
//
// # Waits
//
// Every wait takes a ctx and returns its cause, saying what it still waited
// for, if ctx ends first. [Source.WaitOutcomes] and [Source.WaitSettled] wake
// on the source's own calls, [Recorder.Wait] on the recorder's inputs.
// [WaitIdle] waits until a running topology is idle: nothing in flight and
// every kit source in it settled, so it does not return before the first
// emit, between a Next and its emit, or between two tuple trees.
//
// Every helper has a runnable example.
package sheltertest
