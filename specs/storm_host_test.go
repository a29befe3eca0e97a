package specs_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// trickyText is a sentence with what breaks naive framing and escaping: quotes,
// backslashes, CR LF, the word "end" alone on a line, an emoji (outside the
// BMP: a surrogate pair in Java), "/" (json-smart writes "\/"), U+2028
// (written as \u2028) and a tab.
const trickyText = "say \"hi\" to C:\\path\\end\r\nend\nthen 😀 /slash\u2028sep tab\there"

// The conformance suite: goshelter's samples, exported with multilang.Flux
// and run as Storm runs them (see storm_host_helpers_test.go for what is
// reproduced of Storm's host code).
var _ = Describe("Storm's host code running goshelter's samples", Label("storm-host"), Ordered, func() {
	var bin string // directory of the built samples
	BeforeAll(func() {
		bin = GinkgoT().TempDir()
		for _, sample := range []string{"multilang", "wordcount"} {
			build := exec.Command("go", "build", "-o", filepath.Join(bin, "goshelter-"+sample), "../samples/"+sample)
			build.Stderr = GinkgoWriter
			Expect(build.Run()).To(Succeed(), "building samples/%s", sample)
		}
	})

	// flux runs a sample binary with -flux and its arguments and parses the
	// definition as Storm builds a topology from it.
	flux := func(sample string, args ...string) *stormTopology {
		GinkgoHelper()
		cmd := exec.Command(filepath.Join(bin, "goshelter-"+sample), append([]string{"-flux"}, args...)...)
		cmd.Stderr = GinkgoWriter
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred())
		return parseStormTopology(out)
	}

	// exercise drives every task of a running topology: heartbeats and ticks
	// to every bolt, activate and three nexts to every spout task, then the
	// tricky sentence straight to the first task of splitter, and checks that
	// every input was settled once, every tree acked back, and what split made
	// of the tricky sentence.
	exercise := func(c *stormCluster, spoutComp, spoutStream, splitter string) {
		GinkgoHelper()
		for _, b := range c.bolts {
			b.heartbeat()
			b.tick(5)
		}
		c.await("every bolt answered its heartbeat with sync", func() bool {
			for _, b := range c.bolts {
				if b.heartbeats != 1 {
					return false
				}
			}
			return true
		})
		c.settled() // the ticks are acked too
		for _, s := range c.spouts {
			s.query("activate", "")
		}
		for range 3 {
			for _, s := range c.spouts {
				s.query("next", "")
			}
		}
		c.settled()
		Expect(c.emitsOf(spoutComp)).NotTo(BeEmpty())

		before := len(c.emitsOf(splitter))
		c.mu.Lock()
		source := c.topo.components[spoutComp]
		c.deliver(c.topo.components[splitter].tasks[0], &stormTuple{comp: spoutComp, stream: spoutStream, values: []any{trickyText}}, source.tasks[0])
		c.mu.Unlock()
		c.settled()
		var words []string
		for _, e := range c.emitsOf(splitter)[before:] {
			Expect(e.values).To(HaveLen(1))
			words = append(words, e.values[0].(string))
		}
		Expect(words).To(Equal(strings.Fields(trickyText)), "split of the tricky sentence")

		for _, s := range c.spouts {
			s.query("deactivate", "")
		}
		c.expectNoProblems()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, e := range c.emits {
			if !c.topo.components[e.comp].spout {
				Expect(e.anchors).NotTo(BeEmpty(), "%s task %d emitted %v unanchored on an anchored edge", e.comp, e.task, e.values)
			}
		}
		acks := map[string]int{}
		for _, o := range c.given {
			Expect(o.acked).To(BeTrue(), "spout task %d got a fail for %v", o.task, o.msgID)
			acks[fmt.Sprint(o.task, smartJSON(o.msgID))]++
		}
		for _, e := range c.emits {
			if e.msgID != nil {
				Expect(acks[fmt.Sprint(e.task, smartJSON(e.msgID))]).To(Equal(1), "spout message %s of task %d is acked once", smartJSON(e.msgID), e.task)
			}
		}
	}

	It("runs samples/multilang (Go spout, Python split, Go count) from its own Flux export", func() {
		topo := flux("multilang", "./goshelter-multilang", "serve")
		Expect(topo.components["sentences"].streams).To(ContainElement("Sentence"))
		Expect(topo.components["split"].streams).To(ContainElement("default"))
		c := newStormCluster(topo, codeDir(filepath.Join(bin, "goshelter-multilang"), "../samples/multilang/split.py"))
		DeferCleanup(c.shutdown)
		exercise(c, "sentences", "Sentence", "split")
		Expect(len(c.given)).To(Equal(6), "three tracked sentences from each of the two spout tasks, acked back")
	})

	It("runs samples/multilang with its Python spout, whose child emits on Storm's default stream", func() {
		topo := flux("multilang", "-spout-cmd", "python3 sentences.py")
		Expect(topo.components["sentences"].streams).To(ContainElement("default"))
		c := newStormCluster(topo, codeDir(filepath.Join(bin, "goshelter-multilang"), "../samples/multilang/split.py", "../samples/multilang/sentences.py"))
		DeferCleanup(c.shutdown)
		exercise(c, "sentences", "default", "split")
		Expect(len(c.given)).To(Equal(8), "each spout task's sentence from its initialization and three more, acked back")
	})

	It("runs samples/wordcount (every component served by the Go binary) from its own Flux export", func() {
		topo := flux("wordcount", "./goshelter-wordcount", "serve")
		c := newStormCluster(topo, codeDir(filepath.Join(bin, "goshelter-wordcount")))
		DeferCleanup(c.shutdown)
		exercise(c, "sentences", "Sentence", "split")
		counted := map[string]bool{}
		for _, e := range c.emitsOf("count") {
			counted[e.values[0].(string)] = true
		}
		for _, w := range strings.Fields(trickyText) {
			Expect(counted).To(HaveKey(w), "count emitted the tricky word %q unchanged", w)
		}
		Expect(c.given).To(BeEmpty(), "the sentences spout is unreliable: no message ids")
	})

	It("answers a handshake naming an unknown component with its pid, then an error Storm UI shows, then exits", func() {
		topo := flux("wordcount", "./goshelter-wordcount", "serve")
		dir := codeDir(filepath.Join(bin, "goshelter-wordcount"))
		ctx := topo.context("split", topo.components["split"].tasks[0]).put("componentid", "nope")
		cmd := exec.Command("./goshelter-wordcount", "serve")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(smartJSON(newJMap(0).put("pidDir", dir).put("conf", topo.stormConf("split")).put("context", ctx)) + "\nend\n")
		out, err := cmd.Output()
		Expect(err).To(HaveOccurred(), "the process exits with an error")
		var msgs []map[string]any
		for _, m := range strings.Split(strings.TrimSuffix(string(out), "end\n"), "\nend\n") {
			var v map[string]any
			Expect(json.Unmarshal([]byte(m), &v)).To(Succeed(), "%q", out)
			msgs = append(msgs, v)
		}
		Expect(msgs).To(HaveLen(2))
		Expect(msgs[0]).To(HaveKey("pid"), "Storm reads the pid from the first message")
		Expect(msgs[1]).To(HaveKeyWithValue("command", "error"))
		Expect(msgs[1]["msg"]).To(ContainSubstring(`no component "nope"`))
	})
})

