//go:build unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
)

// isolate starts cmd in its own session and process group, with no
// controlling terminal, and (on Linux) killed by the kernel if awl dies
// without stopping it.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	deathSignal(cmd.SysProcAttr)
}

// terminateGroup asks the process group led by p to stop (SIGTERM).
func terminateGroup(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGTERM)
}

// killGroup kills what is left of the process group led by p.
func killGroup(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGKILL)
}
