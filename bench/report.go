package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

const header = "system\tmode\tshape\tload\ttuples/s\tns/tuple\tcpu ns/tuple\tallocs/tuple\tB/tuple\tpeak heap\tGCs\tp50\tp99\tp99.9\tothers\t"

// printTable writes the results as aligned columns, or as a Markdown table.
func printTable(w io.Writer, results []result, markdown bool) {
	if markdown {
		md := func(line string) string {
			return "| " + strings.ReplaceAll(strings.TrimSuffix(line, "\t"), "\t", " | ") + " |"
		}
		fmt.Fprintln(w, md(header))
		fmt.Fprintln(w, "|---|---|---|---|"+strings.Repeat("---:|", strings.Count(header, "\t")-4))
		for _, r := range results {
			fmt.Fprintln(w, md(row(r)))
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, header)
		for _, r := range results {
			fmt.Fprintln(tw, row(r))
		}
		tw.Flush()
	}
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(w, "error: %s (%s): %v\n", r.name(), r.load, r.err)
		}
		if r.nacks > 0 {
			fmt.Fprintf(w, "note: %s (%s): %d tuples nacked\n", r.name(), r.load, r.nacks)
		}
		if r.stop > 5*time.Second {
			fmt.Fprintf(w, "note: %s (%s): stopping took %v\n", r.name(), r.load, r.stop.Round(time.Millisecond))
		}
	}
}

func row(r result) string {
	parts := strings.Fields(r.name())
	cells := []string{parts[0], parts[1], parts[2], r.load}
	if r.err != nil && r.tuples == 0 {
		cells = append(cells, "error")
		return strings.Join(cells, "\t") + "\t"
	}
	cells = append(cells,
		mega(r.rate()),
		fmt.Sprintf("%.1f", r.perTuple(float64(r.elapsed.Nanoseconds()))),
		fmt.Sprintf("%.1f", r.perTuple(float64(r.cpu.Nanoseconds()))),
		fmt.Sprintf("%.3f", r.perTuple(float64(r.mallocs))),
		fmt.Sprintf("%.1f", r.perTuple(float64(r.bytes))),
		fmt.Sprintf("%.1f MiB", float64(r.peakHeap)/(1<<20)),
		fmt.Sprint(r.gcs),
	)
	if r.acked || r.samples > 0 {
		cells = append(cells, dur(r.p50), dur(r.p99), dur(r.p999))
	} else {
		cells = append(cells, "-", "-", "-")
	}
	others := "?"
	if r.others >= 0 {
		others = fmt.Sprintf("%.0f%%", 100*r.others)
	}
	cells = append(cells, others)
	return strings.Join(cells, "\t") + "\t"
}

func mega(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%d ns", d.Nanoseconds())
}

// find returns the full-speed run of system/acked/shape, or its paced run.
func find(results []result, system string, acked bool, sh shape, paced bool) *result {
	for i := range results {
		r := &results[i]
		if r.system == system && r.acked == acked && r.shape == sh && (r.load != "full") == paced && r.err == nil {
			return r
		}
	}
	return nil
}

func ratio(a, b *result) (float64, bool) {
	if a == nil || b == nil || b.rate() == 0 {
		return 0, false
	}
	return a.rate() / b.rate(), true
}

func fmtRatio(v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// findLoad returns the run of system/acked/shape whose load column is load.
func findLoad(results []result, system string, acked bool, sh shape, load string) *result {
	for i := range results {
		r := &results[i]
		if r.system == system && r.acked == acked && r.shape == sh && r.load == load && r.err == nil {
			return r
		}
	}
	return nil
}

func p99ms(r *result) string {
	if r == nil || r.samples == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(r.p99)/float64(time.Millisecond))
}

// pacedVsLimit returns, for shape sh, goshelter's acked p99 at partial load
// over the hand-written limit's in the same run.
func pacedVsLimit(results []result, sh shape) (float64, bool) {
	g, c := find(results, "goshelter", true, sh, true), find(results, "chan", true, sh, true)
	if g == nil || c == nil || g.samples == 0 || c.samples == 0 || c.p99 == 0 {
		return 0, false
	}
	return float64(g.p99) / float64(c.p99), true
}

