// Command modcheck proves that a user can require goshelter's modules: it
// checks the go.mod files (no replace, go lines that name a minor version,
// the modules requiring each other at one release version, go.work mapping
// that version to the tree), packs every module of the workspace from the
// working tree into a file-based module proxy at that version, checks that a
// module requiring only one connector or store gets the core at that version
// too, then makes a module outside the repository that requires the core,
// both connectors and both stores through that proxy only (GOWORK=off, no
// replace), builds it,
// runs README's shipping test and its topology, and a program that runs
// connectors/kafka against franz-go's in-process broker and uses
// connectors/jetstream, state/pebble and state/redis. Third-party modules
// come from the local module cache or the usual proxy.
//
//	go run ./internal/tools/modcheck            # from the repository root
//	go run ./internal/tools/modcheck -keep      # leave the proxy and the user module behind
//	go run ./internal/tools/modcheck -tidy      # go mod tidy every module against the packed proxy
//
// -tidy is how a module is tidied while the version it requires of the
// others is not released yet (go mod tidy ignores go.work): it runs go mod
// tidy in each module with the packed proxy, then takes the lines of
// goshelter's own modules out of go.sum, since they hash the working tree and
// not the release.
//
// docs/RELEASING.md says how the version moves at a release.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// published are the modules a user requires, relative to the core's path
// ("" is the core): README must have a go get line for each.
var published = []string{"", "connectors/kafka", "connectors/jetstream", "state/pebble", "state/redis"}

// goGet is a go get line of README for one of the repository's modules.
var goGet = regexp.MustCompile(`(?m)^\s*go get (\S+@\S+)`)

// readmeGets returns the arguments of README's go get lines, the core's
// first, and checks that there is one for each published module.
func readmeGets(readme []byte, core string) ([]string, error) {
	found := map[string]string{}
	for _, m := range goGet.FindAllSubmatch(readme, -1) {
		arg := string(m[1])
		p, _, _ := strings.Cut(arg, "@")
		found[p] = arg
	}
	var gets []string
	var errs []error
	for _, rel := range published {
		p := strings.TrimSuffix(core+"/"+rel, "/")
		if arg, ok := found[p]; ok {
			gets = append(gets, arg)
		} else {
			errs = append(errs, fmt.Errorf("README.md has no go get line for %s", p))
		}
	}
	return gets, errors.Join(errs...)
}

// programs are the user module's commands and the line each must print.
var programs = []struct {
	name string
	want *regexp.Regexp
}{
	{"readme", regexp.MustCompile(`(?m)^readme: acked=1000$`)},
	{"connectors", regexp.MustCompile(`(?m)^kafka: in=100 out=100\njetstream: built uppercase\npebble: committed=7\nredis: store \*redis.Store$`)},
}

func main() {
	root := flag.String("root", ".", "the repository's root, where go.work is")
	version := flag.String("version", "", "the release version to check (default: the one the modules require of each other)")
	keep := flag.Bool("keep", false, "keep the proxy, the user module and its module cache, and print where")
	tidy := flag.Bool("tidy", false, "instead of the check, go mod tidy every module against the packed proxy")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long (a cold build cache compiles every dependency)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	do := run
	if *tidy {
		do = tidyAll
	}
	if err := do(ctx, *root, *version, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "modcheck:", err)
		os.Exit(1)
	}
	fmt.Printf("modcheck: ok in %.0fs\n", time.Since(start).Seconds())
}

