package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const sample = `package p

type Exported struct{ Field int } // 1; fields are part of the type
type hidden struct{}
type Generic[T any] struct{}      // 2
type Pair[K, V any] struct{}      // 3

func Func() {}                    // 4
func helper() {}

func (Exported) Method()   {}     // 5
func (*Exported) Pointer() {}     // 6
func (Exported) unexported() {}
func (hidden) Method()     {}     // on an unexported type: unreachable
func (Generic[T]) Get()    {}     // 7
func (*Pair[K, V]) Put()   {}     // 8

const (
	A, b = 1, 2                   // 9
	C    = 3                      // 10
)

var V, w int                      // 11

type Iface interface{ M() }       // 12; interface methods are part of the type
`

func TestExportedCountsTopLevelNamesAndMethodsOfExportedTypes(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", sample, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := exported(f); got != 12 {
		t.Errorf("exported = %d, want 12", got)
	}
}

func TestCountSkipsTestsAndInternalPackages(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n\nfunc A() {}\nfunc B() {}\n")
	write("a/a_test.go", "package a\n\nfunc TestA() {}\n")
	write("a/b/b.go", "package b\n\ntype T int\n")
	write("internal/x/x.go", "package x\n\nfunc X() {}\n")
	write("a/internal/y.go", "package internal\n\nfunc Y() {}\n")
	write("samples/s.go", "package samples\n\nfunc S() {}\n")
	write("a/testdata/d.go", "package d\n\nfunc D() {}\n")
	write("connectors/k/go.mod", "module example.com/k\n")
	write("connectors/k/k.go", "package k\n\nfunc K() {}\n") // a nested module counts on its own
	counts, err := count(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 2, "a/b": 1}
	if len(counts) != len(want) || counts["a"] != 2 || counts["a/b"] != 1 {
		t.Errorf("counts = %v, want %v", counts, want)
	}
}
