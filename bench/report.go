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
	if r.acked {
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

// ratiosLine compares the spout->null runs at full speed.
func ratiosLine(results []result) string {
	gu := find(results, "goshelter", false, oneHop, false)
	ga := find(results, "goshelter", true, oneHop, false)
	cu := find(results, "chan", false, oneHop, false)
	wa := find(results, "watermill", true, oneHop, false)
	return fmt.Sprintf("ratios: unacked_vs_limit=%s acked_vs_unacked=%s acked_vs_watermill=%s",
		fmtRatio(ratio(gu, cu)), fmtRatio(ratio(ga, gu)), fmtRatio(ratio(ga, wa)))
}

// printTargets checks issue 5's targets against the spout->null runs.
func printTargets(w io.Writer, results []result) {
	gu := find(results, "goshelter", false, oneHop, false)
	ga := find(results, "goshelter", true, oneHop, false)
	cu := find(results, "chan", false, oneHop, false)
	wa := find(results, "watermill", true, oneHop, false)
	fmt.Fprintln(w, "targets (goshelter spout->null):")
	check := func(what string, got float64, ok bool, want float64, unit string) {
		if !ok {
			fmt.Fprintf(w, "  %-44s n/a\n", what)
			return
		}
		verdict := "met"
		if got < want {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-44s %8.2f%s (target >= %g%s, %.2fx of target) %s\n", what, got, unit, want, unit, got/want, verdict)
	}
	rate := func(r *result) (float64, bool) {
		if r == nil {
			return 0, false
		}
		return r.rate() / 1e6, true
	}
	v, ok := rate(gu)
	check("unacked tuples/s", v, ok, 10, " M")
	v, ok = ratio(gu, cu)
	check("unacked vs channel limit", v, ok, 0.5, "")
	v, ok = rate(ga)
	check("acked tuples/s", v, ok, 2, " M")
	v, ok = ratio(ga, gu)
	check("acked vs unacked", v, ok, 0.25, "")
	v, ok = ratio(ga, wa)
	check("acked vs watermill", v, ok, 5, "")
	for _, sh := range []shape{oneHop, twoHop} {
		what := fmt.Sprintf("p99 complete latency at 50%%, %v", sh)
		if h := find(results, "goshelter", true, sh, true); h != nil && h.load == "50%" {
			verdict := "met"
			if h.p99 > time.Millisecond {
				verdict = "MISSED"
			}
			fmt.Fprintf(w, "  %-44s %8s (target <= 1 ms, %.2fx of target) %s\n", what, dur(h.p99), float64(h.p99)/float64(time.Millisecond), verdict)
		} else {
			fmt.Fprintf(w, "  %-44s n/a\n", what)
		}
	}
}
