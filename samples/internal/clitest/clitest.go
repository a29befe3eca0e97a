// Package clitest holds what the samples' tests share to check a run's
// output: its standard output captured, and its last line. The samples
// print their summary last, whatever ends the run, and the tests read it.
package clitest

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// Stdout returns what f wrote to os.Stdout. It swaps os.Stdout for a pipe
// while f runs, so tests that use it must not run in parallel.
func Stdout(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		_ = r.Close()
		read <- b.String()
	}()
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	f()
	_ = w.Close()
	return <-read
}

// LastLine returns the last line of s, ignoring trailing newlines.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
