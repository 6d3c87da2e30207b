package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/internal/watchdog"
)

// Where awl cannot make a PID namespace (not root) but may write the
// cgroup v2 directory it runs in (a delegated one: systemd gives each
// user's session one), confined commands start in a cgroup of their own
// (stopped at their exec until awl has moved them in: see into),
// awl-sandbox-PID-RANDOM under awl's. No
// process leaves it without writing a cgroup.procs file, which Landlock
// refuses to a confined command, so everything a tool started, setsid'd or
// double-forked, is in it. It is killed whole (cgroup.kill) and removed
// when the run ends; when awl dies, SIGKILL included, by a watchdog sh
// outside it that reads a pipe whose other end only awl holds; and should
// the watchdog be gone too, by the next awl that makes a sandbox, which
// kills and removes the cgroups of awls no longer running.

// cgroupWatch is the watchdog: at the end of its stdin (awl exited, the
// pipe closed) it kills the cgroup $1 and removes it, unless awl has.
const cgroupWatch = `read _
[ -d "$1" ] || exit 0
echo 1 > "$1/cgroup.kill"
i=0
while [ -d "$1" ] && ! rmdir "$1" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done`

// cgroup is the cgroup confined commands start in.
type cgroup struct {
	dir string
	fd  int // the directory
	// procs is its cgroup.procs, opened for writing before any thread
	// was confined: the launcher moves each command in through it
	// (Landlock checks a file when it is opened, and would refuse a
	// confined thread the open).
	procs int
	once  sync.Once
	watch *os.File // the write end of the watchdog's stdin
}

// noCgroup makes New leave the cgroup out, as for a user whose cgroup is
// not delegated (tests).
var noCgroup bool

// ownCgroup returns the cgroup v2 directory awl runs in, "" when there is
// none (no cgroup v2 mounted, or awl's cgroup is outside the mount).
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var rel string
	found := false
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("0::")); ok {
			rel, found = string(bytes.TrimSpace(v)), true
		}
	}
	if !found || !strings.HasPrefix(rel, "/") {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		if root != "/" && rel != root && !strings.HasPrefix(rel, root+"/") {
			continue
		}
		if root != "/" {
			rel = strings.TrimPrefix(rel, root)
		}
		return filepath.Join(mnt, rel)
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// newCgroup makes the commands' cgroup under awl's own, after removing
// those of awls that are gone; nil when awl may not (its cgroup is not
// writable to it, or the kernel has no cgroup.kill, Linux 5.14), or
// cannot hold a command stopped until it is in the cgroup: Yama's
// ptrace_scope 2 or 3 refuses PTRACE_TRACEME (see into).
func newCgroup() *cgroup {
	parent := ownCgroup()
	if noCgroup || parent == "" || unix.Access(parent, unix.W_OK) != nil ||
		unix.Access(filepath.Join(parent, "cgroup.procs"), unix.W_OK) != nil {
		return nil
	}
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		if v := strings.TrimSpace(string(b)); v != "0" && v != "1" {
			return nil
		}
	}
	removeStaleCgroups(parent)
	dir, err := os.MkdirTemp(parent, "awl-sandbox-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		unix.Rmdir(dir)
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Rmdir(dir)
		return nil
	}
	procs, err := unix.Openat(fd, "cgroup.procs", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		unix.Rmdir(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd, procs: procs}
}

// removeStaleCgroups kills and removes the commands' cgroups under parent
// whose awl is no longer running (it and its watchdog were killed).
func removeStaleCgroups(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "awl-sandbox-*-*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "awl-sandbox-"), "-")
		if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 && pid != os.Getpid() && !processAlive(pid) {
			killCgroup(d)
		}
	}
}

// killCgroup kills every process in the cgroup dir and removes it, waiting
// (at most 2 s) for the processes to be gone.
func killCgroup(dir string) {
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	for range 200 {
		if err := unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// into makes cmd start stopped, for the launcher to move it into the
// cgroup before it runs (moveTraced), and starts the watchdog first if it
// is not running yet; it returns the descriptor of the cgroup's
// cgroup.procs, -1 without a cgroup. It runs on an unconfined thread:
// the watchdog must be outside the cgroup, and out of the confined
// commands' reach.
//
// clone3 with CLONE_INTO_CGROUP would start the command in the cgroup
// at once, but the launcher's filter would then have to allow clone3,
// and the command inherits that filter: clone3's flags lie in memory a
// filter cannot read, so the command could make a user namespace with it
// (CLONE_NEWUSER) and hold every capability there. So the command is
// started with PTRACE_TRACEME instead: it stops at its exec, before its
// first instruction, the launcher moves it into the cgroup and lets it
// go. Should awl die in between, the command's parent-death signal
// kills it.
func (c *cgroup) into(cmd *exec.Cmd) int {
	if c == nil {
		return -1
	}
	c.once.Do(c.startWatch)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return c.procs
}

// siginfo's si_code for a child that stopped under ptrace, or stopped.
const (
	cldTrapped = 4
	cldStopped = 5
)

// moveTraced waits until pid, started by the calling (locked) thread with
// PTRACE_TRACEME, stops at its exec, writes it to procs (a cgroup's
// cgroup.procs) and lets it run, no longer traced. A pid that exited
// first (killed) is left to its waiter.
func moveTraced(pid, procs int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT|unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if info.Code != cldTrapped && info.Code != cldStopped {
		return nil // it exited
	}
	if _, err := unix.Write(procs, []byte(strconv.Itoa(pid))); err != nil {
		return fmt.Errorf("move the command into its cgroup: %w", err)
	}
	return unix.PtraceDetach(pid)
}

// startWatch starts the watchdog, in a session of its own so that a
// signal to awl's process group spares it. Landlock's signal scope keeps
// confined commands from killing it (ABI 6); where they could, the next
// awl removes what is left.
func (c *cgroup) startWatch() {
	w, err := watchdog.Start(cgroupWatch, "awl-sandbox-watch", c.dir)
	if err != nil {
		return
	}
	c.watch = w
}

// close kills what is left in the cgroup, removes it and lets the watchdog
// go.
func (c *cgroup) close() {
	if c == nil {
		return
	}
	killCgroup(c.dir)
	unix.Close(c.fd)
	unix.Close(c.procs)
	c.once.Do(func() {})
	if c.watch != nil {
		c.watch.Close()
	}
}
