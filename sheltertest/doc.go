// Package sheltertest is goshelter's test kit, as net/http/httptest is
// net/http's: a manual clock, a recording reliable source that checks every
// message gets exactly one outcome, and waits that cannot return early.
//
// # A topology under test
//
//	clk := sheltertest.NewClock(time.Unix(0, 0))
//	src := sheltertest.NewSource(Order{ID: 1}, Order{ID: 2})
//	b := dsl.New("orders", dsl.Conf{dsl.MessageTimeout: 30 * time.Second})
//	orders := b.Spout("orders", src.Spout())
//	... // bolts and edges
//	running, err := supervision.Run(ctx, topo, clk.Option())
//	...
//	clk.Advance(45 * time.Second)           // every open tree times out
//	err = sheltertest.WaitIdle(ctx, running) // every message handed out and settled, nothing in flight
//	err = src.Verify()                      // each id acked or nacked exactly once
//
// # Sources
//
// [NewSource] holds a list of values and [Generate] makes them as they are
// asked for. Options ([Source.With]) replay nacked messages ([Replay]) and
// hook Next, Ack and Nack ([OnNext], [OnAck], [OnNack]) to make one id's call
// panic, block or fail. The source records what it handed out and when
// ([Source.Handouts], [Source.MaxOutstanding]) and every outcome
// ([Source.Outcomes], [Source.Acked], [Source.Nacked]). [Source.Verify]
// reports a message with no outcome or with more than one per handout, an
// outcome for an id never handed out, a Next from a deactivated task, any
// call after [Source.Close], and a source that handed out nothing.
//
// # Waits
//
// Every wait takes a ctx and returns its cause, saying what it still waited
// for, if ctx ends first. [Source.WaitOutcomes] and [Source.WaitSettled] wake
// on the source's own calls. [WaitIdle] waits until a running topology is
// idle: nothing in flight and every kit source in it settled, so it does not
// return before the first emit, between a Next and its emit, or between two
// tuple trees.
package sheltertest
