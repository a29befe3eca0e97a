package testsupport

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/goshelter/goshelter/"

// upper are the packages above the runtime's ground floor: the host, the kit
// and the adapters. Only test support may import them from internal/.
var upper = []string{"supervision", "sheltertest", "observe", "multilang", "actors"}

// TestOnlyTestsImportTestSupport walks every module of the repository: no
// file but a test (or test support itself) imports internal/testsupport, and
// no internal package outside it and the tools imports a package above the
// runtime's ground floor (the upward arrows issue 30 removed).
func TestOnlyTestsImportTestSupport(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			inSupport := strings.HasPrefix(rel, "internal/testsupport/")
			if strings.HasPrefix(imp, "internal/testsupport") && !inSupport {
				t.Errorf("%s imports %s: only tests may", rel, imp)
			}
			if strings.HasPrefix(rel, "internal/") && !inSupport && !strings.HasPrefix(rel, "internal/tools/") {
				for _, u := range upper {
					if imp == u || strings.HasPrefix(imp, u+"/") {
						t.Errorf("%s imports %s: an internal package the runtime may import points up", rel, imp)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
