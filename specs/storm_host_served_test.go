package specs_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// One set of task semantics under both hosts (issue 20): the components of
// testdata/served, exported with multilang.Flux and driven as Storm's
// ShellSpout and ShellBolt drive them, keep the guarantee goshelter's own
// runtime gives.
var _ = Describe("Goshelter's components served to Storm", Label("storm-host", "edges"), Ordered, func() {
	var topo *stormTopology
	var dir string
	BeforeAll(func() {
		bin := filepath.Join(GinkgoT().TempDir(), "served")
		build := exec.Command("go", "build", "-o", bin, "./testdata/served")
		build.Stderr = GinkgoWriter
		Expect(build.Run()).To(Succeed(), "building testdata/served")
		cmd := exec.Command(bin, "-flux", "./served", "serve")
		cmd.Stderr = GinkgoWriter
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred())
		topo = parseStormTopology(out)
		dir = codeDir(bin)
	})

	// spoutOf and boltOf find the one task of a component.
	spoutOf := func(c *stormCluster, comp string) *stormSpout {
		return c.spouts[c.topo.components[comp].tasks[0]]
	}
	boltOf := func(c *stormCluster, comp string) *stormBolt {
		return c.bolts[c.topo.components[comp].tasks[0]]
	}
	openInputsOf := func(c *stormCluster, b *stormBolt) int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(b.inputs)
	}
	// sync waits until bolt b answered a heartbeat sent after everything
	// delivered to it so far: a served bolt handles its input in order.
	sync := func(c *stormCluster, b *stormBolt) {
		c.mu.Lock()
		want := b.heartbeats + 1
		c.mu.Unlock()
		b.heartbeat()
		c.await("the bolt answered its heartbeat", func() bool { return b.heartbeats == want })
	}

	It("gives a reliable spout's emits a message id on an unanchored edge, and its source hears Storm's fail", func() {
		c := newStormCluster(topo, dir)
		DeferCleanup(c.shutdown)
		numbers := spoutOf(c, "numbers")
		numbers.query("activate", "")
		for range 6 {
			numbers.query("next", "")
		}
		for _, e := range c.emitsOf("numbers") {
			Expect(e.msgID).NotTo(BeNil(), "the emit of %v carries a message id", e.values)
		}
		c.settled() // judge failed 1, 3 and 5: Storm's acker fails them back
		var fails []any
		for _, o := range c.given {
			if !o.acked {
				fails = append(fails, o.msgID)
			}
		}
		Expect(fails).To(HaveLen(3), "the odd numbers' first attempts failed back to the spout")

		for range 3 {
			numbers.query("next", "")
		}
		c.settled()
		var replays []int
		for _, e := range c.emitsOf("numbers")[6:] {
			Expect(jsonInt(e.values[1])).To(Equal(2), "a second attempt")
			replays = append(replays, jsonInt(e.values[0]))
		}
		slices.Sort(replays)
		Expect(replays).To(Equal([]int{1, 3, 5}), "the source replayed what Storm failed, and only that")
		acked := 0
		for _, o := range c.given {
			if o.acked {
				acked++
			}
		}
		Expect(acked).To(Equal(6), "every number acked once in the end")
	})

	It("anchors a window's emit to every input in the window and acks each input only when it left the window", func() {
		c := newStormCluster(topo, dir)
		DeferCleanup(c.shutdown)
		events, byCount, byTime := spoutOf(c, "events"), boltOf(c, "bycount"), boltOf(c, "bytime")
		events.query("activate", "")
		for range 2 {
			events.query("next", "")
		}
		sync(c, byCount)
		Expect(openInputsOf(c, byCount)).To(Equal(2), "a count window of 3 holds its first two inputs")
		for range 7 {
			events.query("next", "")
		}
		c.await("the count window emitted three windows", func() bool {
			n := 0
			for _, e := range c.emits {
				if e.comp == "bycount" {
					n++
				}
			}
			return n == 3
		})
		for range 2 { // the event-time window closes on ticks, as the watermark passes
			byTime.tick(1)
			sync(c, byTime)
		}
		c.await("the event-time window emitted its closed windows", func() bool {
			n := 0
			for _, e := range c.emits {
				if e.comp == "bytime" {
					n++
				}
			}
			return n == 3
		})
		for _, comp := range []string{"bycount", "bytime"} {
			for _, e := range c.emitsOf(comp) {
				Expect(e.anchors).To(HaveLen(jsonInt(e.values[1])), "%s's emit %v is anchored to every input of its window", comp, e.values)
			}
		}
		// Events 1-8 left every window they were in; 9 waits in the open
		// event-time window [9 s, 12 s), and with it its tree.
		c.await("the trees of events 1-8 are acked", func() bool {
			acked := 0
			for _, o := range c.given {
				if o.task == events.task && o.acked {
					acked++
				}
			}
			return acked == 8 && len(c.trees) == 1
		})
		Expect(openInputsOf(c, byTime)).To(Equal(1), "the event-time window holds event 9")
		c.expectNoProblems()
	})

	It("exports every window's tick frequency and the Kryo registrations of what served tuples carry", func() {
		for _, comp := range []string{"bytime", "sliding"} {
			Expect(topo.components[comp].conf).To(HaveKeyWithValue("topology.tick.tuple.freq.secs", BeEquivalentTo(1)), "%s closes its windows on ticks", comp)
		}
		for _, comp := range []string{"bycount", "judge", "sink"} {
			Expect(topo.components[comp].conf).NotTo(HaveKey("topology.tick.tuple.freq.secs"), "%s needs no ticks", comp)
		}
		Expect(topo.conf).To(HaveKeyWithValue("topology.kryo.register", ContainElements(
			"org.apache.storm.shade.net.minidev.json.JSONArray",
			"org.apache.storm.shade.net.minidev.json.JSONObject",
			"java.math.BigDecimal",
		)), "json-smart's list and map types and BigDecimal cross workers")
	})
})

// jsonInt is a whole number as Storm's JSON reading keeps it.
func jsonInt(v any) int {
	GinkgoHelper()
	n, err := strconv.Atoi(fmt.Sprint(v))
	Expect(err).NotTo(HaveOccurred(), "%v is a whole number", v)
	return n
}
