package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goshelter/goshelter/internal/hops"
)

// hopRun measures where a goshelter acked run's complete latency goes: the
// same case again, with the runtime's hop probe installed (one tree in 256
// timed at every hand-off), so the probe's cost stays out of the table's runs.
func hopRun(rs runSpec, s setup, t timing) result {
	s.hops = hops.NewProbe()
	r := runOne(rs, s, t)
	if r.load != "full" {
		r.load += " hops"
	} else {
		r.load = "full hops"
	}
	return r
}

// quantileOf returns the q quantile of d (sorted in place).
func quantileOf(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := min(int(q*float64(len(d))), len(d)-1)
	return max(d[i], 0)
}

// printHops writes the hop-probe runs as one table: a row per hop, p50 and p99
// of each run's span from the previous hop, and the total (emit to outcome).
func printHops(w io.Writer, results []result, markdown bool) {
	var runs []result
	for _, r := range results {
		if strings.HasSuffix(r.load, "hops") && r.err == nil {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w, "where the complete latency goes (goshelter acked, one tree in 256 timed at each hop; span from the previous hop, p50 / p99):")
	head := []string{"hop"}
	for _, r := range runs {
		head = append(head, fmt.Sprintf("%s %s", r.shape, strings.TrimSuffix(r.load, " hops")))
	}
	lines := [][]string{head}
	for h := hops.Emit + 1; h <= hops.Settled; h++ {
		line := []string{"-> " + h.String()}
		seen := false
		for _, r := range runs {
			cell := "-"
			for _, sp := range r.hops {
				if sp.Hop == h {
					cell = dur(quantileOf(sp.Samples, 0.5)) + " / " + dur(quantileOf(sp.Samples, 0.99))
					seen = true
				}
			}
			line = append(line, cell)
		}
		if seen {
			lines = append(lines, line)
		}
	}
	total := []string{"emit -> outcome"}
	samples := []string{"trees timed"}
	for _, r := range runs {
		total = append(total, dur(quantileOf(r.hopTotal, 0.5))+" / "+dur(quantileOf(r.hopTotal, 0.99)))
		samples = append(samples, fmt.Sprint(len(r.hopTotal)))
	}
	lines = append(lines, total, samples)
	if markdown {
		for i, l := range lines {
			fmt.Fprintln(w, "| "+strings.Join(l, " | ")+" |")
			if i == 0 {
				fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(l)-1))
			}
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, l := range lines {
		fmt.Fprintln(tw, "  "+strings.Join(l, "\t")+"\t")
	}
	tw.Flush()
}
