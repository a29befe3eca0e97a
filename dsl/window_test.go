package dsl_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// The checks Build makes of a windowed bolt's spec and inputs (the window
// task's own tests are internal/task's).

func TestWindowedBuildChecks(t *testing.T) {
	nop := func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error { return nil }
	type build struct {
		spec     dsl.WindowSpec[numIn]
		conf     dsl.Conf // the topology's
		boltConf dsl.Conf
		reliable bool
		anchored bool
	}
	run := func(bd build) (*dsl.Topology, error) {
		b := dsl.New("windows", bd.conf)
		spec := dsl.Unreliable(noNums)
		if bd.reliable {
			spec = dsl.Reliable(func() (int, numIn, bool) { return 0, numIn{}, false }, func(int) {}, func(int) {})
		}
		spout := b.Spout("nums", spec, dsl.Parallelism(2))
		bolt := b.Bolt("top", dsl.Windowed(nop, bd.spec), dsl.WithConf(bd.boltConf))
		edge := b.Unanchored
		if bd.anchored {
			edge = b.Anchored
		}
		edge(spout, bolt, dsl.Shuffle[numIn]())
		return b.Build()
	}
	for _, tt := range []struct {
		name string
		b    build
		want []string // problems; none: Build succeeds
	}{
		{"no length", build{spec: dsl.WindowSpec[numIn]{SlideCount: 2}},
			[]string{`bolt "top": a window is measured by Count (tuples) or by Length (time): set exactly one`}},
		{"two lengths and two slides", build{spec: dsl.WindowSpec[numIn]{Count: 2, Length: time.Second, SlideCount: 1, Slide: time.Second}},
			[]string{`bolt "top": a window is measured by Count`, `bolt "top": a window slides by SlideCount (tuples) or by Slide (time): set at most one`}},
		{"negative", build{spec: dsl.WindowSpec[numIn]{Count: -1, Length: time.Second}}, []string{`bolt "top": window Count is negative`}},
		{"event time options without a Timestamp", build{spec: dsl.WindowSpec[numIn]{Count: 2, Lag: time.Second, Late: func(numIn) any { return nil }}},
			[]string{`bolt "top": Lag applies to event time only`, `bolt "top": Late applies to event time only`}},
		{"a clock with a Timestamp", build{spec: dsl.WindowSpec[numIn]{Count: 2, Timestamp: eventAt, Now: time.Now}},
			[]string{`bolt "top": Now is the processing-time clock`}},
		{"length plus slide beyond the message timeout", build{spec: dsl.WindowSpec[numIn]{Length: 25 * time.Second, Slide: 10 * time.Second}, anchored: true},
			[]string{`bolt "top": window length 25s plus slide 10s is 35s, more than the message timeout 30s (topology.message.timeout.secs)`}},
		{"a tumbling window counts its length twice, as Storm's", build{spec: dsl.WindowSpec[numIn]{Length: 16 * time.Second}, anchored: true},
			[]string{`bolt "top": window length 16s plus slide 16s is 32s, more than the message timeout 30s`}},
		{"within the timeout", build{spec: dsl.WindowSpec[numIn]{Length: 20 * time.Second, Slide: 10 * time.Second}, anchored: true}, nil},
		{"unanchored inputs never time out", build{spec: dsl.WindowSpec[numIn]{Length: time.Hour}}, nil},
		{"a longer timeout", build{spec: dsl.WindowSpec[numIn]{Length: time.Minute}, anchored: true, conf: dsl.Conf{dsl.MessageTimeout: 120}}, nil},
		{"a count window its reliable spouts cannot fill", build{spec: dsl.WindowSpec[numIn]{Count: 300}, anchored: true, reliable: true},
			[]string{`bolt "top": its window needs 300 tuples in flight, but the reliable spouts feeding it keep at most 256 pending`}},
		{"a count window its reliable spouts can fill", build{spec: dsl.WindowSpec[numIn]{Count: 256}, anchored: true, reliable: true}, nil},
		{"a count window beyond its cap", build{spec: dsl.WindowSpec[numIn]{Count: 50}, boltConf: dsl.Conf{"topology.bolts.window.max.tuples": 40}},
			[]string{`bolt "top": its window needs 50 tuples, more than its cap topology.bolts.window.max.tuples=40`}},
		{"a bad cap", build{spec: dsl.WindowSpec[numIn]{Count: 50}, boltConf: dsl.Conf{"topology.bolts.window.max.tuples": "many"}},
			[]string{`component "top": conf "topology.bolts.window.max.tuples": want a number, got string`}},
		{"a length of more than ten years", build{spec: dsl.WindowSpec[numIn]{Length: 20 * 365 * 24 * time.Hour}},
			[]string{`bolt "top": window Length 175200h0m0s is above the maximum 87600h0m0s`}},
		{"a slide and a lag of more than ten years", build{spec: dsl.WindowSpec[numIn]{Length: time.Hour, Slide: 1 << 62, Lag: 1 << 62, Timestamp: eventAt}},
			[]string{`bolt "top": window Slide 1281023h`, `bolt "top": window Lag 1281023h`}},
		// Boundaries (issue 35): each bound's last valid value builds.
		{"a length of exactly ten years", build{spec: dsl.WindowSpec[numIn]{Length: 10 * 365 * 24 * time.Hour}}, nil},
		{"a length just over ten years", build{spec: dsl.WindowSpec[numIn]{Length: 10*365*24*time.Hour + 1}},
			[]string{`bolt "top": window Length 87600h0m0.000000001s is above the maximum 87600h0m0s`}},
		{"a slide and a lag of exactly ten years", build{spec: dsl.WindowSpec[numIn]{Length: time.Hour, Slide: 10 * 365 * 24 * time.Hour, Lag: 10 * 365 * 24 * time.Hour, Timestamp: eventAt}}, nil},
		{"a count window at its cap", build{spec: dsl.WindowSpec[numIn]{Count: 40}, boltConf: dsl.Conf{"topology.bolts.window.max.tuples": 40}}, nil},
		{"a count window sliding beyond its cap", build{spec: dsl.WindowSpec[numIn]{Count: 10, SlideCount: 41}, boltConf: dsl.Conf{"topology.bolts.window.max.tuples": 40}},
			[]string{`bolt "top": its window needs 41 tuples, more than its cap topology.bolts.window.max.tuples=40`}},
		{"length plus slide at the message timeout", build{spec: dsl.WindowSpec[numIn]{Length: 20 * time.Second, Slide: 10 * time.Second}, anchored: true}, nil},
		{"a tumbling window at the message timeout", build{spec: dsl.WindowSpec[numIn]{Length: 15 * time.Second}, anchored: true}, nil},
		{"a count window sliding by time beyond the timeout", build{spec: dsl.WindowSpec[numIn]{Count: 5, Slide: 31 * time.Second}, anchored: true},
			[]string{`bolt "top": window slide 31s, more than the message timeout 30s`}},
		{"a count window sliding by time at the timeout", build{spec: dsl.WindowSpec[numIn]{Count: 5, Slide: 30 * time.Second}, anchored: true}, nil},
		{"a count window sliding in tuples its spouts cannot fill", build{spec: dsl.WindowSpec[numIn]{Count: 10, SlideCount: 257}, anchored: true, reliable: true},
			[]string{`bolt "top": its window needs 257 tuples in flight`}},
		{"negative slide, lag and interval", build{spec: dsl.WindowSpec[numIn]{Length: time.Second, Slide: -1, Lag: -1, WatermarkInterval: -1, Timestamp: eventAt}},
			[]string{`bolt "top": window Slide is negative`, `bolt "top": window Lag is negative`, `bolt "top": window WatermarkInterval is negative`}},
		{"negative length and slide count", build{spec: dsl.WindowSpec[numIn]{Count: 2, Length: -1, SlideCount: -1}},
			[]string{`bolt "top": window Length is negative`, `bolt "top": window SlideCount is negative`}},
		{"ticks turned off", build{spec: dsl.WindowSpec[numIn]{Length: time.Second}, boltConf: dsl.Conf{dsl.TickFrequency: 0}},
			[]string{`bolt "top": its window closes on tick tuples, but its conf turns them off (topology.tick.tuple.freq.secs)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(tt.b)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				return
			}
			var ve *dsl.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != len(tt.want) {
				t.Fatalf("Build error %v, want %d problems: %q", err, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(ve.Problems[i], w) {
					t.Errorf("problem %d = %q, want it to start with %q", i, ve.Problems[i], w)
				}
			}
		})
	}
}

// Windows that close on ticks get them at their WatermarkInterval unless the
// bolt's own conf sets a frequency; count windows in processing time get none.
func TestWindowedBoltsGetTicks(t *testing.T) {
	nop := func(dsl.TaskInfo) func(dsl.Window[numIn], dsl.Emitter) error { return nil }
	for _, tt := range []struct {
		spec dsl.WindowSpec[numIn]
		conf dsl.Conf
		want time.Duration
	}{
		{dsl.WindowSpec[numIn]{Length: 10 * time.Second}, nil, time.Second},
		{dsl.WindowSpec[numIn]{Length: time.Second, Slide: 200 * time.Millisecond}, nil, 200 * time.Millisecond},
		{dsl.WindowSpec[numIn]{Count: 5, Timestamp: eventAt}, nil, time.Second},
		{dsl.WindowSpec[numIn]{Length: 10 * time.Second, Timestamp: eventAt, WatermarkInterval: 3 * time.Second}, nil, 3 * time.Second},
		{dsl.WindowSpec[numIn]{Length: 10 * time.Second}, dsl.Conf{dsl.TickFrequency: 2}, 2 * time.Second},
		{dsl.WindowSpec[numIn]{Count: 5, SlideCount: 2}, nil, 0},
		{dsl.WindowSpec[numIn]{Length: time.Second, SlideCount: 2}, nil, 0},
	} {
		b := dsl.New("ticks", dsl.Conf{dsl.TickFrequency: 7}) // the topology's frequency does not apply
		bolt := b.Bolt("w", dsl.Windowed(nop, tt.spec), dsl.WithConf(tt.conf))
		b.Unanchored(b.Spout("s", dsl.Unreliable(noNums)), bolt, dsl.Shuffle[numIn]())
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		want := tt.want
		if want == 0 {
			want = 7 * time.Second
		}
		if got := topo.Component("w").Settings.TickFrequency; got != want {
			t.Errorf("%+v: tick frequency %v, want %v", tt.spec, got, want)
		}
	}
}

// eventAt is an event-time Timestamp: the input's number in seconds.
func eventAt(n numIn) time.Time { return time.Unix(int64(n.N), 0) }
