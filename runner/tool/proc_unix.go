//go:build unix

package tool

import (
	"os"
	"os/exec"
	"syscall"
)

// isolate starts cmd in a new session, and so in a new process group whose id
// is its pid. The session has no controlling terminal: a program that opens
// /dev/tty to ask for a password fails at once instead of waiting for an
// answer (or being stopped by SIGTTIN) until the timeout. Where the system
// has one, the command also gets a parent-death signal (deathSignal).
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	deathSignal(cmd.SysProcAttr)
}

// killGroup kills the process group led by p: the command and everything it
// started, even after p itself has exited.
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// keepOwner gives f the owner and group st has, when the process may (as
// root, or for a group it belongs to); otherwise it leaves them.
func keepOwner(f *os.File, st os.FileInfo) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(s.Uid), int(s.Gid))
	}
}