// worstPaced returns the larger of the two shapes' paced p99 over the limit's,
// and the larger of their paced p50s in µs.
func worstPaced(results []result) (vsLimit string, p50us string) {
	vsLimit, p50us = "n/a", "n/a"
	var worst float64
	var worstP50 time.Duration
	okAll, p50All := true, true
	for _, sh := range []shape{oneHop, twoHop} {
		v, ok := pacedVsLimit(results, sh)
		okAll = okAll && ok
		worst = max(worst, v)
		if g := find(results, "goshelter", true, sh, true); g != nil && g.samples > 0 {
			worstP50 = max(worstP50, g.p50)
		} else {
			p50All = false
		}
	}
	if okAll {
		vsLimit = fmt.Sprintf("%.1f", worst)
	}
	if p50All {
		p50us = fmt.Sprintf("%.0f", float64(worstP50)/float64(time.Microsecond))
	}
	return vsLimit, p50us
}

// ratiosLine compares the spout->null runs at full speed, and gives the p99
// complete latency of the acked spout->null run at 50% load, the worse of the
// two acked shapes' p99 at 50% load over the limit's p99 in the same run and
// their worse p50 at 50% load, and the slow source's p99 emit-to-execute
// latency (default flush interval).
func ratiosLine(results []result) string {
	gu := find(results, "goshelter", false, oneHop, false)
	ga := find(results, "goshelter", true, oneHop, false)
	cu := find(results, "chan", false, oneHop, false)
	ca := find(results, "chan", true, oneHop, false)
	ct := find(results, "chan+tuple", false, oneHop, false)
	wa := find(results, "watermill", true, oneHop, false)
	half := find(results, "goshelter", true, oneHop, true)
	slow := findLoad(results, "goshelter", false, slowSource, "flush 1ms")
	kc := fmtRatio(ratio(find(results, "kafka", true, topicToTopic, false), find(results, "franz-go", true, topicToTopic, false)))
	stateful, plain := find(results, "goshelter", true, statefulCount, false), find(results, "goshelter", true, ackedCount, false)
	sp, sh := fmtRatio(ratio(stateful, plain)), "n/a"
	if stateful != nil && plain != nil && stateful.err == nil && plain.err == nil && plain.peakHeap > 0 {
		sh = fmt.Sprintf("%.2f", float64(stateful.peakHeap)/float64(plain.peakHeap))
	}
	vsLimit, p50us := worstPaced(results)
	eos := find(results, "kafka-exactlyonce", true, topicCount, false)
	eo := fmtRatio(ratio(eos, find(results, "kafka-atleastonce", true, topicCount, false)))
	ec := fmtRatio(ratio(eos, find(results, "franz-go", true, topicCount, false)))
	return fmt.Sprintf("ratios: unacked_vs_limit=%s acked_vs_unacked=%s acked_vs_watermill=%s unacked_vs_tuple_limit=%s acked_vs_limit=%s p99_50pct_ms=%s p99_50pct_vs_limit=%s p50_50pct_us=%s slow_source_p99_ms=%s kafka_vs_client=%s stateful_vs_plain=%s stateful_heap_vs_plain=%s eos_vs_atleastonce=%s eos_vs_client=%s",
		fmtRatio(ratio(gu, cu)), fmtRatio(ratio(ga, gu)), fmtRatio(ratio(ga, wa)),
		fmtRatio(ratio(gu, ct)), fmtRatio(ratio(ga, ca)), p99ms(half), vsLimit, p50us, p99ms(slow), kc, sp, sh, eo, ec)
}

