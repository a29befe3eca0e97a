package actors

import (
	"testing"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/internal/ids"
	"github.com/goshelter/goshelter/routing"
)

// event is the benchmarks' tuple: pointer-shaped, so boxing it costs nothing
// and the figures are the runtime's own.
type event struct{ p *int }

// pathHarness is an unreliable spout "src" -> bolt "sink" (one task each) whose
// mailboxes nobody runs: the benchmarks drive one task by hand, on one
// goroutine, and empty the other side's lane themselves.
func pathHarness(b *testing.B) (*incarnation, routing.Task, routing.Task) {
	x := 1
	bl := dsl.New("path", nil)
	src := bl.Spout("src", dsl.Unreliable(func() (event, bool) { return event{&x}, true }))
	bl.Unanchored(src, bl.Bolt("sink", dsl.AutoAck(func(event, dsl.Emitter) error { return nil })), dsl.Shuffle[event]())
	plan := routing.Compile(build(b, bl))
	inc := &incarnation{plan: plan, gauge: newGauge()}
	inc.boxes = idleBoxes(len(plan.Tasks)+1, 1<<12)
	task := func(id string) routing.Task { return plan.Tasks[plan.Topology.Component(id).Tasks[0]-1] }
	return inc, task("src"), task("sink")
}

// pathSpout is the harness's spout task, with batches of 64.
func pathSpout(inc *incarnation, src routing.Task) *spoutTask {
	stats := newTaskStats(len(inc.boxes))
	s := &spoutTask{inc: inc, task: src, box: inc.boxes[src.ID], stats: stats, active: true, max: 1 << 30}
	s.out = newOutbox(inc, src.ID, 64, stats)
	s.impl = newSpoutTask(src.Component, dsl.TaskInfo{})
	s.router = inc.plan.NewRouter(src, s.out, ids.Sequence(1, 1))
	return s
}

// pathBolt is the harness's bolt task.
func pathBolt(inc *incarnation, sink routing.Task) *boltTask {
	stats := newTaskStats(len(inc.boxes))
	bt := &boltTask{inc: inc, task: sink, stats: stats}
	bt.out = newOutbox(inc, sink.ID, 64, stats)
	bt.impl = newBoltTask(sink.Component, dsl.TaskInfo{})
	bt.auto, _ = bt.impl.(interface {
		ExecuteAuto(*dsl.Tuple, dsl.Collector) (bool, error)
	})
	return bt
}

// BenchmarkSpoutPath measures a spout's side of one tuple: Next through dsl's
// unreliable task, the emit, routing and the batch append, the flush per burst.
func BenchmarkSpoutPath(b *testing.B) {
	inc, src, sink := pathHarness(b)
	s := pathSpout(inc, src)
	data, self := inc.boxes[sink.ID], inc.boxes[src.ID]
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 64 {
		s.turn(1)
		for m := data.data.take(); m != nil; m = data.data.take() { // the bolt's side: take the batches back
			putBatch(m.(*tupleBatch))
		}
		self.control.pop() // the next burst it posted itself
	}
}

