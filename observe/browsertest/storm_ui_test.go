package browsertest_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/supervision"
)

// side is a reliable source without positions, every 200µs: in a topology
// with state it must be declared dsl.OutsideCheckpoint().
type side struct{ n uint64 }

func (s *side) Next() (uint64, Sentence, bool) {
	time.Sleep(200 * time.Microsecond) // paced, so the browser gets the CPU
	s.n++
	return s.n, Sentence{Text: "side"}, true
}
func (s *side) Ack(uint64)  {}
func (s *side) Nack(uint64) {}

// stormPageView is what TestUIShowsStormsWindowsConfigurationAndMore reads
// off the page.
type stormPageView struct {
	Windows     []string          `json:"windows"`     // the options of the window menu
	StatsRows   []string          `json:"statsRows"`   // the windows of the topology stats rows
	StatsLabels []string          `json:"statsLabels"` // their labels
	Conf        map[string]string `json:"conf"`        // the configuration table
	ConfKeys    []string          `json:"confKeys"`    // its keys, in the page's order
	Outside     map[string]bool   `json:"outside"`     // spout id: shows the outside-checkpoint badge
	OutsideNode []string          `json:"outsideNode"` // graph nodes drawn as outside the checkpoint
	WindowName  string            `json:"windowName"`
}

const readStormPage = `(() => {
  const rows = (sel) => Array.from(document.querySelectorAll(sel));
  return {
    windows: Array.from(document.getElementById('window').options).map((o) => o.value),
    statsRows: rows('#topology-stats tbody tr').map((tr) => tr.dataset.window),
    statsLabels: rows('#topology-stats tbody tr').map((tr) => tr.cells[0].textContent),
    conf: Object.fromEntries(rows('#configuration tbody tr').map((tr) => [tr.dataset.key, tr.querySelector('[data-field=value]').textContent])),
    confKeys: rows('#configuration tbody tr').map((tr) => tr.dataset.key),
    outside: Object.fromEntries(rows('#spouts tbody tr').map((tr) => [tr.dataset.component, !!tr.querySelector('.badge.outside') && tr.querySelector('.badge.outside').offsetParent !== null])),
    outsideNode: rows('#graph .node.outside').map((n) => n.dataset.node),
    windowName: (document.querySelector('.window-name') || {}).textContent || '',
  };
})()`

