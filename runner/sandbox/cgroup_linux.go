package sandbox

import (
	"bufio"
	"bytes"
	"errors"
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
// (clone3 CLONE_INTO_CGROUP), awl-sandbox-PID-RANDOM under awl's. No
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
	dir   string
	fd    int // the directory, for CLONE_INTO_CGROUP
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
// writable to it, or the kernel has no cgroup.kill, Linux 5.14).
func newCgroup() *cgroup {
	parent := ownCgroup()
	if noCgroup || parent == "" || unix.Access(parent, unix.W_OK) != nil ||
		unix.Access(filepath.Join(parent, "cgroup.procs"), unix.W_OK) != nil {
		return nil
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
	return &cgroup{dir: dir, fd: fd}
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

// into makes cmd start in the cgroup, starting the watchdog first if it
// is not running yet. It runs on an unconfined thread: the watchdog must
// be outside the cgroup, and out of the confined commands' reach.
func (c *cgroup) into(cmd *exec.Cmd) {
	if c == nil {
		return
	}
	c.once.Do(c.startWatch)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = c.fd
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
	c.once.Do(func() {})
	if c.watch != nil {
		c.watch.Close()
	}
}
