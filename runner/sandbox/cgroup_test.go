//go:build linux

package sandbox_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/sandbox"
)

// The uid of the awl in the delegated cgroup: nobody.
const cgroupUID = 65534

// An awl that is not root, in a cgroup v2 delegated to its user (as
// systemd gives each user's session), starts confined commands in a
// cgroup of their own: what a tool setsid'd or double-forked dies with a
// SIGKILLed awl (its watchdog kills the cgroup), and, when the watchdog
// was killed as well, with the next awl that makes a sandbox there.
// Root sets the delegation up; the awls run as uid 65534.
func TestNoProcessOutlivesAKilledAwlInItsCgroup(t *testing.T) {
	d := newDelegated(t)
	start, deleg := func(command string) *exec.Cmd {
		t.Helper()
		cmd, _ := d.start(t, command)
		return cmd
	}, d.deleg
	commandsCgroup := func() string {
		t.Helper()
		dirs, _ := filepath.Glob(filepath.Join(deleg, "awl-sandbox-*-*"))
		if len(dirs) != 1 {
			t.Fatalf("the commands' cgroups under %s: %q, want one", deleg, dirs)
		}
		return dirs[0]
	}

	// SIGKILL: the watchdog kills the cgroup, and removes it.
	tag := fmt.Sprintf("awl-cgroup-%d", os.Getpid())
	awl := start(marked(tag + "-k"))
	waitAlive(t, tag+"-k", 3)
	cg := commandsCgroup()
	awl.Process.Kill()
	awl.Wait()
	waitGone(t, tag+"-k", "a SIGKILLed awl in a delegated cgroup")
	waitNoDir(t, cg)

	// The watchdog killed too (`kill -9 -1` would): the next awl that
	// makes a sandbox there kills and removes the cgroup left.
	awl = start(marked(tag + "-w"))
	waitAlive(t, tag+"-w", 3)
	cg = commandsCgroup()
	watch := alive("sh\x00-c\x00")
	killed := 0
	for _, p := range watch {
		if strings.Contains(p, "awl-sandbox-watch "+cg) {
			var pid int
			fmt.Sscan(p, &pid)
			syscall.Kill(pid, syscall.SIGKILL)
			killed++
		}
	}
	if killed != 1 {
		t.Fatalf("watchdogs of %s: %q, want one", cg, watch)
	}
	awl.Process.Kill()
	awl.Wait()
	if n := len(alive(tag + "-w")); n != 3 {
		t.Fatalf("%d processes left by an awl killed with its watchdog, want the 3 the next awl ends", n)
	}
	start("true")
	waitGone(t, tag+"-w", "an awl killed with its watchdog, once the next awl started")
	waitNoDir(t, cg)
}

// Where commands start in a cgroup of awl's (not root, no user
// namespaces, a delegated cgroup), clone3 is refused too (ENOSYS, so
// that libc falls back to clone, whose flags the filter reads): it once
// stayed allowed there, since awl started commands into the cgroup with
// clone3 from a thread whose filter the commands inherit, and a command
// could make a user namespace with it. The command is still in the
// commands' cgroup, and threads still start.
func TestClone3RefusedInCgroup(t *testing.T) {
	d := newDelegated(t)
	if out := runProbe("sys", fmt.Sprintf("%d,0,0", unix.SYS_CLONE3)); strings.Contains(out, "function not implemented") || !strings.Contains(out, "probe") {
		t.Fatalf("unconfined, clone3 does not reach the kernel: the test would prove nothing:\n%s", out)
	}
	probe := fmt.Sprintf("AWL_PROBE=sys:%d,0,0 %q", unix.SYS_CLONE3, d.exe)
	_, out := d.start(t, probe+"; grep -c awl-sandbox- /proc/self/cgroup; sh -c 'echo child'")
	if !strings.Contains(out, "probe failed: function not implemented") {
		t.Errorf("clone3 in a command started into the cgroup: want ENOSYS:\n%s", out)
	}
	if !strings.Contains(out, "\n1\nchild") {
		t.Errorf("the command is not in the commands' cgroup, or could not fork:\n%s", out)
	}
	if _, err := exec.LookPath("xz"); err == nil {
		_, out := d.start(t, "head -c 4000000 /dev/zero | xz -T2 --block-size=1MiB -1 -c | xz -d | wc -c")
		if !strings.Contains(out, "4000000") {
			t.Errorf("xz with two threads in the cgroup:\n%s", out)
		}
	}
}

