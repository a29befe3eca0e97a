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
//     process started since Start outlives it, naming the leaked goroutines'
//     top functions, grouped and counted, and saying what to do.
//   - [IgnoreGoroutines] exempts the goroutines of an embedded broker or a
//     client the test owns (by package prefix) from Start's leak check.
//
// Sources:
//   - [NewLog] is a source with positions, as a topic's partition has:
//     checkpoints of a topology with stateful bolts store them and a restart
//     rewinds to them; [Log.WaitAcked], [Log.WaitDrained], [Log.Handouts],
//     [Log.Acked] and [Log.Rewinds] read it.
//   - [NewSource] holds a list of values; [Generate] makes n of them (or
//     without end) as they are asked for; [Source.Push] adds more to a running
//     source; [Source.Spout] is the reliable spout over it, for any
//     parallelism; [SpoutPerTask] gives each spout task a source of its own.
//   - Options, given to Generate or [Source.With]: [Replay] hands nacked
//     messages out again (at most n times); [OnNext], [OnAck] and [OnNack]
//     hook the calls for one id, to make them panic, block or fail.
//   - Records: [Source.Handouts] (what was handed out, to which task, which
//     attempt, when), [Source.MaxOutstanding] (what max spout pending
//     bounds), [Source.Outcomes], [Source.Acked] and [Source.Nacked].
//   - [Source.Verify] reports a message with no outcome or more than one per
//     handout, an outcome for an id never handed out, a Next from a
//     deactivated task, any call after [Source.Close], and a source that
//     handed out nothing; [Source.VerifyOutcomes] also checks that exactly
//     the given ids were acked and the others given nacked.
//
// Recording and handlers:
//   - [Recorder] keeps what each task of a bolt received, in order, and
//     the tick tuples: [Recorder.Bolt] acks every input, [Recorder.Manual]
//     hands it to the test's own handler, [Recorder.Hold] holds every input
//     and never acks it (for timeout tests); [Recorder.All],
//     [Recorder.ByTask], [Recorder.Len], [Recorder.Records] (with task and
//     time) and [Recorder.Ticks] read it.
//   - [HandlerFunc] and [ManualFunc] adapt functions to dsl.Handler and
//     dsl.ManualHandler, for per-task constructors returning closures;
//     [HandlerFunc.WithTick] and [ManualFunc.WithTick] add a Tick hook.
//
// Time:
//   - [NewClock] makes a manual [Clock]; [Clock.Option] runs a topology on
//     it (it is supervision.WithClock's clock); [Clock.Advance] moves it,
//     firing what falls due (tuple timeouts, tick tuples, restart
//     back-offs) and returning: a test then waits for the effect with the
//     waits below; [Clock.Now] reads it; [Clock.Quiet] advances it and
//     waits until the kit's tasks handled what it sent them, for checks
//     that something does not happen.
//
// # Waits
//
// Every wait takes a ctx and returns its cause, saying what it still waited
// for, if ctx ends first. [Source.WaitOutcomes] and [Source.WaitSettled] wake
// on the source's own calls, [Recorder.Wait] and [Recorder.WaitTicks] on the
// recorder's inputs and ticks.
// [WaitIdle] waits until a running topology is idle: nothing in flight and
// every kit source in it settled, so it does not return before the first
// emit, between a Next and its emit, or between two tuple trees.
//
// # Cleanup order with an embedded broker
//
// Cleanups run last in, first out. A test of a topology that reads or writes
// an embedded broker (franz-go's kfake, an embedded nats-server) or a store
// starts it before Start and registers its Close with t.Cleanup then: Start's
// cleanup, registered after, runs first, so the topology stops (and its
// clients leave) while the broker still answers, the leak checks run, and
// only then does the broker close. A defer in the test function would close
// the broker before every cleanup, under the running topology. The broker's
// goroutines that exist when Start is called are no leak; those it starts
// for the topology's connections may outlive them until it closes, so exempt
// its package:
//
//	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "words"))
//	...
//	t.Cleanup(cluster.Close) // registered first: runs last
//	sheltertest.IgnoreGoroutines(t, "github.com/twmb/franz-go/pkg/kfake")
//	running := sheltertest.Start(t, topo) // its cleanup stops the topology, then checks
//
// With nats-server, t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
// before Start, and IgnoreGoroutines(t, "github.com/nats-io/nats-server/v2/server").
// A client the test itself opens (to seed a topic or read the output) and
// uses after Start has connections of its own: close it with a cleanup
// registered after Start, which runs before the topology stops and the
// checks run. Exempting its package instead (kgo's, nats.go's) would exempt
// the topology's own clients of that package too, and hide their leaks.
// Measured with kfake and a kgo consumer in the test: without exemptions the
// check names one goroutine "internal/poll.runtime_pollWait [IO wait],
// created by .../kfake.(*clientConn).read" and one created by the test
// client's kgo.(*brokerCxn).waitResp; the broker's top frame is the poller,
// which is why any frame or the creator counts. The example of
// [IgnoreGoroutines] runs this order with a stand-in broker.
//
// Every helper has a runnable example.
package sheltertest
