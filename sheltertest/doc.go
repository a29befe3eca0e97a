// Package sheltertest is goshelter's test kit, as net/http/httptest is
// net/http's: a manual clock, a recording reliable source that checks every
// message gets exactly one outcome, and a wait until nothing is in flight.
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
//	err = sheltertest.WaitIdle(ctx, running) // nothing in flight
//	err = src.Verify()                      // each id acked or nacked exactly once
package sheltertest
