//go:build unix && !linux

package multilang

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the child in a process group of its own, so signals
// reach its whole process tree.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the child's process group, or the child alone if the
// group is gone.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if syscall.Kill(-p.Pid, sig) != nil {
		_ = p.Signal(sig)
	}
}