// delegated is a cgroup v2 that root delegated to uid 65534, as systemd
// delegates one to each user's session, and a copy of the test binary
// and a workspace that user may use.
type delegated struct {
	deleg string
	cgfd  int
	root  string
	exe   string
}

// newDelegated makes one; it skips unless root.
func newDelegated(t *testing.T) *delegated {
	t.Helper()
	requireABI(t, sandbox.ABINetwork)
	if os.Geteuid() != 0 {
		t.Skip("delegating a cgroup to another user needs root")
	}
	own := sandbox.OwnCgroup()
	if own == "" {
		testenv.Require(t, "no cgroup v2 is mounted")
	}
	deleg := filepath.Join(own, fmt.Sprintf("awl-test-%d", os.Getpid()))
	if err := os.Mkdir(deleg, 0o755); err != nil {
		testenv.Require(t, "cannot make a cgroup to delegate: "+err.Error())
	}
	t.Cleanup(func() { removeCgroupTree(deleg) })
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(deleg, f), cgroupUID, cgroupUID); err != nil {
			t.Fatal(err)
		}
	}
	cgfd, err := syscall.Open(deleg, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(cgfd) })

	// A copy of the test binary and a workspace that uid 65534 may use.
	root, err := os.MkdirTemp("", "awl-cgroup-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	exe := filepath.Join(root, "sandbox.test")
	copyExecutable(t, exe)
	for _, d := range []string{"work", "tmp"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(root, d), cgroupUID, cgroupUID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return &delegated{deleg: deleg, cgfd: cgfd, root: root, exe: exe}
}

// start runs an awl in miniature as uid 65534 in the delegated cgroup,
// and returns it, and what its command printed, once the command has run.
func (d *delegated) start(t *testing.T, command string) (*exec.Cmd, string) {
	t.Helper()
	{
		cmd := exec.Command(d.exe)
		cmd.Dir = filepath.Join(d.root, "work")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.root, "TMPDIR=" + filepath.Join(d.root, "tmp"),
			"AWL_PROBE=hold:" + cmd.Dir, "AWL_PROBE_CMD=" + command,
			// As where the user may make no user namespace, which awl
			// would use instead of the cgroup.
			"AWL_PROBE_NO_NAMESPACES=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: cgroupUID, Gid: cgroupUID},
			UseCgroupFD: true,
			CgroupFD:    d.cgfd,
		}
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var lines []string
		sc := bufio.NewScanner(out)
		for sc.Scan() && sc.Text() != "ready" {
			lines = append(lines, sc.Text())
		}
		go io.Copy(io.Discard, out)
		if !strings.Contains(strings.Join(lines, "\n"), "processes true") {
			t.Fatalf("the awl in a delegated cgroup does not enforce processes:\n%s", strings.Join(lines, "\n"))
		}
		return cmd, strings.Join(lines, "\n")
	}
}

// copyExecutable copies the test binary to path, executable by anyone.
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// waitNoDir waits (at most 10 s) until dir is gone.
func waitNoDir(t *testing.T, dir string) {
	t.Helper()
	for range 1000 {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s is left", dir)
}

// removeCgroupTree kills what runs in the cgroup dir and removes it,
// children first.
func removeCgroupTree(dir string) {
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "cgroup.procs"))
	for _, s := range subs {
		removeCgroupTree(filepath.Dir(s))
	}
	for range 200 {
		if err := syscall.Rmdir(dir); err == nil || err == syscall.ENOENT {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
