// Command mutate runs gremlins (mutation testing) on goshelter's packages so
// that its figures mean something (issue 35), and prints, per package, how
// many mutants the unit tests killed, let live, timed out on or never ran,
// and the efficacy, killed / (killed + lived).
//
//	go run ./internal/tools/mutate                    # the packages of issue 35
//	go run ./internal/tools/mutate connectors/kafka   # some packages (directories)
//
// What it does so that the measurement does not lie:
//   - GOFLAGS=-count=1 -trimpath: gremlins times the coverage run and gives
//     each mutant a multiple of that time; a run answered from the test cache
//     takes milliseconds, and every mutant would then "time out".
//   - A module of its own (connectors/kafka, ...) requires the core at the
//     release version with no replace; gremlins copies that module alone, so
//     the core resolves nowhere, every mutant fails to build, and a build
//     failure counts as KILLED. mutate gives the go command a generated go.mod
//     (GOFLAGS=-modfile, GOWORK=off) that replaces the release versions by the
//     repository's directories, as go.work does, and before gremlins starts it
//     proves on a copy made as gremlins makes it that the tests build.
//   - The timeout coefficient comes from a timed, uncached test run of the
//     package: a mutant gets twice that run plus 30 s of compile time.
//   - GOSHELTER_TEST_FAILFAST=1 stops a ginkgo suite at its first failure.
//
// Equivalent mutants (no test can tell them from the original) are listed in
// equivalent.txt next to this file: "dir/file.go:line:col TYPE reason".
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

const gremlins = "github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0"

// defaultDirs are the packages issue 35 asks >= 90% efficacy of.
var defaultDirs = []string{
	"connectors/kafka", "connectors/jetstream", "sheltertest", "dsl",
	"internal/task", "state", "multilang",
}

func main() {
	workers := flag.Int("workers", 1, "gremlins workers (mutants tested at once)")
	coef := flag.Int("coef", 0, "timeout coefficient; 0: chosen from a timed test run")
	keep := flag.String("out", "", "directory to keep gremlins' JSON reports in")
	dry := flag.Bool("dry", false, "list the mutants, test none (gremlins --dry-run)")
	only := flag.String("only", "", "mutate only the files (relative to each directory) this regexp matches")
	runTests := flag.String("run", "", "run only the tests this regexp matches (go test -run): a lower bound, for a quick look")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = defaultDirs
	}
	root, err := repoRoot()
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	bin, err := installGremlins(tmp)
	if err != nil {
		fatal(err)
	}
	eq, err := readEquivalent(filepath.Join(root, "internal/tools/mutate/equivalent.txt"))
	if err != nil {
		fatal(err)
	}
	var rows []row
	for _, d := range dirs {
		r, err := mutate(root, tmp, bin, d, opts{*workers, *coef, *dry, *keep, *only, *runTests}, eq)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", d, err))
		}
		rows = append(rows, r)
	}
	fmt.Printf("\n%-22s %6s %6s %9s %11s %10s %8s %12s\n", "package", "killed", "lived", "timed out", "not covered", "not viable", "efficacy", "w/o equival.")
	for _, r := range rows {
		fmt.Printf("%-22s %6d %6d %9d %11d %10d %7.1f%% %11.1f%%\n", r.dir, r.killed, r.lived, r.timedOut, r.notCovered, r.notViable,
			pct(r.killed, r.killed+r.lived), pct(r.killed, r.killed+r.lived-r.equivalent))
	}
}

type row struct {
	dir                                                        string
	killed, lived, timedOut, notCovered, notViable, equivalent int
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(1)
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return "", err
	}
	w := strings.TrimSpace(string(out))
	if w == "" || w == "off" {
		return "", errors.New("run from inside the repository: go.work not found")
	}
	return filepath.Dir(w), nil
}

// installGremlins builds gremlins into dir with the caller's environment: a
// -modfile in GOFLAGS would stop go run pkg@version.
func installGremlins(dir string) (string, error) {
	cmd := exec.Command("go", "install", gremlins)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("installing %s: %w", gremlins, err)
	}
	return filepath.Join(dir, "gremlins"), nil
}

// moduleRoot returns the directory of the go.mod that holds dir.
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// env returns the environment for the go commands gremlins runs in modRoot
// (or a copy of it). A module other than the core gets a generated go.mod:
// its own, plus go.work's replaces by absolute directories.
func env(root, tmp, modRoot string) ([]string, error) {
	flags := "-count=1 -trimpath"
	if modRoot != root {
		mf, err := generatedModfile(root, tmp, modRoot)
		if err != nil {
			return nil, err
		}
		flags += " -modfile=" + mf
	}
	return append(os.Environ(), "GOWORK=off", "GOFLAGS="+flags, "GOSHELTER_TEST_FAILFAST=1"), nil
}

func generatedModfile(root, tmp, modRoot string) (string, error) {
	wdata, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return "", err
	}
	work, err := modfile.ParseWork("go.work", wdata, nil)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(modRoot, "go.mod"))
	if err != nil {
		return "", err
	}
	mf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range work.Replace {
		if r.Old.Path == mf.Module.Mod.Path || !modfile.IsDirectoryPath(r.New.Path) {
			continue
		}
		if err := mf.AddReplace(r.Old.Path, r.Old.Version, filepath.Join(root, r.New.Path), ""); err != nil {
			return "", err
		}
	}
	out, err := mf.Format()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(tmp, "modfile-")
	if err != nil {
		return "", err
	}
	// The module's go.sum misses what only go.work.sum holds: both go along.
	sum, _ := os.ReadFile(filepath.Join(modRoot, "go.sum"))
	wsum, _ := os.ReadFile(filepath.Join(root, "go.work.sum"))
	path := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return "", err
	}
	return path, os.WriteFile(filepath.Join(dir, "go.sum"), append(sum, wsum...), 0o644)
}