func run(ctx context.Context, root, version string, keep bool) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	ws, err := loadWorkspace(root)
	if err != nil {
		return err
	}
	if version, err = lint(ws, version); err != nil {
		return fmt.Errorf("the modules cannot be required as they are:\n%w", err)
	}
	if !semver.IsValid(version) || semver.Build(version) != "" {
		return fmt.Errorf("release version %q is not a module version", version)
	}
	local := ws.paths()
	core, err := ws.core()
	if err != nil {
		return err
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return err
	}
	gets, err := readmeGets(readme, core)
	if err != nil {
		return err
	}
	for _, get := range gets {
		if p, _, _ := strings.Cut(get, "@"); local[p] == "" {
			return fmt.Errorf("README.md: go get %s: the module is not in go.work", get)
		}
	}
	fmt.Printf("modcheck: %d modules, released together at %s\n", len(ws.Modules), version)

	tmp, err := os.MkdirTemp("", "modcheck-")
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(root, tmp); err == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("the temporary directory %s is inside the repository: set TMPDIR elsewhere", tmp)
	}
	if keep {
		fmt.Println("modcheck: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp) // the cache is writable (-modcacherw)
	}
	proxy := filepath.Join(tmp, "proxy")
	mods, err := pack(ws, version, proxy)
	if err != nil {
		return err
	}
	for _, m := range mods {
		fmt.Printf("modcheck: packed %s@%s (%d kB) %s\n", m.Path, version, m.Size/1024, m.Sum)
	}

	modcache := filepath.Join(tmp, "modcache")
	env, err := userEnv(ctx, proxy, modcache, core)
	if err != nil {
		return err
	}
	u := &userModule{Dir: filepath.Join(tmp, "user"), Env: env, Out: os.Stdout}
	if err := os.MkdirAll(u.Dir, 0o755); err != nil {
		return err
	}
	if _, err := u.goCmd(ctx, "mod", "init", "example.com/shelteruser"); err != nil {
		return err
	}
	if err := u.writeFiles(readme); err != nil {
		return fmt.Errorf("writing the user module: %w", err)
	}
	for i, get := range gets[1:] {
		alone := &userModule{Dir: filepath.Join(tmp, fmt.Sprint("alone", i)), Env: env, Out: os.Stdout}
		if err := alone.coreFrom(ctx, get, core, version); err != nil {
			return err
		}
	}
	steps := [][]string{
		append([]string{"get"}, gets...),
		{"mod", "tidy"},
		{"vet", "./..."},
		{"build", "-o", filepath.Join(tmp, "bin") + string(filepath.Separator), "./..."},
		{"test", "-count=1", "./..."},
	}
	for _, args := range steps {
		out, err := u.goCmd(ctx, args...)
		if err != nil {
			return err
		}
		if args[0] == "test" { // which packages' tests ran
			fmt.Print(string(out))
		}
	}
	if err := u.verify(ctx, mods, version, modcache); err != nil {
		return fmt.Errorf("the user module did not take the modules from the proxy:\n%w", err)
	}
	for _, p := range programs {
		if err := runProgram(ctx, filepath.Join(tmp, "bin", p.name), p.want); err != nil {
			return err
		}
	}
	return nil
}

// userEnv is the environment of a user outside the repository: no
// workspace, go.mod updated as needed, the packed proxy first, then the
// local module cache and the usual proxy for third-party modules, a module
// cache of the check's own (so nothing of an earlier run or of the workspace
// is found there), and no checksum database for goshelter's modules, whose
// test zips the public database cannot know.
func userEnv(ctx context.Context, proxy, modcache, core string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOPROXY", "GOMODCACHE", "GONOSUMDB").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(vals) != 3 {
		return nil, fmt.Errorf("go env printed %q", out)
	}
	upstream, shared, nosumdb := vals[0], vals[1], vals[2]
	proxies := []string{"file://" + filepath.ToSlash(proxy)}
	if shared != "" {
		proxies = append(proxies, "file://"+filepath.ToSlash(filepath.Join(shared, "cache", "download")))
	}
	if upstream != "" && upstream != "off" {
		proxies = append(proxies, upstream)
	}
	if nosumdb != "" {
		nosumdb += ","
	}
	set := map[string]string{
		"GOWORK":      "off",
		"GOFLAGS":     "-mod=mod -modcacherw -trimpath",
		"GOPROXY":     strings.Join(proxies, ","),
		"GOMODCACHE":  modcache,
		"GONOSUMDB":   nosumdb + core,
		"GOPRIVATE":   "",
		"GONOPROXY":   "",
		"GOTOOLCHAIN": "local",
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !isSet(set, k) {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env, nil
}

func isSet(set map[string]string, k string) bool { _, ok := set[k]; return ok }

// runProgram runs one of the user module's commands and checks its output.
func runProgram(ctx context.Context, bin string, want *regexp.Regexp) error {
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	name := filepath.Base(bin)
	fmt.Printf("modcheck: ran %s (%.1fs)\n", name, time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("the user's %s: %w\n%s", name, err, tail(out, 40))
	}
	if !want.Match(out) {
		return errors.New("the user's " + name + " did not print " + want.String() + ":\n" + string(tail(out, 40)))
	}
	for _, line := range want.FindAll(out, -1) {
		fmt.Printf("modcheck: %s says %s\n", name, strings.ReplaceAll(string(line), "\n", "; "))
	}
	return nil
}

// tail keeps the last n lines of out.
func tail(out []byte, n int) []byte {
	lines := strings.SplitAfter(string(out), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return []byte(strings.Join(lines, ""))
}
