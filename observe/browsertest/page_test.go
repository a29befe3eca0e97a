package browsertest_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/sheltertest"
)

// Num and Cooked are the streams of the small topology below.
type (
	Num    struct{ N int }
	Cooked struct{ N int }
)

// TestThePageShowsEveryComponentAndFiguresThatMove is the status page as a
// person sees it (issue 15), on a small topology run by the test kit:
// headless Chromium loads it twice, and the figures move between the loads.
// It was the core's "ui" spec until chromedp left the core module;
// TestUIInChromium is the thorough test, with hundreds of tasks.
func TestThePageShowsEveryComponentAndFiguresThatMove(t *testing.T) {
	path, ok := chromium()
	if !ok {
		t.Skip("no Chromium on PATH (.ci/run installs Debian's chromium): the status page was not tested in a browser")
	}
	b := dsl.New("ui", nil)
	b.Streams(Cooked{})
	numbers := b.Spout("numbers", dsl.Unreliable(func() (Num, bool) {
		time.Sleep(100 * time.Microsecond) // paced: the browser needs the CPU
		return Num{N: 1}, true
	}))
	cook := b.Bolt("cook", dsl.AutoAck(func(in Num, out dsl.Emitter) error { out.Emit(Cooked{N: in.N}); return nil }), dsl.Parallelism(2))
	eat := b.Bolt("eat", dsl.AutoAck(func(Cooked, dsl.Emitter) error { return nil }))
	b.Anchored(numbers, cook, dsl.Shuffle[Num]())
	b.Anchored(cook, eat, dsl.Shuffle[Cooked]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := sheltertest.Start(t, topo)
	srv, err := observe.Listen("127.0.0.1:0", topo, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	dir, err := os.MkdirTemp("", "goshelter-ui-spec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(dir))
	t.Cleanup(cancelAlloc) // waits for the browser to exit
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`1`)); err != nil { // starts the browser, with no deadline
		t.Fatalf("starting %s: %v", path, err)
	}

	// emitted reads the Emitted column of each component's row once the
	// page has rendered from the REST API.
	emitted := func() map[string]int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, testsupport.Scaled(60*time.Second))
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+srv.Addr+"/")); err != nil {
			t.Fatalf("loading the page: %v", err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.body.dataset.renders || 0) >= 1`)); err != nil {
			t.Fatalf("the page never rendered: %v", err)
		}
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(
			Array.from(document.querySelectorAll('#spouts tbody tr, #bolts tbody tr'))
			.map((tr) => [tr.dataset.component, tr.querySelector('[data-field=emitted]').textContent]))`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		out := map[string]int64{}
		for id, text := range rows {
			n, err := strconv.ParseInt(strings.ReplaceAll(text, ",", ""), 10, 64)
			if err != nil {
				t.Fatalf("emitted of %s is %q: %v", id, text, err)
			}
			out[id] = n
		}
		return out
	}
	first := emitted()
	for _, c := range []string{"numbers", "cook", "eat"} {
		if _, ok := first[c]; !ok {
			t.Fatalf("the page shows no row for %s: %v", c, first)
		}
	}
	testsupport.WaitUntil(t, 5*time.Second, "the spout to emit 100 more", func() bool {
		return r.Stats().Components["numbers"].Emitted > first["numbers"]+100
	})
	second := emitted()
	for _, c := range []string{"numbers", "cook"} {
		if second[c] <= first[c] {
			t.Errorf("%s emitted %d on the first load and %d on the second: the figures do not move between loads", c, first[c], second[c])
		}
	}
}