// printTargets checks issue 33's targets, each a ratio to the limit measured
// in the same run (issue 24's, where 33 sets none).
func printTargets(w io.Writer, results []result) {
	fmt.Fprintln(w, "targets (issue 33):")
	check := func(what string, got float64, ok bool, want float64) {
		if !ok {
			fmt.Fprintf(w, "  %-58s n/a\n", what)
			return
		}
		verdict := "met"
		if got < want {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-58s %8.2f (target >= %g, %.2fx of target) %s\n", what, got, want, got/want, verdict)
	}
	for _, sh := range []shape{oneHop, twoHop} {
		v, ok := ratio(find(results, "goshelter", false, sh, false), find(results, "chan+tuple", false, sh, false))
		check(fmt.Sprintf("unacked %v vs chan+tuple", sh), v, ok, 0.6)
	}
	v, ok := ratio(find(results, "goshelter", false, wordCount, false), find(results, "chan", false, wordCount, false))
	check("wordcount vs chan", v, ok, 0.8)
	v, ok = ratio(find(results, "goshelter", true, oneHop, false), find(results, "chan", true, oneHop, false))
	check("acked spout->null vs chan acked", v, ok, 0.8)
	v, ok = ratio(find(results, "kafka", true, topicToTopic, false), find(results, "franz-go", true, topicToTopic, false))
	check("kafka topic->topic vs franz-go alone", v, ok, 0.5)
	stateful, plain := find(results, "goshelter", true, statefulCount, false), find(results, "goshelter", true, ackedCount, false)
	v, ok = ratio(stateful, plain)
	check("stateful wordcount (pebble, 1s) vs without state", v, ok, 0.7)
	if stateful != nil && plain != nil && stateful.err == nil && plain.err == nil && plain.peakHeap > 0 {
		h := float64(stateful.peakHeap) / float64(plain.peakHeap)
		verdict := "met"
		if h > 2 {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-58s %8.2f (%.0f vs %.0f MiB; target <= 2, %.2fx of target) %s\n", "stateful wordcount peak heap vs without state",
			h, mib(stateful.peakHeap), mib(plain.peakHeap), h/2, verdict)
	} else {
		fmt.Fprintf(w, "  %-58s n/a\n", "stateful wordcount peak heap vs without state")
	}
	v, ok = ratio(find(results, "kafka-exactlyonce", true, topicCount, false), find(results, "kafka-atleastonce", true, topicCount, false))
	check("kafka exactly-once count vs at-least-once", v, ok, 0.5) // issue 31
	for _, sh := range []shape{oneHop, twoHop} {
		what := fmt.Sprintf("p99 complete at 50%%, %v, vs chan acked's p99", sh)
		v, ok := pacedVsLimit(results, sh)
		if !ok {
			fmt.Fprintf(w, "  %-58s n/a\n", what)
			continue
		}
		g, c := find(results, "goshelter", true, sh, true), find(results, "chan", true, sh, true)
		verdict := "met"
		if v > 3 {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-58s %8.1f (%s vs %s; target <= 3, %.2fx of target) %s\n", what, v, dur(g.p99), dur(c.p99), v/3, verdict)
	}
	atMost := func(what string, got time.Duration, ok bool, limit time.Duration) {
		if !ok {
			fmt.Fprintf(w, "  %-58s n/a\n", what)
			return
		}
		verdict := "met"
		if got > limit {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-58s %8s (target <= %v, %.2fx of target) %s\n", what, dur(got), limit, float64(got)/float64(limit), verdict)
	}
	for _, sh := range []shape{oneHop, twoHop} {
		r := find(results, "goshelter", true, sh, true)
		ok := r != nil && r.samples > 0
		var p50 time.Duration
		if ok {
			p50 = r.p50
		}
		atMost(fmt.Sprintf("p50 complete latency at 50%%, %v", sh), p50, ok, 50*time.Microsecond)
	}
	slow := findLoad(results, "goshelter", false, slowSource, "flush 1ms")
	var sp99 time.Duration
	if slow != nil {
		sp99 = slow.p99
	}
	atMost("slow source p99 emit-to-execute (flush 1ms)", sp99, slow != nil && slow.samples > 0, 2*time.Millisecond)
	if r := findLoad(results, "goshelter", false, slowSource, "flush 0"); r != nil && r.samples > 0 {
		fmt.Fprintf(w, "  %-58s %8s (the time bound off: before issue 11)\n", "slow source p99 emit-to-execute (flush 0)", dur(r.p99))
	}
}