// TestUIShowsStormsWindowsConfigurationAndMore is issue 32's page, in
// headless Chromium: Storm UI's four windows (10 m, 3 h, 1 d, all time) in
// the menu and the topology stats, its configuration table (every key the
// topology runs with, defaults included), the spouts outside the checkpoint
// of a topology with state marked as such, and the per-task Metrics column
// filled where tasks report metrics and absent where none do.
func TestUIShowsStormsWindowsConfigurationAndMore(t *testing.T) {
	browser, ok := chromium()
	if !ok {
		t.Skip("no Chromium on PATH (apt-get install chromium): the status page was not tested in a browser")
	}
	b := dsl.New("storm-ui", dsl.Conf{dsl.CheckpointInterval: 20 * time.Millisecond, dsl.MaxSpoutPending: 77, "my.own.key": "kept"})
	b.Streams(Token{})
	in := b.Spout("in", dsl.ReliableFrom(func(dsl.TaskInfo) *ticks { return &ticks{} }))
	out := b.Spout("side", dsl.ReliableFrom(func(dsl.TaskInfo) *side { return &side{} }), dsl.OutsideCheckpoint())
	sum := b.Bolt("sum", dsl.Stateful(func(in Sentence, st *dsl.State[string, int], _ dsl.Emitter) error {
		n, _ := st.Get(in.Text)
		st.Put(in.Text, n+1)
		return nil
	}))
	gauge := b.Bolt("gauge", dsl.AutoAckFrom(func(info dsl.TaskInfo) dsl.Handler[Sentence] {
		seen := 0
		return handler(func(Sentence, dsl.Emitter) error {
			seen++
			info.Metric("seen", seen)
			info.Metric("unit", "sentences")
			return nil
		})
	}), dsl.Parallelism(2))
	b.Anchored(in, sum, dsl.Shuffle[Sentence]())
	b.Anchored(out, sum, dsl.Shuffle[Sentence]())
	b.Anchored(in, gauge, dsl.Shuffle[Sentence]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := servePage(t, topo, supervision.WithStore(state.NewMemory()), supervision.WithLogger(zap.NewNop()))
	ctx := newBrowser(t, browser)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), pollVoid(`Number(document.body.dataset.renders || 0) >= 1`)); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[stormPageView](readStormPage))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	storm := []string{"600", "10800", "86400", ":all-time"}
	if !slices.Equal(v.Windows, storm) {
		t.Errorf("the window menu offers %v, want Storm UI's %v", v.Windows, storm)
	}
	if !slices.Equal(v.StatsRows, storm) || !strings.HasPrefix(v.StatsLabels[1], "Last 3 hours") || !strings.HasPrefix(v.StatsLabels[2], "Last day") {
		t.Errorf("the topology stats show windows %v labelled %q, want %v", v.StatsRows, v.StatsLabels, storm)
	}
	for key, want := range map[string]string{
		"topology.name": "storm-ui", dsl.MaxSpoutPending: "77", "my.own.key": "kept", // set
		dsl.MessageTimeout: "30", dsl.AckerTasks: "4", dsl.CheckpointInterval: "20", dsl.Debug: "false", // defaults, and a duration in ms
	} {
		if got, ok := v.Conf[key]; !ok || got != want {
			t.Errorf("the configuration table shows %s = %q (listed: %v), want %q", key, got, ok, want)
		}
	}
	if !slices.IsSorted(v.ConfKeys) {
		t.Errorf("the configuration keys are not in order: %v", v.ConfKeys)
	}
	if !v.Outside["side"] || v.Outside["in"] || !slices.Equal(v.OutsideNode, []string{"side"}) {
		t.Errorf("outside the checkpoint: badges %v, graph nodes %v; want side only", v.Outside, v.OutsideNode)
	}

	// Choosing a window asks the API for it: the tables say which.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("window"), "10800"),
		pollVoid(`(() => { const w = document.getElementById('window'); w.dispatchEvent(new Event('change')); `+
			`return document.querySelector('.window-name').textContent === '(3h 0m 0s)'; })()`)); err != nil {
		t.Errorf("choosing the 3-hour window: %v", err)
	}

	// gauge's tasks report metrics: its page has a Metrics column, filled.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#component=gauge"),
		pollVoid(`(() => { const cells = Array.from(document.querySelectorAll('#executors tbody [data-field=metrics]')); `+
			`return cells.length === 2 && cells.every((td) => /^seen=[1-9][\d,]*, unit=sentences$/.test(td.textContent)) && `+
			`Array.from(document.querySelectorAll('#executors thead th')).some((th) => th.textContent === 'Metrics'); })()`)); err != nil {
		t.Errorf("gauge's tasks show no metrics: %v", err)
	}
	// sum's report none: no Metrics column.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#component=sum"),
		pollVoid(`document.getElementById('component-name').textContent === 'sum' && document.querySelectorAll('#executors tbody tr').length === 1 && `+
			`!Array.from(document.querySelectorAll('#executors thead th')).some((th) => th.textContent === 'Metrics')`)); err != nil {
		t.Errorf("sum's tasks, which report no metric, show a Metrics column: %v", err)
	}
	// side's page says it is outside the checkpoint.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#component=side"),
		pollVoid(`/outside the checkpoint/.test(document.getElementById('component-kind').textContent)`)); err != nil {
		t.Errorf("side's page does not say it is outside the checkpoint: %v", err)
	}
}

type handler func(Sentence, dsl.Emitter) error

func (h handler) Execute(s Sentence, out dsl.Emitter) error { return h(s, out) }
