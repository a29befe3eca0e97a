package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

// userFiles are the user module's programs; testdata keeps them out of the
// core module's packages (they import the connectors and the stores).
//
//go:embed testdata/user
var userFiles embed.FS

// userModule is the module modcheck makes outside the repository, as a user
// would: go mod init, go get of the modules, then build, test and run.
type userModule struct {
	Dir string
	Env []string
	Out io.Writer // where each command is echoed
}

// goCmd runs the go command in the user module and returns its output; an
// error carries the output, so the report shows what go said.
func (u *userModule) goCmd(ctx context.Context, args ...string) ([]byte, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = u.Dir
	cmd.Env = u.Env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	fmt.Fprintf(u.Out, "modcheck: go %s (%.1fs)\n", strings.Join(args, " "), time.Since(start).Seconds())
	if err != nil {
		return out.Bytes(), fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), u.Dir, err, out.Bytes())
	}
	return out.Bytes(), nil
}

// writeFiles copies the embedded programs into the module and pastes the
// README's examples: the topology of "Defining and running a topology" into
// readme/main.go and the complete test of "Testing a topology" into
// shipping/shipping_test.go.
func (u *userModule) writeFiles(readme []byte) error {
	err := fs.WalkDir(userFiles, "testdata/user", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := userFiles.ReadFile(name)
		if err != nil {
			return err
		}
		dst := filepath.Join(u.Dir, filepath.FromSlash(strings.TrimPrefix(name, "testdata/user/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return err
	}
	topology, err := codeBlock(readme, "## Defining and running a topology", "")
	if err != nil {
		return err
	}
	main := filepath.Join(u.Dir, "readme", "main.go")
	scaffold, err := os.ReadFile(main)
	if err != nil {
		return err
	}
	types, body := splitTypes(topology)
	scaffold = bytes.Replace(scaffold, []byte("//modcheck:types\n"), []byte(types), 1)
	scaffold = bytes.Replace(scaffold, []byte("\t//modcheck:body\n"), []byte(indent(body)), 1)
	if err := os.WriteFile(main, scaffold, 0o644); err != nil {
		return err
	}
	shipping, err := codeBlock(readme, "## Testing a topology", "package ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(u.Dir, "shipping"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(u.Dir, "shipping", "shipping_test.go"), []byte(shipping), 0o644)
}

// codeBlock returns the first ```go block after the heading whose first line
// starts with prefix.
func codeBlock(readme []byte, heading, prefix string) (string, error) {
	_, after, ok := strings.Cut(string(readme), "\n"+heading+"\n")
	if !ok {
		return "", fmt.Errorf("README.md: no heading %q", heading)
	}
	for {
		var block string
		_, block, ok = strings.Cut(after, "\n```go\n")
		if !ok {
			return "", fmt.Errorf("README.md: no go block starting with %q under %q", prefix, heading)
		}
		code, rest, ok := strings.Cut(block, "\n```\n")
		if !ok {
			return "", fmt.Errorf("README.md: a go block under %q is not closed", heading)
		}
		if strings.HasPrefix(code, prefix) {
			return code + "\n", nil
		}
		after = rest
	}
}

// splitTypes separates the type declarations that open a snippet from the
// statements after them.
func splitTypes(code string) (types, body string) {
	var t, b strings.Builder
	inTypes := true
	sc := bufio.NewScanner(strings.NewReader(code))
	for sc.Scan() {
		line := sc.Text()
		if inTypes && (strings.HasPrefix(line, "type ") || strings.TrimSpace(line) == "") {
			t.WriteString(line + "\n")
			continue
		}
		inTypes = false
		b.WriteString(line + "\n")
	}
	return t.String(), b.String()
}

func indent(code string) string {
	lines := strings.SplitAfter(code, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = "\t" + l
		}
	}
	return strings.Join(lines, "")
}

// coreFrom makes a module that requires get (module@version) alone and
// checks that it selects the core at version: so the core is what the
// module's own requirement names, as for a user who adds only that connector.
// In a module that also requires the core directly, a wrong requirement would
// not show: the graph is pruned, the highest requirement wins and the wrong
// version's go.mod is never read.
func (u *userModule) coreFrom(ctx context.Context, get, core, version string) error {
	if err := os.MkdirAll(u.Dir, 0o755); err != nil {
		return err
	}
	if _, err := u.goCmd(ctx, "mod", "init", "example.com/alone"); err != nil {
		return err
	}
	if _, err := u.goCmd(ctx, "get", get); err != nil {
		return err
	}
	out, err := u.goCmd(ctx, "list", "-m", "-f", "{{.Version}}", core)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(out)); got != version {
		return fmt.Errorf("a module requiring only %s gets %s at %s, not %s", get, core, got, version)
	}
	return nil
}

// listed is what go list -m -json says of a module of the build.
type listed struct {
	Path    string
	Version string
	Dir     string
	Replace *struct{ Path, Version string }
}

// verify checks that the user module took every module of the repository
// from the proxy at version: no replace in its go.mod, each selected at
// version, extracted into the check's own module cache, with the hash of the
// zip modcheck packed.
func (u *userModule) verify(ctx context.Context, want []packed, version, modcache string) error {
	data, err := os.ReadFile(filepath.Join(u.Dir, "go.mod"))
	if err != nil {
		return err
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return err
	}
	var errs []error
	if len(f.Replace) > 0 {
		errs = append(errs, fmt.Errorf("the user module's go.mod has a replace"))
	}
	sums, err := os.ReadFile(filepath.Join(u.Dir, "go.sum"))
	if err != nil {
		return err
	}
	out, err := u.goCmd(ctx, "list", "-m", "-json", "all")
	if err != nil {
		return err
	}
	got := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m listed
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("reading go list -m -json all: %w", err)
		}
		got[m.Path] = m
	}
	for _, p := range want {
		m, ok := got[p.Path]
		if !ok {
			continue // a sample or the bench: nothing of theirs is imported
		}
		switch {
		case m.Replace != nil:
			errs = append(errs, fmt.Errorf("%s is replaced by %s %s", p.Path, m.Replace.Path, m.Replace.Version))
		case m.Version != version:
			errs = append(errs, fmt.Errorf("%s was selected at %s, not %s", p.Path, m.Version, version))
		case !strings.HasPrefix(m.Dir, modcache+string(filepath.Separator)):
			errs = append(errs, fmt.Errorf("%s came from %s, not from the check's module cache", p.Path, m.Dir))
		case !bytes.Contains(sums, []byte(fmt.Sprintf("%s %s %s\n", p.Path, version, p.Sum))):
			errs = append(errs, fmt.Errorf("%s %s: go.sum does not record the packed zip's hash %s", p.Path, version, p.Sum))
		}
	}
	return errors.Join(errs...)
}
