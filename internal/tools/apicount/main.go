// Command apicount counts the module's exported identifiers: top-level
// exported names (types, functions, variables, constants) plus exported methods
// of exported types, per package, leaving out internal/ packages, tests,
// samples, specs and the bench module. It is the figure issue 12 sets a target
// for: what a user of goshelter could reach.
//
//	go run ./internal/tools/apicount        # from the module root
//	go run ./internal/tools/apicount -max 150
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "module root")
	limit := flag.Int("max", 0, "exit 1 when the total exceeds this (0: no limit)")
	flag.Parse()
	counts, err := count(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(2)
	}
	pkgs := make([]string, 0, len(counts))
	total := 0
	for p, n := range counts {
		pkgs = append(pkgs, p)
		total += n
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Printf("%-14s %3d\n", p, counts[p])
	}
	fmt.Printf("%-14s %3d\n", "total", total)
	if *limit > 0 && total > *limit {
		fmt.Fprintf(os.Stderr, "apicount: %d exported identifiers, more than %d\n", total, *limit)
		os.Exit(1)
	}
}

// skipped are directories whose code is not part of the library's API.
var skipped = map[string]bool{".git": true, "testdata": true, "internal": true, "bench": true, "samples": true, "specs": true}

// isModule reports whether dir holds a go.mod of its own.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

func count(root string) (map[string]int, error) {
	counts := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			if skipped[d.Name()] || isModule(path) {
				// A nested module (a connector) has an API, and a
				// budget, of its own: count it with -root.
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		counts[filepath.ToSlash(rel)] += exported(f)
		return nil
	})
	return counts, err
}

// exported counts a file's exported top-level names and exported methods of
// exported types. Struct fields and interface methods are part of their type.
func exported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || receiverExported(d.Recv)) {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func receiverExported(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch g := t.(type) {
	case *ast.IndexExpr:
		t = g.X
	case *ast.IndexListExpr:
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
