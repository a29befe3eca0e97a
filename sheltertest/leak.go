package sheltertest

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// IgnoreGoroutines tells the leak checks of t's [Start] that a goroutine
// with a function under one of prefixes in its stack, or created by one, is
// not a leak: an embedded broker's (kfake's "github.com/twmb/franz-go/pkg/kfake",
// nats-server's "github.com/nats-io/nats-server/v2/server") or a client's the
// test owns, which serve the topology while it runs and may start goroutines
// after Start (a connection's reader, a timer). Any frame counts, not only the
// top one: a broker's connection goroutine sits in internal/poll's read, with
// the broker's function below it. Goroutines that exist when Start is called
// need no exemption. Call it before or after Start, before the test ends;
// several calls add up.
//
// An exemption is for what the test stops itself, after the topology (see
// "Cleanup order" in the package doc); a client the topology's own
// components create must not need one: it is theirs to close.
func IgnoreGoroutines(t testing.TB, prefixes ...string) {
	ignoredMu.Lock()
	defer ignoredMu.Unlock()
	ignored[t] = append(ignored[t], prefixes...)
}

var (
	ignoredMu sync.Mutex                  // ignoredMu guards ignored
	ignored   = map[testing.TB][]string{} // IgnoreGoroutines' prefixes by test, until its Start's cleanup
)

// takeIgnored returns t's exempted prefixes and forgets them: the cleanup
// that reads them is t's last use of them.
func takeIgnored(t testing.TB) []string {
	ignoredMu.Lock()
	defer ignoredMu.Unlock()
	p := ignored[t]
	delete(ignored, t)
	return p
}

// goroutine is one goroutine of a runtime.Stack dump.
type goroutine struct {
	id        int
	state     string
	funcs     []string // the stack's functions, top first
	createdBy string   // the function that started it, "" for the main goroutine
}

// top is the goroutine's top function, as a report shows it.
func (g goroutine) top() string {
	if len(g.funcs) == 0 {
		return "?"
	}
	return g.funcs[0]
}

// under reports whether a function of g, or the one that created it, starts
// with one of prefixes.
func (g goroutine) under(prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(g.createdBy, p) || slices.ContainsFunc(g.funcs, func(f string) bool { return strings.HasPrefix(f, p) }) {
			return true
		}
	}
	return false
}

// harmless are the functions of goroutines that the testing package, ginkgo
// and the runtime start as they please (goleak's default exemptions): none is
// a topology's.
var harmless = []string{
	"testing.RunTests", "testing.(*T).Run", "testing.(*T).Parallel", "testing.(*M).",
	"os/signal.signal_recv", "os/signal.loop", "runtime.ensureSigM", "runtime.ReadTrace",
	"github.com/onsi/ginkgo/v2/",
}

// goroutines returns every goroutine of the process but the caller's.
func goroutines() []goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	all := parseStacks(buf)
	self := selfID()
	return slices.DeleteFunc(all, func(g goroutine) bool { return g.id == self })
}

// selfID is the calling goroutine's id.
func selfID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	if gs := parseStacks(buf); len(gs) > 0 {
		return gs[0].id
	}
	return -1
}

// parseStacks reads a runtime.Stack dump: blocks separated by blank lines,
// each "goroutine N [state]:", then a function line and a file line per frame,
// and maybe "created by F in goroutine M" with its file line.
func parseStacks(dump []byte) []goroutine {
	var out []goroutine
	for _, block := range strings.Split(string(dump), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		head, ok := strings.CutPrefix(lines[0], "goroutine ")
		if !ok {
			continue
		}
		idText, rest, _ := strings.Cut(head, " ")
		id, err := strconv.Atoi(idText)
		if err != nil {
			continue
		}
		g := goroutine{id: id, state: strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]:")}
		if s, _, ok := strings.Cut(g.state, ","); ok { // "[select, 2 minutes]"
			g.state = s
		}
		for _, l := range lines[1:] {
			switch {
			case strings.HasPrefix(l, "\t"): // a frame's file and line
			case strings.HasPrefix(l, "created by "):
				f := strings.TrimPrefix(l, "created by ")
				if i := strings.Index(f, " in goroutine "); i >= 0 {
					f = f[:i]
				}
				g.createdBy = f
			default:
				g.funcs = append(g.funcs, funcName(l))
			}
		}
		out = append(out, g)
	}
	return out
}

// funcName strips a frame line's arguments: "pkg.(*T).m(0x1, ...)" is "pkg.(*T).m".
func funcName(line string) string {
	if i := strings.LastIndexByte(line, '('); i > 0 {
		return line[:i]
	}
	return line
}

// goroutineIDs returns the ids of the process's goroutines.
func goroutineIDs() map[int]bool {
	ids := map[int]bool{}
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return ids
}

// leakedGoroutines waits, as goleak does, for the goroutines started since
// before that are on their way out, and returns those that remain: neither
// in before, nor harmless, nor under one of ignore. Nothing signals a
// goroutine's end, so it polls with a growing pause, for about 2 s in all.
func leakedGoroutines(before map[int]bool, ignore []string) []goroutine {
	var leaked []goroutine
	for wait := time.Microsecond; ; wait *= 2 {
		leaked = leaked[:0]
		for _, g := range goroutines() {
			if !before[g.id] && !g.under(harmless) && !g.under(ignore) {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || wait > time.Second {
			return leaked
		}
		time.Sleep(min(wait, 100*time.Millisecond)) // nothing signals a goroutine's end
	}
}

// describeLeaks says which goroutines outlived the test, grouped by top
// function and creator with a count each, and what to do about them.
func describeLeaks(leaked []goroutine) string {
	type key struct{ top, createdBy, state string }
	counts := map[key]int{}
	var order []key
	for _, g := range leaked {
		k := key{g.top(), g.createdBy, g.state}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	slices.SortFunc(order, func(a, b key) int {
		if c := counts[b] - counts[a]; c != 0 {
			return c
		}
		return strings.Compare(a.top+a.createdBy, b.top+b.createdBy)
	})
	var b strings.Builder
	if len(leaked) == 1 {
		b.WriteString("a goroutine outlived the test:")
	} else {
		fmt.Fprintf(&b, "%d goroutines outlived the test, by top function:", len(leaked))
	}
	for _, k := range order {
		fmt.Fprintf(&b, "\n  %d × %s [%s]", counts[k], k.top, k.state)
		if k.createdBy != "" {
			fmt.Fprintf(&b, ", created by %s", k.createdBy)
		}
	}
	b.WriteString("\n  What to do: stop what started them before the test ends. A component's goroutine must end when its task's " +
		"Context ends or its source's Close runs. A broker, store or client the test owns outlives the topology by design: start it " +
		"before Start, so that its cleanup (last in, first out) runs after Start's, and exempt its goroutines with " +
		"sheltertest.IgnoreGoroutines(t, \"its/package/path\"); the package doc's \"Cleanup order\" shows how.")
	return b.String()
}