// BenchmarkBoltPath measures a bolt's side of one tuple: loading it from its
// batch, an auto-ack handler, the ack, for batches of 64 untracked tuples.
func BenchmarkBoltPath(b *testing.B) {
	inc, src, sink := pathHarness(b)
	bt := pathBolt(inc, sink)
	x := 1
	batch := getBatch(64)
	stream := inc.plan.Topology.Streams[0]
	for range 64 {
		batch.add(&dsl.Tuple{Value: event{&x}, Stream: stream, Source: "src", Task: src.ID})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 64 {
		bt.executeAll(batch)
	}
}

// BenchmarkSpoutToBolt is BenchmarkSpoutPath with the bolt's side on another
// goroutine, so on two cores: "recycle" only takes the batches back,
// "execute" runs BenchmarkBoltPath's bolt on them. Against the two paths
// measured alone it shows what handing batches from core to core costs
// (docs/BENCHMARKS.md, Performance III).
func BenchmarkSpoutToBolt(b *testing.B) {
	for _, mode := range []string{"recycle", "execute"} {
		b.Run(mode, func(b *testing.B) {
			inc, src, sink := pathHarness(b)
			s, bt := pathSpout(inc, src), pathBolt(inc, sink)
			self := inc.boxes[src.ID]
			// The bolt's mailbox runs for real, as a topology runs it: on
			// a worker woken when a batch lands on its empty lane.
			data := newMailbox(1<<12, 1)
			inc.boxes[sink.ID] = data
			w := newWorkers()
			defer w.close()
			data.workers, data.processFn = w, data.process
			done := make(chan struct{})
			data.RegisterHandlers(&funcInvoker{fn: func(m any) {
				switch m := m.(type) {
				case *tupleBatch:
					if mode == "execute" {
						bt.consume(m)
					} else {
						putBatch(m)
					}
				case *cutBarrier: // the end
					close(done)
				}
			}}, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n += 64 {
				s.turn(1)
				self.control.pop()
			}
			s.out.send(sink.ID, &cutBarrier{})
			<-done
		})
	}
}

// BenchmarkRelayPath measures a bolt's side of one tracked tuple that it
// relays: the input loaded with its tree, the anchored emit (the per-emit
// anchoring check, a fresh edge, the Anchor and the delivery), the Ok, for
// batches of 64; the benchmark takes the emitted batches and the acker
// batches back itself.
func BenchmarkRelayPath(b *testing.B) {
	x := 1
	bl := dsl.New("relay", nil)
	src := bl.Spout("src", dsl.Reliable(func() (int, event, bool) { return 0, event{&x}, true }, func(int) {}, func(int) {}))
	relay := bl.Bolt("relay", dsl.AutoAck(func(e event, out dsl.Emitter) error {
		out.Emit(e)
		return nil
	}))
	bl.Anchored(src, relay, dsl.Shuffle[event]())
	bl.Anchored(relay, bl.Bolt("sink", dsl.AutoAck(func(event, dsl.Emitter) error { return nil })), dsl.Shuffle[event]())
	plan := routing.Compile(build(b, bl))
	inc := &incarnation{plan: plan, gauge: newGauge()}
	inc.boxes = idleBoxes(len(plan.Tasks)+1, 1<<12)
	task := func(id string) routing.Task { return plan.Tasks[plan.Topology.Component(id).Tasks[0]-1] }
	from, rt, sink := task("src"), task("relay"), task("sink")
	bt := pathBolt(inc, rt)
	bt.router = plan.NewRouter(rt, bt.out, ids.Sequence(1<<40, 1))
	bt.anchoring = component.NewAnchoring(plan.Topology, rt.Component)
	batch := getBatch(64)
	stream := plan.Topology.Streams[0]
	for i := range 64 {
		batch.add(&dsl.Tuple{Value: event{&x}, Stream: stream, Source: "src", Task: from.ID, ID: dsl.TupleID{Root: uint64(i + 1), Edge: uint64(i + 100)}})
	}
	data := inc.boxes[sink.ID]
	// drain takes back what a batch's execution sent, counting the tracked
	// tuples delivered and the Anchor and Ok operations.
	drain := func() (tracked, anchors, oks int) {
		for m := data.data.take(); m != nil; m = data.data.take() {
			out := m.(*tupleBatch)
			tracked += len(out.ids)
			putBatch(out)
		}
		for _, a := range plan.Ackers {
			for m := inc.boxes[a].control.pop(); m != nil; m = inc.boxes[a].control.pop() {
				ab := m.(*ackerBatch)
				for _, op := range ab.ops {
					switch op.Kind {
					case opAnchor:
						anchors++
					case opOk:
						oks++
					}
				}
				ab.ops = ab.ops[:0]
				ackerPool.Put(ab)
			}
		}
		return tracked, anchors, oks
	}
	bt.executeAll(batch)
	bt.flush()
	if tracked, anchors, oks := drain(); tracked != 64 || anchors != 64 || oks != 64 {
		b.Fatalf("a batch sent %d tracked tuples, %d Anchors, %d Oks; want 64 of each (anchored relaying)", tracked, anchors, oks)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 64 {
		bt.executeAll(batch)
		bt.flush()
		drain()
	}
}
