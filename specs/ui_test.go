package specs_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/sheltertest"
)

// The status page as a person sees it (issue 15): headless Chromium loads it
// twice from a running topology, through the DevTools protocol. The thorough
// browser test, with hundreds of tasks, is `go test -run UI ./observe`.
var _ = Describe("The status page in a browser", Label("ui", "observability"), func() {
	It("shows every component, and figures that move between two loads", func() {
		path := ""
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			Skip("no Chromium on PATH (.ci/run installs Debian's chromium): the status page was not tested in a browser")
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
		topo := Build(b)
		r := sheltertest.Start(GinkgoTB(), topo)
		srv, err := observe.Listen("127.0.0.1:0", topo, r)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)

		dir, err := os.MkdirTemp("", "goshelter-ui-spec-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, dir)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(dir))
		DeferCleanup(cancelAlloc) // waits for the browser to exit
		tab, cancelTab := chromedp.NewContext(alloc)
		DeferCleanup(cancelTab)
		_, err = chromedp.Run(tab, chromedp.Evaluate[int](`1`)) // starts the browser, with no deadline
		Expect(err).NotTo(HaveOccurred())

		// emitted reads the Emitted column of each component's row once the
		// page has rendered from the REST API.
		emitted := func() map[string]int64 {
			GinkgoHelper()
			ctx, cancel := context.WithTimeout(tab, Scaled(60*time.Second))
			defer cancel()
			Expect(chromedp.Do(ctx, chromedp.Navigate("http://"+srv.Addr+"/"))).To(Succeed())
			_, err := chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.body.dataset.renders || 0) >= 1`))
			Expect(err).NotTo(HaveOccurred(), "the page never rendered")
			rows, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(
				Array.from(document.querySelectorAll('#spouts tbody tr, #bolts tbody tr'))
				.map((tr) => [tr.dataset.component, tr.querySelector('[data-field=emitted]').textContent]))`))
			Expect(err).NotTo(HaveOccurred())
			out := map[string]int64{}
			for id, text := range rows {
				n, err := strconv.ParseInt(strings.ReplaceAll(text, ",", ""), 10, 64)
				Expect(err).NotTo(HaveOccurred(), "emitted of %s is %q", id, text)
				out[id] = n
			}
			return out
		}
		first := emitted()
		Expect(first).To(HaveKey("numbers"))
		Expect(first).To(HaveKey("cook"))
		Expect(first).To(HaveKey("eat"))
		Eventually(func() int64 { return r.Stats().Components["numbers"].Emitted }).Should(BeNumerically(">", first["numbers"]+100))
		second := emitted()
		Expect(second["numbers"]).To(BeNumerically(">", first["numbers"]), "the figures move between loads")
		Expect(second["cook"]).To(BeNumerically(">", first["cook"]))
	})
})
