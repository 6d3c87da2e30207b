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
	defer syscall.Close(cgfd)

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
	// start runs an awl in miniature as uid 65534 in the delegated
	// cgroup, and returns it once its command has run.
	start := func(command string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(exe)
		cmd.Dir = filepath.Join(root, "work")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "TMPDIR=" + filepath.Join(root, "tmp"),
			"AWL_PROBE=hold:" + cmd.Dir, "AWL_PROBE_CMD=" + command,
			// As where the user may make no user namespace, which awl
			// would use instead of the cgroup.
			"AWL_PROBE_NO_NAMESPACES=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: cgroupUID, Gid: cgroupUID},
			UseCgroupFD: true,
			CgroupFD:    cgfd,
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
		return cmd
	}
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
