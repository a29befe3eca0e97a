package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// workModule is one module of the workspace: its directory (relative to the
// repository root, with slashes) and its parsed go.mod.
type workModule struct {
	Dir  string
	Path string
	File *modfile.File
}

// workspace is the repository as go.work describes it.
type workspace struct {
	Root    string
	Work    *modfile.WorkFile
	Modules []workModule
}

// loadWorkspace reads root/go.work and the go.mod of every module it uses.
func loadWorkspace(root string) (*workspace, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading the workspace: %w", err)
	}
	work, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	ws := &workspace{Root: root, Work: work}
	for _, use := range work.Use {
		dir := path.Clean(filepath.ToSlash(use.Path))
		gomod := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, fmt.Errorf("module %q of go.work: %w", dir, err)
		}
		f, err := modfile.Parse(gomod, data, nil)
		if err != nil {
			return nil, fmt.Errorf("module %q of go.work: %w", dir, err)
		}
		if f.Module == nil {
			return nil, fmt.Errorf("module %q of go.work: %s has no module line", dir, gomod)
		}
		ws.Modules = append(ws.Modules, workModule{Dir: dir, Path: f.Module.Mod.Path, File: f})
	}
	if len(ws.Modules) == 0 {
		return nil, fmt.Errorf("%s uses no module", name)
	}
	return ws, nil
}

// paths maps each workspace module's path to its directory.
func (ws *workspace) paths() map[string]string {
	m := make(map[string]string, len(ws.Modules))
	for _, mod := range ws.Modules {
		m[mod.Path] = mod.Dir
	}
	return m
}

// core is the path of the module at the repository's root.
func (ws *workspace) core() (string, error) {
	for _, mod := range ws.Modules {
		if mod.Dir == "." {
			return mod.Path, nil
		}
	}
	return "", errors.New("go.work does not use the repository's root module")
}

// minorGo is a go line that names a language version or the first release of
// one (go 1.26, go 1.26.0): any release of that minor builds the module. A
// dependency whose go line says 1.26.0 makes go mod tidy write 1.26.0, as
// 1.26 sorts before 1.26.0 (it also admits the release candidates).
var minorGo = regexp.MustCompile(`^1\.[0-9]+(\.0)?$`)

// lint checks what makes the modules requirable by a user: no module has a
// replace (Go ignores a dependency's replace, so a user's build would not
// see it), every go line names a minor version, every requirement on a
// module of the workspace names the one release version, and go.work maps
// that version of each required module to its directory. version may be
// empty: it is then the version the modules require of each other. It
// returns that version and every problem found, joined.
func lint(ws *workspace, version string) (string, error) {
	var errs []error
	local := ws.paths()
	versions := map[string][]string{} // version -> "module requires path" lines
	required := map[string]bool{}     // workspace modules some module requires
	for _, mod := range ws.Modules {
		for _, r := range mod.File.Replace {
			errs = append(errs, fmt.Errorf("%s/go.mod: replace %s: a user's build ignores it; the workspace (go.work) is where the tree replaces a module", mod.Dir, r.Old.Path))
		}
		if mod.File.Go == nil {
			errs = append(errs, fmt.Errorf("%s/go.mod: no go line", mod.Dir))
		} else if v := mod.File.Go.Version; !minorGo.MatchString(v) {
			errs = append(errs, fmt.Errorf("%s/go.mod: go %s names a patch release or a pre-release: name the minor (go 1.N, or go 1.N.0 when a dependency's go line forces it)", mod.Dir, v))
		}
		for _, r := range mod.File.Require {
			if _, ok := local[r.Mod.Path]; !ok {
				continue
			}
			required[r.Mod.Path] = true
			versions[r.Mod.Version] = append(versions[r.Mod.Version], fmt.Sprintf("%s requires %s %s", mod.Dir, r.Mod.Path, r.Mod.Version))
		}
	}
	if version == "" {
		version = majority(versions)
	}
	if version == "" {
		errs = append(errs, errors.New("no module requires another module of the workspace: no release version to check"))
	}
	for v, lines := range versions {
		if v == version {
			continue
		}
		for _, line := range lines {
			errs = append(errs, fmt.Errorf("%s: the modules are released together, so it must be %s", line, version))
		}
	}
	errs = append(errs, lintWorkReplaces(ws, version, required)...)
	return version, errors.Join(errs...)
}

// lintWorkReplaces checks that go.work replaces exactly the release version
// of every required workspace module by its directory, and nothing else: a
// module of the workspace is not chosen at every version of it, so without
// those lines the workspace would fetch the release version it requires.
func lintWorkReplaces(ws *workspace, version string, required map[string]bool) []error {
	var errs []error
	local := ws.paths()
	seen := map[string]bool{}
	for _, r := range ws.Work.Replace {
		dir, ok := local[r.Old.Path]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("go.work: replace %s: not a module of the workspace", r.Old.Path))
		case r.Old.Version == "":
			errs = append(errs, fmt.Errorf("go.work: replace %s => %s replaces every version: replace the release version %s only", r.Old.Path, r.New.Path, version))
		case r.Old.Version != version:
			errs = append(errs, fmt.Errorf("go.work: replace %s %s: the release version is %s", r.Old.Path, r.Old.Version, version))
		case r.New.Version != "" || path.Clean(filepath.ToSlash(r.New.Path)) != dir:
			errs = append(errs, fmt.Errorf("go.work: replace %s %s => %s: the module's directory is ./%s", r.Old.Path, r.Old.Version, r.New.Path, dir))
		default:
			seen[r.Old.Path] = true
		}
	}
	missing := make([]string, 0, len(required))
	for p := range required {
		if !seen[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		errs = append(errs, fmt.Errorf("go.work: no replace %s %s => ./%s: the workspace would fetch that version instead of using the tree", p, version, local[p]))
	}
	return errs
}

// majority is the version most requirements name (the smallest on a tie),
// so that the report names the odd ones out.
func majority(versions map[string][]string) string {
	best := ""
	for v, lines := range versions {
		if len(lines) > len(versions[best]) || (len(lines) == len(versions[best]) && strings.Compare(v, best) < 0) {
			best = v
		}
	}
	return best
}
