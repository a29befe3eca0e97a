package browsertest_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// The browser test of the status page (issue 15): it runs a topology with
// hundreds of tasks, loads the page twice in headless Chromium through the
// DevTools protocol, and checks what a person would see. Run it alone with
//
//	go test -race -run UI ./observe/browsertest
//
// It skips, saying so, when no Chromium is installed (apt-get install
// chromium). GOSHELTER_SCREENSHOT=path saves a PNG of the page there, as
// docs/status-page.png was made:
//
//	GOSHELTER_SCREENSHOT=$PWD/docs/status-page.png go test -run UI ./observe/browsertest

type Sentence struct{ Text string }
type Token struct {
	Word string `storm:"word"`
}

// browserTopology is sentences (4 tasks) -> split (64) -> count (128, by word)
// -> audit (32): 232 tasks with the ackers. The spout is paced, so the
// browser gets the CPU, and panics once, early, so the page has a restart to
// show; audit fails one input in 500 with an error, for the last errors.
func browserTopology(t *testing.T) *dsl.Topology {
	t.Helper()
	words := strings.Fields("the quick brown fox jumps over the lazy dog while storm bolts count every word")
	var n atomic.Int64
	b := dsl.New("status-page", nil)
	b.Streams(Token{})
	sentences := b.Spout("sentences", dsl.Unreliable(func() (Sentence, bool) {
		time.Sleep(200 * time.Microsecond)
		i := int(n.Add(1))
		if i == 100 {
			panic("sentences: the source hiccuped")
		}
		return Sentence{Text: strings.Join(words[i%5:i%5+8], " ")}, true
	}), dsl.Parallelism(4))
	split := b.Bolt("split", dsl.AutoAck(func(s Sentence, out dsl.Emitter) error {
		for _, w := range strings.Fields(s.Text) {
			out.Emit(Token{w})
		}
		return nil
	}), dsl.Parallelism(64))
	var seen atomic.Int64
	count := b.Bolt("count", dsl.AutoAck(func(w Token, out dsl.Emitter) error {
		out.Emit(w)
		return nil
	}), dsl.Parallelism(128))
	audit := b.Bolt("audit", dsl.AutoAck(func(w Token, _ dsl.Emitter) error {
		if k := seen.Add(1); k%500 == 0 {
			return fmt.Errorf("audit: word %q rejected (input %d): quota exceeded", w.Word, k)
		}
		return nil
	}), dsl.Parallelism(32))
	b.Anchored(sentences, split, dsl.Shuffle[Sentence]())
	b.Anchored(split, count, dsl.Fields(func(w Token) string { return w.Word }, "word"))
	b.Unanchored(count, audit, dsl.Shuffle[Token]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// chromium finds Debian's chromium (or another Chrome) on PATH.
func chromium() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, true
		}
	}
	return "", false
}

// pageView is what the test reads off the rendered page.
type pageView struct {
	Renders    int               `json:"renders"`
	Status     string            `json:"status"`
	Uptime     string            `json:"uptime"`
	Spouts     []string          `json:"spouts"`
	Bolts      []string          `json:"bolts"`
	Nodes      []string          `json:"nodes"`
	EdgeRates  []string          `json:"edgeRates"`
	Emitted    map[string]string `json:"emitted"` // by component
	LastErrors map[string]string `json:"lastErrors"`
	Events     []string          `json:"events"`
	Problem    string            `json:"problem"`
	// CheckpointColumns counts the visible checkpoint headers of the spouts
	// and bolts tables.
	CheckpointColumns int `json:"checkpointColumns"`
}

const readPage = `(() => {
  const ids = (sel) => Array.from(document.querySelectorAll(sel)).map((tr) => tr.dataset.component);
  const by = (field) => Object.fromEntries(Array.from(document.querySelectorAll('#spouts tbody tr, #bolts tbody tr'))
    .map((tr) => [tr.dataset.component, tr.querySelector('[data-field=' + field + ']').textContent]));
  const problem = document.getElementById('problem');
  return {
    renders: Number(document.body.dataset.renders || 0),
    status: document.getElementById('status').textContent,
    uptime: (document.querySelector('#summary [data-field=uptime]') || {}).textContent || '',
    spouts: ids('#spouts tbody tr'),
    bolts: ids('#bolts tbody tr'),
    nodes: Array.from(document.querySelectorAll('#graph [data-node]')).map((n) => n.dataset.node),
    edgeRates: Array.from(document.querySelectorAll('#graph text.rate')).map((t) => t.textContent),
    emitted: by('emitted'),
    lastErrors: by('lastError'),
    events: Array.from(document.querySelectorAll('#events [data-field=kind]')).map((td) => td.textContent),
    problem: problem.hidden ? '' : problem.textContent,
    checkpointColumns: Array.from(document.querySelectorAll('#spouts th.ckpt, #bolts th.ckpt')).filter((th) => th.offsetParent !== null).length,
  };
})()`

