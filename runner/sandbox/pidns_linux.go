package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// initScript is the init of the namespaces confined commands run in. In
// its own mount namespace, made private first so nothing propagates back,
// it mounts a /proc of its PID namespace, so that a tool sees no process
// but the sandbox's (no /proc/PID/environ of the shell that started awl),
// and makes each argument (the working directory's .git) read-only. Then
// it waits, reaping the orphans the namespace's processes leave, until it
// is killed: with awl (its parent-death signal, SIGKILL) or when the
// sandbox is closed. The kernel kills every process of a PID namespace
// when its init dies, so nothing a tool started, double-forked or
// setsid'd, outlives awl.
const initScript = `set -e
mount --make-rprivate /
mount -t proc -o nosuid,nodev,noexec proc /proc
for d do mount --bind "$d" "$d"; mount -o remount,bind,ro "$d"; done
echo ready
sleep 2147483647 &
while :; do wait; done`

// nsInit is the init process of the PID and mount namespaces, started with
// the first confined command, and the descriptors of its namespaces, which
// the thread that starts each command joins.
type nsInit struct {
	readOnly []string // directories bind-mounted read-only
	once     sync.Once
	err      error
	proc     *os.Process
	mnt, pid int // namespace descriptors
}

// namespacesAvailable reports whether awl may make PID and mount
// namespaces and join them from a thread: it needs CAP_SYS_ADMIN (root;
// an unprivileged user namespace cannot be joined by one thread of a
// process), and the mount command.
func namespacesAvailable() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil || data[0].Effective&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return false
	}
	if _, err := os.Stat("/proc/self/ns/pid_for_children"); err != nil {
		return false
	}
	_, err := exec.LookPath("mount")
	return err == nil
}

// start starts the init, once; later calls return the first one's error.
func (n *nsInit) start() error {
	n.once.Do(func() { n.err = n.run() })
	return n.err
}

func (n *nsInit) run() error {
	cmd := exec.Command("sh", append([]string{"-c", initScript, "awl-sandbox-init"}, n.readOnly...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = "/"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		Setsid:     true,
		Pdeathsig:  syscall.SIGKILL,
	}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that started the
		// init ends: this one, locked and waiting until the init is killed.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start the namespaces' init: %w", err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		return fmt.Errorf("start the namespaces' init: %s", strings.TrimSpace(stderr.String()))
	}
	n.proc = cmd.Process
	pid := cmd.Process.Pid
	if n.mnt, err = unix.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		cmd.Process.Kill()
		return err
	}
	if n.pid, err = unix.Open(fmt.Sprintf("/proc/%d/ns/pid", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		unix.Close(n.mnt)
		cmd.Process.Kill()
		return err
	}
	return nil
}

// join moves the calling (locked) thread into the namespaces: the
// processes it starts run in them.
func (n *nsInit) join() error {
	if err := n.start(); err != nil {
		return err
	}
	// A thread shares its file system information with the others; it
	// must have its own to change mount namespace.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare(CLONE_FS): %w", err)
	}
	if err := unix.Setns(n.mnt, unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("setns(mount): %w", err)
	}
	if err := unix.Setns(n.pid, unix.CLONE_NEWPID); err != nil {
		return fmt.Errorf("setns(pid): %w", err)
	}
	return nil
}

// close kills the init, and with it every process left in the namespace.
func (n *nsInit) close() {
	if n.proc == nil {
		return
	}
	n.proc.Kill()
	unix.Close(n.mnt)
	unix.Close(n.pid)
	n.proc = nil
}
