package main

import (
	"bytes"
	"testing"

	"github.com/goshelter/goshelter/internal/testsupport/fluxcheck"
	"github.com/goshelter/goshelter/multilang"
)

// TestFluxCarriesTheBuiltSettings: the word count Storm runs from the export
// has the settings this binary's Build resolved.
func TestFluxCarriesTheBuiltSettings(t *testing.T) {
	topo, err := topology(&tally{}, &figures{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := multilang.Flux(&out, topo, "./goshelter-wordcount", "serve"); err != nil {
		t.Fatal(err)
	}
	if err := fluxcheck.Check(topo, out.Bytes()); err != nil {
		t.Error(err)
	}
}