func TestUIInChromium(t *testing.T) {
	browser, ok := chromium()
	if !ok {
		t.Skip("no Chromium on PATH (apt-get install chromium): the status page was not tested in a browser")
	}
	url, running := servePage(t, browserTopology(t), supervision.WithLogger(zap.NewNop()), // the errors are expected
		supervision.WithRestarts(supervision.Restarts{Base: time.Millisecond, Cap: time.Millisecond}))

	ctx := newBrowser(t, browser)
	// The first load.
	first := load(t, ctx, url, 1)
	want := []string{"sentences", "split", "count", "audit"}
	if !slices.Equal(first.Spouts, want[:1]) || !slices.Equal(first.Bolts, want[1:]) {
		t.Errorf("tables show spouts %v and bolts %v, want %v and %v", first.Spouts, first.Bolts, want[:1], want[1:])
	}
	if !slices.Equal(first.Nodes, want) || len(first.EdgeRates) != 3 {
		t.Errorf("the graph shows %v with %d edge labels, want %v and 3", first.Nodes, len(first.EdgeRates), want)
	}
	if first.Status != "ACTIVE" || first.Problem != "" || !slices.Equal(first.Events, []string{"started", "restarting", "failed", "started"}) {
		t.Errorf("status %q, problem %q, events %v (newest first)", first.Status, first.Problem, first.Events)
	}
	if first.CheckpointColumns != 0 {
		t.Errorf("a topology without state shows %d checkpoint columns", first.CheckpointColumns)
	}
	if !strings.Contains(first.LastErrors["sentences"], "panic: sentences: the source hiccuped") {
		t.Errorf("the spout's last error shows %q", first.LastErrors["sentences"])
	}

	// The spout keeps emitting: wait until the figures the second load checks
	// have moved past the first load's, and audit has failed an input.
	testsupport.WaitUntil(t, 60*time.Second, "the figures to move past the first load's", func() bool {
		s := running.Stats()
		for _, c := range want[:3] {
			if s.Components[c].Emitted <= number(first.Emitted[c]) {
				return false
			}
		}
		return strings.Contains(s.Components["audit"].LastError, "quota exceeded")
	})
	// The second load: figures move, and the page refreshes itself (a second
	// render without navigating).
	second := load(t, ctx, url, 2)
	for _, c := range want[:3] {
		before, after := number(first.Emitted[c]), number(second.Emitted[c])
		if after <= before {
			t.Errorf("%s emitted %q on the first load and %q on the second: the figures did not change", c, first.Emitted[c], second.Emitted[c])
		}
	}
	moving := false
	for _, r := range second.EdgeRates {
		moving = moving || !strings.HasPrefix(r, "0/s")
	}
	if !moving {
		t.Errorf("every edge shows no traffic: %v", second.EdgeRates)
	}
	if !strings.Contains(second.LastErrors["audit"], "quota exceeded") {
		t.Errorf("audit's last error shows %q", second.LastErrors["audit"])
	}
	t.Logf("first load: uptime %s, emitted %v; second: uptime %s, emitted %v, edges %v",
		first.Uptime, first.Emitted, second.Uptime, second.Emitted, second.EdgeRates)

	// A component with 128 tasks: its page lists them all, and filters them.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url+"#component=count"),
		pollVoid(`document.querySelectorAll('#executors tbody tr').length === 128`),
	); err != nil {
		t.Fatalf("the count component's tasks did not show: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("task-filter"), "17"),
		pollVoid(`(() => { document.getElementById('task-filter').dispatchEvent(new Event('input')); `+
			`const n = document.querySelectorAll('#executors tbody tr').length; return n > 0 && n < 128; })()`)); err != nil {
		t.Errorf("filtering the tasks: %v", err)
	}

	if path := os.Getenv("GOSHELTER_SCREENSHOT"); path != "" {
		if err := chromedp.Do(ctx,
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(url+"#component=audit"),
			pollVoid(`document.querySelectorAll('#executors tbody tr').length === 32 && Number(document.body.dataset.renders) >= 2`),
		); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(png))
	}
}

