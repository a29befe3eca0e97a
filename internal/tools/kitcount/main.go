// Command kitcount counts the specs in specs/ that run on the test kit
// (package sheltertest), the figure issue 21 sets a target for.
//
//	go run ./internal/tools/kitcount            # from the module root
//	go run ./internal/tools/kitcount -list      # and name the specs off the kit
//
// It asks ginkgo for the suite's specs (a dry run, so every spec a loop makes
// counts, and each Entry of a table counts once), finds each spec's node in
// the source and reads its body: an It's function, or an Entry's arguments
// and its table's function, with the BeforeEach, JustBeforeEach, AfterEach
// and JustAfterEach bodies of the containers around it. A spec is on the kit
// when that code names something of package sheltertest, directly or through
// a helper of the specs package it names (a function, variable, or type with
// its methods, followed by name). Both figures are printed, per spec and per
// call site (an It in a loop counts once, as it is written).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dir := flag.String("specs", "./specs", "the ginkgo suite's folder")
	list := flag.Bool("list", false, "list the specs that are not on the kit")
	limit := flag.Float64("min", 0, "exit 1 when less than this share (0..1) of specs is on the kit, counted directly")
	flag.Parse()
	specs, err := dryRun(*dir)
	if err != nil {
		fail(err)
	}
	src, err := parse(*dir)
	if err != nil {
		fail(err)
	}
	type tally struct{ all, direct, through int }
	files := map[string]*tally{}
	var total, sites tally
	var off []string
	seen := map[string]bool{} // file:line of the call sites counted in sites
	for _, s := range specs {
		nodes, err := src.bodyOf(s.file, s.line)
		if err != nil {
			fail(err)
		}
		direct, through := src.usesKit(nodes, false), src.usesKit(nodes, true)
		t := files[filepath.Base(s.file)]
		if t == nil {
			t = &tally{}
			files[filepath.Base(s.file)] = t
		}
		for _, x := range []*tally{t, &total} {
			x.all++
			if direct {
				x.direct++
			}
			if through {
				x.through++
			}
		}
		if site := fmt.Sprintf("%s:%d", s.file, s.line); !seen[site] {
			seen[site] = true
			sites.all++
			if direct {
				sites.direct++
			}
			if through {
				sites.through++
			}
		}
		if !direct {
			off = append(off, fmt.Sprintf("%s:%d %s (through a helper: %v)", filepath.Base(s.file), s.line, s.text, through))
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	fmt.Printf("%-28s %5s %7s %8s\n", "file", "specs", "direct", "through")
	for _, f := range names {
		t := files[f]
		fmt.Printf("%-28s %5d %7d %8d\n", f, t.all, t.direct, t.through)
	}
	share := float64(total.direct) / float64(total.all)
	fmt.Printf("%-28s %5d %7d %8d\n", "total", total.all, total.direct, total.through)
	fmt.Printf("on the kit: %d of %d (%.1f%%) directly, %d (%.1f%%) with helpers\n", total.direct, total.all,
		100*share, total.through, 100*float64(total.through)/float64(total.all))
	fmt.Printf("by call site (a loop's It once): %d of %d (%.1f%%) directly, %d (%.1f%%) with helpers\n",
		sites.direct, sites.all, 100*float64(sites.direct)/float64(sites.all),
		sites.through, 100*float64(sites.through)/float64(sites.all))
	if *list {
		fmt.Println("\noff the kit:")
		for _, o := range off {
			fmt.Println("  " + o)
		}
	}
	if share < *limit {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kitcount:", err)
	os.Exit(2)
}

// spec is one spec of the suite: where its leaf node is, and its text.
type spec struct {
	file string
	line int
	text string
}

// dryRun lists the suite's specs through a ginkgo dry run's JSON report.
func dryRun(dir string) ([]spec, error) {
	out, err := os.MkdirTemp("", "kitcount")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	cmd := exec.Command("go", "tool", "ginkgo", "--dry-run", "--json-report=specs.json", "--output-dir="+out, dir)
	cmd.Stderr = os.Stderr
	if b, err := cmd.Output(); err != nil {
		return nil, fmt.Errorf("ginkgo dry run: %w\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "specs.json"))
	if err != nil {
		return nil, err
	}
	var report []struct {
		SpecReports []struct {
			LeafNodeType     string
			LeafNodeText     string
			LeafNodeLocation struct {
				FileName   string
				LineNumber int
			}
		}
	}
	if err := json.Unmarshal(b, &report); err != nil {
		return nil, fmt.Errorf("reading ginkgo's report: %w", err)
	}
	var specs []spec
	for _, suite := range report {
		for _, r := range suite.SpecReports {
			if r.LeafNodeType == "It" {
				specs = append(specs, spec{r.LeafNodeLocation.FileName, r.LeafNodeLocation.LineNumber, r.LeafNodeText})
			}
		}
	}
	return specs, nil
}

// source is the specs package, parsed.
type source struct {
	fset      *token.FileSet
	files     map[string]*ast.File  // absolute path -> file
	decls     map[string][]ast.Node // package-level name (or method name) -> its declarations
	memo      map[string]bool       // decl name -> uses the kit (through helpers)
	busy      map[string]bool       // decl names being looked at, against cycles
	busyLocal map[ast.Node]bool     // local declarations being looked at, against cycles
}

func parse(dir string) (*source, error) {
	s := &source{fset: token.NewFileSet(), files: map[string]*ast.File{}, decls: map[string][]ast.Node{},
		memo: map[string]bool{}, busy: map[string]bool{}, busyLocal: map[ast.Node]bool{}}
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(s.fset, abs, nil, 0)
		if err != nil {
			return nil, err
		}
		s.files[abs] = f
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl: // a method counts as part of its type
				name := d.Name.Name
				if d.Recv != nil {
					name = recvType(d.Recv.List[0].Type)
				}
				s.decls[name] = append(s.decls[name], d)
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						s.decls[sp.Name.Name] = append(s.decls[sp.Name.Name], sp)
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.Name != "_" { // var _ = Describe(...): the specs themselves
								s.decls[n.Name] = append(s.decls[n.Name], sp)
							}
						}
					}
				}
			}
		}
	}
	return s, nil
}

