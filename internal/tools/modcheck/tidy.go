package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tidyAll runs go mod tidy in every module of the workspace, as a user's
// build would resolve it: the modules of the repository come from a proxy
// packed from the working tree at the release version. go.mod ends as tidy
// leaves it; go.sum loses the lines of the repository's own modules.
func tidyAll(ctx context.Context, root, version string, keep bool) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	ws, err := loadWorkspace(root)
	if err != nil {
		return err
	}
	// The go lines may be what tidy is asked to fix: only the version is needed.
	if version, err = lint(ws, version); version == "" {
		return err
	}
	tmp, err := os.MkdirTemp("", "modcheck-tidy-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("modcheck: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	proxy := filepath.Join(tmp, "proxy")
	if _, err := pack(ws, version, proxy); err != nil {
		return err
	}
	core, err := ws.core()
	if err != nil {
		return err
	}
	env, err := userEnv(ctx, proxy, filepath.Join(tmp, "modcache"), core)
	if err != nil {
		return err
	}
	local := ws.paths()
	var errs []error
	for _, mod := range ws.Modules {
		dir := filepath.Join(root, filepath.FromSlash(mod.Dir))
		u := &userModule{Dir: dir, Env: env, Out: os.Stdout}
		if _, err := u.goCmd(ctx, "mod", "tidy"); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := dropSums(filepath.Join(dir, "go.sum"), local); err != nil {
			errs = append(errs, fmt.Errorf("module %s: %w", mod.Dir, err))
		}
	}
	return errors.Join(errs...)
}

// dropSums removes from a go.sum the lines of the given modules.
func dropSums(name string, modules map[string]string) error {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		path, _, _ := strings.Cut(line, " ")
		if _, ours := modules[path]; !ours {
			kept.WriteString(line)
		}
	}
	return os.WriteFile(name, kept.Bytes(), 0o644)
}