func run(dir string, env []string, name string, args ...string) (time.Duration, string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return time.Since(start), string(out), err
}

// opts are the command's flags.
type opts struct {
	workers, coef int
	dry           bool
	keep          string
	only, run     string
}

func mutate(root, tmp, bin, dir string, o opts, eq map[string]bool) (row, error) {
	workers, coef, dry, keep := o.workers, o.coef, o.dry, o.keep
	abs := filepath.Join(root, dir)
	modRoot := moduleRoot(abs)
	e, err := env(root, tmp, modRoot)
	if err != nil {
		return row{}, err
	}
	if o.run != "" {
		for i, kv := range e {
			if strings.HasPrefix(kv, "GOFLAGS=") {
				e[i] = kv + " -run=" + o.run
			}
		}
	}
	rel, _ := filepath.Rel(modRoot, abs)
	pattern := "./" + filepath.ToSlash(rel) + "/..."
	// The proof that a mutant is killed by a test, not by a build failure:
	// gremlins tests each mutant in a copy of the module; the copy's tests
	// must build under the same environment.
	cp := filepath.Join(tmp, "copy-"+strings.ReplaceAll(dir, "/", "-"))
	if err := os.CopyFS(cp, os.DirFS(modRoot)); err != nil {
		return row{}, err
	}
	if _, out, err := run(cp, e, "go", "test", "-run", "^$", pattern); err != nil {
		return row{}, fmt.Errorf("the tests do not build in a copy of the module, every mutant would count as KILLED:\n%s", out)
	}
	os.RemoveAll(cp)
	took, out, err := run(modRoot, e, "go", "test", pattern)
	if err != nil {
		return row{}, fmt.Errorf("the tests fail unmutated:\n%s", out)
	}
	if coef == 0 {
		// gremlins times its coverage run (about took) and gives each
		// mutant coef times that: twice the run plus 30 s to compile.
		coef = max(3, int(math.Ceil((2*took+30*time.Second).Seconds()/took.Seconds())))
	}
	report := filepath.Join(tmp, strings.ReplaceAll(dir, "/", "-")+".json")
	args := []string{"unleash", "--workers", fmt.Sprint(workers), "--timeout-coefficient", fmt.Sprint(coef), "-o", report}
	if dry {
		args = append(args, "--dry-run")
	}
	x, err := excluded(root, abs, o.only)
	if err != nil {
		return row{}, err
	}
	for _, x := range x {
		args = append(args, "-E", x)
	}
	fmt.Fprintf(os.Stderr, "mutate: %s: tests took %v uncached; gremlins %s (GOFLAGS=%q)\n", dir, took.Round(time.Millisecond), strings.Join(args, " "), goflags(e))
	cmd := exec.Command(bin, append(args, abs)...)
	cmd.Dir, cmd.Env = modRoot, e
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return row{}, fmt.Errorf("gremlins: %w", err)
	}
	if keep != "" {
		data, _ := os.ReadFile(report)
		_ = os.MkdirAll(keep, 0o755)
		_ = os.WriteFile(filepath.Join(keep, filepath.Base(report)), data, 0o644)
	}
	return tally(dir, report, eq)
}

func goflags(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			return v
		}
	}
	return ""
}

// alsoExcluded are packages below a measured directory that its tests do not
// test: state/statetest is the conformance suite every store's tests run.
var alsoExcluded = map[string][]string{"state": {"^statetest/"}}

// excluded returns the file patterns (relative to dir) gremlins must not
// mutate: modules of their own below dir, testdata and alsoExcluded.
func excluded(root, dir, only string) ([]string, error) {
	rel, _ := filepath.Rel(root, dir)
	x := append([]string{`(^|/)testdata/`}, alsoExcluded[filepath.ToSlash(rel)]...)
	if only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			return nil, err
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(dir, p)
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !re.MatchString(filepath.ToSlash(rel)) {
				x = append(x, "^"+regexp.QuoteMeta(filepath.ToSlash(rel))+"$")
			}
			return nil
		})
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				rel, _ := filepath.Rel(dir, p)
				x = append(x, "^"+filepath.ToSlash(rel)+"/")
				return filepath.SkipDir
			}
		}
		return nil
	})
	return x, nil
}

type report struct {
	Files []struct {
		Filename  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

func tally(dir, path string, eq map[string]bool) (row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return row{}, err
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return row{}, err
	}
	r := row{dir: dir}
	var lived []string
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				r.killed++
			case "LIVED":
				r.lived++
				key := fmt.Sprintf("%s/%s:%d:%d %s", dir, f.Filename, m.Line, m.Column, m.Type)
				if eq[key] {
					r.equivalent++
					key += " (equivalent)"
				}
				lived = append(lived, key)
			case "TIMED OUT":
				r.timedOut++
			case "NOT COVERED":
				r.notCovered++
			case "NOT VIABLE":
				r.notViable++
			}
		}
	}
	sort.Strings(lived)
	for _, l := range lived {
		fmt.Println("LIVED", l)
	}
	return r, nil
}

// readEquivalent reads "dir/file.go:line:col TYPE reason" lines.
func readEquivalent(path string) (map[string]bool, error) {
	eq := map[string]bool{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return eq, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		eq[fields[0]+" "+fields[1]] = true
	}
	return eq, s.Err()
}