// The suite's reproduction of Storm's bytes, against messages worked out by
// hand from Storm's source: JSONObject is a HashMap (buckets of the keys'
// String.hashCode, 16 of them), json-smart escapes "/" and U+2000-U+20FF.
var _ = Describe("The storm-host suite's Storm bytes", Label("storm-host"), func() {
	It("orders keys as java.util.HashMap does and escapes as json-smart does", func() {
		Expect(smartJSON(boltMsg("-5", "split", "default", 9, []any{"the"}))).
			To(Equal(`{"comp":"split","tuple":["the"],"task":9,"stream":"default","id":"-5"}`))
		Expect(smartJSON(boltMsg("42", nil, "__heartbeat", -1, []any{}))).
			To(Equal(`{"comp":null,"tuple":[],"task":-1,"stream":"__heartbeat","id":"42"}`))
		Expect(smartJSON(newJMap(0).put("command", "next").put("id", ""))).To(Equal(`{"id":"","command":"next"}`))
		Expect(smartJSON(newJMap(0).put("pidDir", "/tmp/p").put("conf", newJMap(0)).put("context", newJMap(0)))).
			To(Equal(`{"pidDir":"\/tmp\/p","context":{},"conf":{}}`))
		Expect(smartJSON(trickyText)).
			To(Equal(`"say \"hi\" to C:\\path\\end\r\nend\nthen 😀 \/slash\u2028sep tab\there"`))
		m := newJMap(0)
		for task := 20; task >= 1; task-- { // more than 12 entries: the table doubles to 32
			m.put(task, "c")
		}
		Expect(m.table).To(Equal(32))
		Expect(m.ordered()[0].key).To(Equal(1))
		Expect(m.ordered()[19].key).To(Equal(20))
	})
})
