package main

import (
	"bytes"
	"testing"

	"github.com/goshelter/goshelter/internal/testsupport/fluxcheck"
	"github.com/goshelter/goshelter/multilang"
)

// TestFluxCarriesTheBuiltSettings: both shapes of the sample (Go spout or
// Python spout) that Storm runs from the export have the settings this
// binary's Build resolved.
func TestFluxCarriesTheBuiltSettings(t *testing.T) {
	for _, shellSpout := range []bool{false, true} {
		c := config{boltCmd: multilang.Command{Path: "python3", Args: []string{"split.py"}}, counts: &counters{}, tally: &tally{counts: map[string]int{}}}
		if shellSpout {
			c.shellSpout, c.spoutCmd = true, multilang.Command{Line: "python3 sentences.py"}
		}
		topo, err := topology(c)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := multilang.Flux(&out, topo, "./goshelter-multilang", "serve"); err != nil {
			t.Fatal(err)
		}
		if err := fluxcheck.Check(topo, out.Bytes()); err != nil {
			t.Errorf("shell spout %v: %v", shellSpout, err)
		}
	}
}