// newBrowser starts headless Chromium for the test, in a user data directory
// of its own, with everything that would reach the network off.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	dir, err := os.MkdirTemp("", "goshelter-ui-")
	if err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(dir), chromedp.WindowSize(1400, 1200))
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit
		// Chromium's helpers may still write there for a moment.
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// Start the browser now, on a context without a deadline (a deadline on
	// the first Run would end the browser with it).
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// load navigates to url and reads the page once it has rendered renders times.
func load(t *testing.T, ctx context.Context, url string, renders int) pageView {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, testsupport.Scaled(60*time.Second))
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		pollVoid(fmt.Sprintf(`Number(document.body.dataset.renders || 0) >= %d`, renders)),
	)
	if err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[pageView](readPage))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	return v
}

func pollVoid(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(testsupport.Scaled(45*time.Second)))(ctx, t)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return chromedp.Void{}, err
	}
}

// number reads "1,234,567" as 1234567, -1 when it is not a number.
func number(s string) int64 {
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// TestUIShowsCheckpointsInChromium: the spouts and bolts of a topology with
// state show their last committed checkpoint; those of one without have no
// checkpoint columns.
func TestUIShowsCheckpointsInChromium(t *testing.T) {
	browser, ok := chromium()
	if !ok {
		t.Skip("no Chromium on PATH (apt-get install chromium): the status page was not tested in a browser")
	}
	b := dsl.New("checkpoints", dsl.Conf{dsl.CheckpointInterval: 20 * time.Millisecond})
	src := b.Spout("src", dsl.ReliableFrom(func(dsl.TaskInfo) *ticks { return &ticks{} }))
	sum := b.Bolt("sum", dsl.Stateful(func(in Sentence, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		return nil
	}), dsl.Parallelism(2))
	b.Anchored(src, sum, dsl.Shuffle[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := servePage(t, topo, supervision.WithStore(state.NewMemory()), supervision.WithLogger(zap.NewNop()))

	ctx := newBrowser(t, browser)
	const shown = `(() => {
  const field = (table, comp, f) => { const td = document.querySelector('#' + table + ' tbody tr[data-component="' + comp + '"] [data-field=' + f + ']'); return td && td.offsetParent !== null ? td.textContent : ''; };
  return Number(field('spouts', 'src', 'checkpointId').replace(/,/g, '')) > 0 && Number(field('bolts', 'sum', 'checkpointId').replace(/,/g, '')) > 0 &&
    field('bolts', 'sum', 'checkpointMs') !== '' && /B$/.test(field('spouts', 'src', 'checkpointBytes'));
})()`
	if err := chromedp.Do(ctx, chromedp.Navigate(url), pollVoid(shown)); err != nil {
		t.Fatalf("the page shows no checkpoints of a topology with state: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#component=sum"),
		pollVoid(`Array.from(document.querySelectorAll('#executors tbody tr')).length === 2 && `+
			`Array.from(document.querySelectorAll('#executors tbody [data-field=checkpointId]')).every((td) => td.offsetParent !== null && td.textContent !== '')`)); err != nil {
		t.Errorf("the tasks of sum show no checkpoints: %v", err)
	}
}

// ticks is a positioned source of the words "a" to "e", over and over,
// every 100µs; its position is the count of ticks emitted.
type ticks struct{ n uint64 }

func (s *ticks) Next() (uint64, Sentence, bool) {
	time.Sleep(100 * time.Microsecond) // paced, so the browser gets the CPU
	s.n++
	return s.n, Sentence{Text: string(rune('a' + s.n%5))}, true
}
func (s *ticks) Ack(uint64)       {}
func (s *ticks) Nack(uint64)      {}
func (s *ticks) Position() []byte { return binary.AppendUvarint(nil, s.n) }
func (s *ticks) Rewind(p []byte) error {
	n, size := binary.Uvarint(p)
	if size <= 0 {
		return fmt.Errorf("ticks: bad position %x", p)
	}
	s.n = n
	return nil
}

// servePage runs topo and its status page for the test, and returns the
// page's URL and the running topology; both stop when the test ends.
func servePage(t *testing.T, topo *dsl.Topology, opts ...supervision.Option) (string, *supervision.Running) {
	t.Helper()
	running, err := supervision.Run(context.Background(), topo, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.Stop(context.Background()) })
	srv, err := observe.Listen("127.0.0.1:0", topo, running)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + srv.Addr + "/", running
}
