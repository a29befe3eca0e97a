package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// packed is a module written to the file proxy, with the h1: hash of its zip
// as go.sum will record it.
type packed struct {
	Path string
	Dir  string
	Size int64
	Sum  string
}

// pack writes every module of the workspace at version into a module proxy
// laid out as GOPROXY=file://dir expects: <escaped path>/@v/list, and
// <version>.info, .mod and .zip. The zip is made from the working tree as the
// module proxy makes it from a tag (nested modules, VCS directories and
// vendor/ left out), so uncommitted changes are checked too.
func pack(ws *workspace, version, dir string) ([]packed, error) {
	var out []packed
	for _, mod := range ws.Modules {
		p, err := packOne(ws.Root, mod, version, dir)
		if err != nil {
			return nil, fmt.Errorf("packing module %s (%s) at %s: %w", mod.Path, mod.Dir, version, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func packOne(root string, mod workModule, version, dir string) (packed, error) {
	esc, err := module.EscapePath(mod.Path)
	if err != nil {
		return packed{}, err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return packed{}, err
	}
	src := filepath.Join(root, filepath.FromSlash(mod.Dir))
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return packed{}, err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return packed{}, err
	}
	files := map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return packed{}, err
		}
	}
	zipName := filepath.Join(vdir, version+".zip")
	z, err := os.Create(zipName)
	if err != nil {
		return packed{}, err
	}
	err = modzip.CreateFromDir(z, module.Version{Path: mod.Path, Version: version}, src)
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return packed{}, err
	}
	st, err := os.Stat(zipName)
	if err != nil {
		return packed{}, err
	}
	sum, err := dirhash.HashZip(zipName, dirhash.Hash1)
	if err != nil {
		return packed{}, err
	}
	return packed{Path: mod.Path, Dir: mod.Dir, Size: st.Size(), Sum: sum}, nil
}
