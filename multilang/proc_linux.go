package multilang

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the child in a process group of its own, so signals
// reach its whole process tree, and has the kernel kill it if the host dies.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup signals the child's process group, or the child alone if the
// group is gone.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if syscall.Kill(-p.Pid, sig) != nil {
		_ = p.Signal(sig)
	}
}

// killGroup kills what is left of the process group of a child that has been
// reaped: the processes it started. Its id cannot have been reused while any
// of them lives; if none does, the call fails harmlessly.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
