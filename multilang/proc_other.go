//go:build !unix

package multilang

import (
	"os"
	"os/exec"
	"syscall"
)

func ownProcessGroup(*exec.Cmd) {}

// signalGroup kills the child: without Unix signals there is no gentler way.
func signalGroup(p *os.Process, _ syscall.Signal) { _ = p.Kill() }

// killGroup does nothing: without process groups only the child was started.
func killGroup(int) {}
