package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (name -> content) under a temporary directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// good is a workspace of a core and a connector released together at v0.3.0.
func good() map[string]string {
	return map[string]string{
		"go.work":     "go 1.26.0\n\nuse (\n\t.\n\t./conn\n)\n\nreplace example.com/core v0.3.0 => ./\n",
		"go.mod":      "module example.com/core\n\ngo 1.25.0\n",
		"conn/go.mod": "module example.com/core/conn\n\ngo 1.26\n\nrequire example.com/core v0.3.0\n",
	}
}

func TestLint(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(map[string]string)
		version string
		want    []string // substrings of the error; none: no error
	}{
		{"released together", func(map[string]string) {}, "", nil},
		{"a replace in a module", func(f map[string]string) {
			f["conn/go.mod"] += "\nreplace example.com/core => ../\n"
		}, "", []string{"conn/go.mod: replace example.com/core"}},
		{"a patch go line", func(f map[string]string) {
			f["conn/go.mod"] = strings.Replace(f["conn/go.mod"], "go 1.26", "go 1.26.8", 1)
		}, "", []string{"conn/go.mod: go 1.26.8 names a patch release"}},
		{"another version than the one asked for", func(map[string]string) {}, "v0.4.0",
			[]string{"conn requires example.com/core v0.3.0: the modules are released together, so it must be v0.4.0",
				"go.work: replace example.com/core v0.3.0: the release version is v0.4.0"}},
		{"go.work without the replace", func(f map[string]string) {
			f["go.work"] = strings.Replace(f["go.work"], "replace example.com/core v0.3.0 => ./\n", "", 1)
		}, "", []string{"go.work: no replace example.com/core v0.3.0 => ./."}},
		{"go.work replacing every version", func(f map[string]string) {
			f["go.work"] = strings.Replace(f["go.work"], "example.com/core v0.3.0 => ./", "example.com/core => ./", 1)
		}, "", []string{"go.work: replace example.com/core => ./ replaces every version: replace the release version v0.3.0 only"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := good()
			c.edit(files)
			ws, err := loadWorkspace(tree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			version, err := lint(ws, c.version)
			if len(c.want) == 0 {
				if err != nil || version != "v0.3.0" {
					t.Fatalf("lint = %q, %v; want v0.3.0, no error", version, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("lint found nothing; want %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("lint's error\n%v\ndoes not say %q", err, w)
				}
			}
		})
	}
}

// TestREADMEExamples checks that README still has the two examples the user
// module is made of, where modcheck looks for them.
func TestREADMEExamples(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	topology, err := codeBlock(readme, "## Defining and running a topology", "")
	if err != nil {
		t.Fatal(err)
	}
	types, body := splitTypes(topology)
	if !strings.HasPrefix(types, "type Original struct") || !strings.Contains(body, "supervision.Run(ctx, topo)") {
		t.Errorf("the topology example split into types\n%s\nand statements\n%s", types, body)
	}
	gets, err := readmeGets(readme, "github.com/goshelter/goshelter")
	if err != nil || len(gets) != len(published) || gets[0] != "github.com/goshelter/goshelter@latest" {
		t.Errorf("README's go get lines: %q, %v", gets, err)
	}
	if _, err := readmeGets([]byte("    go get github.com/goshelter/goshelter@latest\n"), "github.com/goshelter/goshelter"); err == nil ||
		!strings.Contains(err.Error(), "no go get line for github.com/goshelter/goshelter/state/redis") {
		t.Errorf("a README with the core's line only: %v", err)
	}
	shipping, err := codeBlock(readme, "## Testing a topology", "package ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shipping, "package shipping_test\n") || !strings.Contains(shipping, "func TestShipping(t *testing.T)") {
		t.Errorf("the shipping example is\n%s", shipping)
	}
}

func TestDropSums(t *testing.T) {
	root := tree(t, map[string]string{"go.sum": "example.com/core v0.3.0 h1:a=\nexample.com/core v0.3.0/go.mod h1:b=\nexample.com/other v1.0.0 h1:c=\nexample.com/core/conn v0.3.0 h1:d=\n"})
	name := filepath.Join(root, "go.sum")
	if err := dropSums(name, map[string]string{"example.com/core": ".", "example.com/core/conn": "conn"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "example.com/other v1.0.0 h1:c=\n" {
		t.Errorf("go.sum kept\n%s", got)
	}
}