// recvType returns the name of a method receiver's type.
func recvType(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// leaves and containers are ginkgo's node functions, by name.
var (
	leaves     = set("It", "FIt", "PIt", "XIt", "Specify", "FSpecify", "PSpecify", "Entry", "FEntry", "PEntry", "XEntry")
	containers = set("Describe", "FDescribe", "PDescribe", "Context", "FContext", "PContext", "When", "FWhen", "PWhen",
		"DescribeTable", "FDescribeTable", "PDescribeTable", "DescribeTableSubtree")
	setups = set("BeforeEach", "JustBeforeEach", "AfterEach", "JustAfterEach", "BeforeAll", "AfterAll")
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// callName returns the name of the function n calls, if n is a call.
func callName(n ast.Node) string {
	c, ok := n.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.IndexExpr: // a generic call
		if id, ok := f.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

// bodyOf returns the code that makes up the spec whose leaf node is at
// file:line: the leaf's arguments, its table's function for an Entry, and
// the setup nodes of every container around it.
func (s *source) bodyOf(file string, line int) ([]ast.Node, error) {
	f := s.files[file]
	if f == nil {
		return nil, fmt.Errorf("%s: not parsed", file)
	}
	var path, found []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			path = path[:len(path)-1]
			return false
		}
		path = append(path, n)
		if found == nil && leaves[callName(n)] && s.fset.Position(n.Pos()).Line == line {
			found = append([]ast.Node(nil), path...)
		}
		return true
	})
	if found == nil {
		return nil, fmt.Errorf("%s:%d: no It or Entry there", file, line)
	}
	leaf := found[len(found)-1].(*ast.CallExpr)
	var body []ast.Node
	for _, a := range leaf.Args {
		body = append(body, a)
	}
	for _, n := range found[:len(found)-1] {
		name := callName(n)
		if !containers[name] {
			continue
		}
		for _, a := range n.(*ast.CallExpr).Args {
			lit, ok := a.(*ast.FuncLit)
			if !ok {
				if _, named := a.(*ast.Ident); named && strings.HasSuffix(name, "Table") {
					body = append(body, a) // a table's body given by name
				}
				continue // the table's other entries are not this spec
			}
			if strings.HasSuffix(name, "Table") {
				body = append(body, lit)
				continue
			}
			for _, st := range lit.Body.List {
				if es, ok := st.(*ast.ExprStmt); ok && setups[callName(es.X)] {
					body = append(body, es.X)
				}
			}
		}
	}
	return body, nil
}

// usesKit reports whether nodes name something of package sheltertest,
// following the specs package's own declarations by name when through.
func (s *source) usesKit(nodes []ast.Node, through bool) bool {
	for _, n := range nodes {
		if s.nodeUsesKit(n, through) {
			return true
		}
	}
	return false
}

// A local name the spec uses but declares outside its body (a closure or a
// variable of its container, assigned in a setup node) counts as the spec's
// code, so it is followed in both modes.
func (s *source) nodeUsesKit(root ast.Node, through bool) bool {
	uses := false
	ast.Inspect(root, func(n ast.Node) bool {
		if uses {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == "sheltertest" {
				uses = true
				return false
			}
			// x.Name: Name is a field or a method, never one of this
			// package's declarations (supervision.Run is not the Run here).
			uses = s.nodeUsesKit(n.X, through)
			return false
		case *ast.Ident:
			switch {
			case s.packageLevel(n):
				uses = through && s.declUsesKit(n.Name)
			case n.Obj.Decl != nil:
				decl, ok := n.Obj.Decl.(ast.Node)
				if ok && (decl.Pos() < root.Pos() || decl.End() > root.End()) && !s.busyLocal[decl] {
					s.busyLocal[decl] = true
					uses = s.nodeUsesKit(decl, through)
					delete(s.busyLocal, decl)
				}
			}
		}
		return !uses
	})
	return uses
}

// packageLevel reports whether id may name a package-level declaration: the
// parser resolves names declared in a function (a local src or clk) to their
// declaration, and leaves other files' names unresolved.
func (s *source) packageLevel(id *ast.Ident) bool {
	if id.Obj == nil {
		return true
	}
	for _, f := range s.files {
		if f.Scope.Lookup(id.Name) == id.Obj {
			return true
		}
	}
	return false
}

func (s *source) declUsesKit(name string) bool {
	if v, ok := s.memo[name]; ok {
		return v
	}
	if s.busy[name] || len(s.decls[name]) == 0 {
		return false
	}
	s.busy[name] = true
	v := s.usesKit(s.decls[name], true)
	delete(s.busy, name)
	s.memo[name] = v
	return v
}
