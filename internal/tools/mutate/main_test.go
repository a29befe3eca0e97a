package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The generated go.mod of a module of its own replaces every workspace
// module it may need by its absolute directory, but not itself.
func TestGeneratedModfile(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.work"), "go 1.26\nuse (\n\t.\n\t./conn\n)\nreplace (\n\texample.com/core v0.1.0 => ./\n\texample.com/core/conn v0.1.0 => ./conn\n\texample.com/other v1.0.0 => example.com/fork v1.0.1\n)\n")
	write(t, filepath.Join(root, "go.work.sum"), "work-sum-line\n")
	write(t, filepath.Join(root, "conn", "go.mod"), "module example.com/core/conn\n\ngo 1.26\n\nrequire example.com/core v0.1.0\n")
	write(t, filepath.Join(root, "conn", "go.sum"), "mod-sum-line\n")
	path, err := generatedModfile(root, t.TempDir(), filepath.Join(root, "conn"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(mf.Replace) != 1 || mf.Replace[0].Old.Path != "example.com/core" || mf.Replace[0].Old.Version != "v0.1.0" || mf.Replace[0].New.Path != root {
		t.Errorf("replaces %v, want only example.com/core v0.1.0 => %s", mf.Replace, root)
	}
	if mf.Module.Mod.Path != "example.com/core/conn" || len(mf.Require) != 1 {
		t.Errorf("the module's own lines changed: %s", data)
	}
	sum, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "go.sum"))
	if string(sum) != "mod-sum-line\nwork-sum-line\n" {
		t.Errorf("go.sum = %q, want the module's then go.work.sum", sum)
	}
}

func TestExcluded(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	write(t, filepath.Join(dir, "memory.go"), "package state\n")
	write(t, filepath.Join(dir, "store.go"), "package state\n")
	write(t, filepath.Join(dir, "pebble", "go.mod"), "module x\n")
	write(t, filepath.Join(dir, "pebble", "pebble.go"), "package pebble\n")
	got, err := excluded(root, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`(^|/)testdata/`, "^statetest/", "^pebble/"}
	if !slices.Equal(got, want) {
		t.Errorf("excluded = %q, want %q", got, want)
	}
	got, err = excluded(root, dir, `^store\.go$`)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, `^memory\.go$`) || slices.Contains(got, `^store\.go$`) {
		t.Errorf("with -only store.go, excluded = %q", got)
	}
	if _, err := excluded(root, dir, "("); err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("a bad -only regexp: %v", err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
