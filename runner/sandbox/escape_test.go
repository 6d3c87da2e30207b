//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// The write and edit tools run in awl's unconfined process: these are the
// ways a confined command tried to lead them out of the writable
// directories (issue 24).

// A dangling link in the workspace, made by a confined command, pointing
// at a file that does not exist yet outside: write would create it.
func TestWriteDanglingLinkOut(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	target := filepath.Join(f.home, ".gitconfig")
	mustOK(t, f.bash(t, "ln -s "+target+" notes.txt && ln -s ../home/deep/x chain && ln -s chain chain2"))
	mustDenied(t, f.call(t, "write", map[string]any{"path": "notes.txt", "content": "[core]\n\tfsmonitor = evil\n"}), f.sb.Note(), "write: notes.txt: Permission denied")
	mustNotExist(t, target)
	// Through a relative link, and a chain of them, with parents to create.
	mustDenied(t, f.call(t, "write", map[string]any{"path": "chain2", "content": "x"}), f.sb.Note(), "Permission denied")
	mustNotExist(t, filepath.Join(f.home, "deep"))
	// A link that stays inside is still followed, and stays a link.
	mustOK(t, f.bash(t, "ln -s sub/real.txt inside.txt"))
	mustOK(t, f.call(t, "write", map[string]any{"path": "inside.txt", "content": "in\n"}))
	if b, err := os.ReadFile(filepath.Join(f.cwd, "sub", "real.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("sub/real.txt: %q, %v", b, err)
	}
	if st, err := os.Lstat(filepath.Join(f.cwd, "inside.txt")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("inside.txt is no longer a link: %v %v", st, err)
	}
}

// The same in read-only mode, through a --sandbox-writable directory.
func TestWriteDanglingLinkOutReadOnly(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	cache := t.TempDir()
	f := newFixture(t, sandbox.Options{Mode: sandbox.ReadOnly, Writable: []string{cache}})
	target := filepath.Join(f.home, ".bashrc")
	if err := os.Symlink(target, filepath.Join(cache, "rc")); err != nil {
		t.Fatal(err)
	}
	mustDenied(t, f.call(t, "write", map[string]any{"path": filepath.Join(cache, "rc"), "content": "evil\n"}), f.sb.Note(), "Permission denied")
	mustNotExist(t, target)
	// An existing file outside, through a link in the writable directory.
	if err := os.WriteFile(target, []byte("good\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustDenied(t, f.call(t, "edit", map[string]any{"path": filepath.Join(cache, "rc"), "old_string": "good", "new_string": "evil"}), f.sb.Note(), "Permission denied")
	if b, _ := os.ReadFile(target); string(b) != "good\n" {
		t.Errorf("%s edited through the link: %q", target, b)
	}
	mustOK(t, f.call(t, "write", map[string]any{"path": filepath.Join(cache, "d", "new.txt"), "content": "ok"}))
}

// A process swapping a link in the workspace between a file inside and
// one outside, while the model writes through it: no write may land
// outside, however the swaps fall between the check and the write.
func TestWriteSwapRace(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	outside := filepath.Join(f.home, "victim.txt")
	if err := os.WriteFile(outside, []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(f.cwd, "in.txt")
	link := filepath.Join(f.cwd, "t.txt")
	dirLink := filepath.Join(f.cwd, "d")
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.cwd, "realdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the swapper: a link for the file, and for its directory
		defer wg.Done()
		tmp, tmpDir := link+".new", dirLink+".new"
		for i := 0; !stop.Load(); i++ {
			dest, dirDest := inside, filepath.Join(f.cwd, "realdir")
			if i%2 == 1 {
				dest, dirDest = outside, f.home
			}
			os.Remove(tmp)
			os.Symlink(dest, tmp)
			os.Rename(tmp, link)
			os.Remove(tmpDir)
			os.Symlink(dirDest, tmpDir)
			os.Rename(tmpDir, dirLink)
		}
	}()
	for range 300 {
		f.call(t, "write", map[string]any{"path": "t.txt", "content": "swapped\n"})
		f.call(t, "write", map[string]any{"path": "d/victim.txt", "content": "swapped\n"})
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(outside); string(b) != "untouched\n" {
		t.Fatalf("%s was written through the swapped link: %q", outside, b)
	}
	if ents, _ := os.ReadDir(f.home); len(ents) != 1 {
		t.Errorf("files appeared outside: %v", ents)
	}
}

// A descriptor awl inherited open on a file outside (`exec 7>>outside;
// awl run …`) must not reach a confined command, which Landlock would not
// stop from writing through it.
func TestInheritedDescriptor(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	outside := outsideTmp(t)
	fd, err := syscall.Open(outside, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	res := f.bash(t, fmt.Sprintf("echo escaped >&%d", fd))
	if !res.IsError || !strings.Contains(res.Content, "Bad file descriptor") {
		t.Errorf("echo >&%d: want a bad descriptor error:\n%s", fd, res.Content)
	}
	if b, _ := os.ReadFile(outside); len(b) != 0 {
		t.Errorf("written through the inherited descriptor: %q", b)
	}
	// awl itself still has it.
	if _, err := syscall.Write(fd, []byte("awl\n")); err != nil {
		t.Errorf("awl's own descriptor: %v", err)
	}
}

// udpListener counts datagrams received on 127.0.0.1.
func udpListener(t *testing.T) (port int, received func() int) {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var n atomic.Int32
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).Port, func() int {
		time.Sleep(100 * time.Millisecond) // let a datagram in flight arrive
		return int(n.Load())
	}
}

// Landlock governs TCP connect and bind only: no datagram, Fast Open
// connection, raw packet or listening socket may get out with the network
// off, and the listeners in the test receive nothing.
func TestNetworkEscapes(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	udpPort, datagrams := udpListener(t)
	tcpPort, accepted := listen(t)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	for _, c := range []struct{ what, arg string }{
		{"udp", fmt.Sprint(udpPort)},
		{"fastopen", fmt.Sprint(tcpPort)},
		{"raw", fmt.Sprint(udpPort)},
		{"listen", ""},
	} {
		res := f.bash(t, probeCommand(t, c.what, c.arg))
		mustDenied(t, res, f.sb.Note(), "probe failed: socket: permission denied")
	}
	if n := datagrams(); n != 0 {
		t.Errorf("the UDP listener received %d datagrams from a confined command", n)
	}
	select {
	case <-accepted:
		t.Error("a confined command connected with TCP Fast Open")
	default:
	}

	// With --sandbox-network, all of it works, an abstract UNIX socket
	// outside the command included.
	name := fmt.Sprintf("awl-test-%d", os.Getpid())
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	mustDenied(t, f.bash(t, probeCommand(t, "abstract", name)), f.sb.Note(), "probe failed")
	on := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
	mustOK(t, on.bash(t, probeCommand(t, "udp", fmt.Sprint(udpPort))))
	mustOK(t, on.bash(t, probeCommand(t, "listen", "")))
	mustOK(t, on.bash(t, probeCommand(t, "abstract", name)))
	if n := datagrams(); n != 1 {
		t.Errorf("the UDP listener received %d datagrams with the network on, want 1", n)
	}
}

// marked starts, from a confined command, processes that try to outlive
// it and awl: one setsid'd, one double-forked, one plain in the
// background. Each runs sleep under the name tag, which alive finds.
func marked(tag string) string {
	return fmt.Sprintf(`setsid -f bash -c 'exec -a %[1]s-setsid sleep 300' </dev/null >/dev/null 2>&1
( bash -c 'exec -a %[1]s-daemon sleep 300' </dev/null >/dev/null 2>&1 & )
bash -c 'exec -a %[1]s-bg sleep 300' </dev/null >/dev/null 2>&1 &
sleep 0.2; echo started`, tag)
}

// alive lists the processes, seen from outside the sandbox, whose command
// line starts with tag.
func alive(tag string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.HasPrefix(string(b), tag) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				out = append(out, e.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	return out
}

// waitAlive waits (at most 30 s) until n processes with tag run. The
// command that started them returns before they have all exec'd under
// their name, more so on a loaded machine: counting at once could count
// too few.
func waitAlive(t *testing.T, tag string, n int) {
	t.Helper()
	for range 3000 {
		if len(alive(tag)) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d marked processes running, want %d: %q", len(alive(tag)), n, alive(tag))
}

// waitGone waits (at most 10 s) until no process with tag is left.
func waitGone(t *testing.T, tag, after string) {
	t.Helper()
	for range 1000 {
		if len(alive(tag)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("processes a confined command started outlived %s: %q", after, alive(tag))
}

func requireNamespaces(t *testing.T, st sandbox.Status) {
	t.Helper()
	// proc: the namespaces alone give it (processes may come from a
	// cgroup instead).
	if st.Enforced.Proc {
		return
	}
	if os.Geteuid() == 0 {
		testenv.Require(t, "awl cannot make PID namespaces here (it needs CAP_SYS_ADMIN)")
		return
	}
	// Not root: awl must use user namespaces wherever they work.
	if why := userNamespacesMissing(); why != "" {
		// The WithoutNamespaces tests cover what a user gets then.
		t.Skipf("not root, and user namespaces cannot be used here (%s): the sandbox cannot make namespaces", why)
	}
	t.Fatalf("not root, user namespaces work here (unshare made a user, PID and mount namespace and mounted /proc in it), "+
		"but the sandbox made none: status %+v", st)
}

// userNamespacesMissing says why a user who is not root cannot make a user
// namespace with PID and mount namespaces and mount in it, or the
// commands awl needs for them are missing: "" when nothing is missing.
// It asks unshare(1), apart from awl.
func userNamespacesMissing() string {
	for _, c := range []string{"unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(c); err != nil {
			return c + " is not installed"
		}
	}
	out, err := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount", "--mount-proc", "true").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("unshare --user --map-root-user --pid --fork --mount --mount-proc true: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// Nothing a tool started, setsid'd or double-forked, outlives the run:
// not when it ends, not when a call timed out, not when awl is SIGKILLed.
func TestNoProcessOutlivesTheRun(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	tag := fmt.Sprintf("awl-mark-%d", os.Getpid())

	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	requireNamespaces(t, f.sb.Status())
	mustOK(t, f.bash(t, marked(tag+"-a")))
	waitAlive(t, tag+"-a", 3)
	// A timed-out call: its group is killed; what left it is killed with
	// the run.
	res := f.call(t, "bash", map[string]any{"command": marked(tag+"-t") + "; sleep 100", "timeout": 1})
	if !strings.Contains(res.Content, "timed out") {
		t.Fatalf("want a timeout:\n%s", res.Content)
	}
	// The group's kill spared the setsid'd one.
	waitAlive(t, tag+"-t", 1)
	f.sb.Close()
	waitGone(t, tag+"-a", "the end of the run")
	waitGone(t, tag+"-t", "the end of a run whose call timed out")

	// SIGKILL: an awl that cannot clean up.
	exe, _ := os.Executable()
	cwd := t.TempDir()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "AWL_PROBE=hold:"+cwd, "AWL_PROBE_CMD="+marked(tag+"-k"))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tmp string
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		if d, ok := strings.CutPrefix(sc.Text(), "tmp "); ok {
			tmp = d
		}
	}
	waitAlive(t, tag+"-k", 3)
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, tag+"-k", "a SIGKILLed awl")
	// Its private temporary directory is left, and removed by the next
	// sandbox made.
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the killed awl's %s: %v", tmp, err)
	}
	g := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	_ = g
	mustNotExist(t, tmp)
}

// A tool sees only the sandbox's processes in /proc: not the environment
// of the shell that started awl, which holds the CI job's secrets.
func TestProcShowsOnlyTheSandbox(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	requireNamespaces(t, f.sb.Status())
	parent := exec.Command("sleep", "60")
	parent.Env = []string{"AWL_TEST_PARENT_SECRET=s3cr3t-of-the-step"}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { parent.Process.Kill(); parent.Wait() }()
	// Start returns once the exec has begun; the kernel fills the new
	// program's environment a moment later, and until then environ reads
	// empty. Wait for it, so that the check inside proves something.
	var b []byte
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", parent.Process.Pid))
		if err == nil && strings.Contains(string(b), "s3cr3t") || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || !strings.Contains(string(b), "s3cr3t") {
		t.Fatalf("the stand-in parent's environ: %q %v", b, err)
	}
	res := f.bash(t, "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c s3cr3t-of-the-step; cat /proc/1/cmdline | tr '\\0' ' '")
	if !strings.HasPrefix(res.Content, "0\n") || !strings.Contains(res.Content, "awl-sandbox-init") {
		t.Errorf("a confined command read another process's environment, or /proc is not the sandbox's:\n%s", res.Content)
	}
}

// In workspace-write, .git is read-only to commands, so no hook or config
// planted there runs in a later, unconfined git; the repository of a
// worktree or a submodule (named by a .git file) too. --sandbox-writable
// .git opts in.
func TestGitReadOnly(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	probe := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	requireNamespaces(t, probe.sb.Status())
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	for _, d := range []string{"work/.git/hooks", "work/.git/modules/sub/hooks", "work/sub", "wt", "repo/.git/worktrees/wt"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(cwd, "sub", ".git"), []byte("gitdir: ../.git/modules/sub\n"), 0o644)
	os.WriteFile(filepath.Join(root, "wt", ".git"), []byte("gitdir: "+filepath.Join(root, "repo/.git/worktrees/wt")+"\n"), 0o644)
	os.WriteFile(filepath.Join(root, "repo/.git/worktrees/wt/commondir"), []byte("../..\n"), 0o644)

	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !st.GitReadOnly || !st.Enforced.Git {
		t.Errorf("status %+v: .git not read-only", st)
	}
	// read-only protects it too, unless a writable directory holds it.
	if sr, st, err := sandbox.New(sandbox.Options{Mode: sandbox.ReadOnly, Cwd: cwd}); err != nil || !st.Enforced.Git {
		t.Errorf("read-only: status %+v %v, want enforced.git", st, err)
	} else {
		sr.Close()
	}
	if sr, st, err := sandbox.New(sandbox.Options{Mode: sandbox.ReadOnly, Cwd: cwd, Writable: []string{cwd}}); err != nil || st.Enforced.Git {
		t.Errorf("read-only, the working directory writable: status %+v %v, want enforced.git false", st, err)
	} else {
		sr.Close()
	}
	bash := tool.Builtins(tool.Env{Dir: cwd, Confine: sb})[0]
	run := func(cmd string) tool.Result {
		in, _ := json.Marshal(map[string]any{"command": cmd})
		return bash.Run(context.Background(), in)
	}
	for _, cmd := range []string{"echo evil > .git/hooks/post-checkout", "echo evil > .git/config", "echo evil > .git/modules/sub/hooks/pre-commit",
		// Nor can a command undo the mount: remount it writable, unmount
		// it, or do either in namespaces of its own.
		"mount -o remount,bind,rw .git; echo evil > .git/config",
		"umount .git; umount -l .git; echo evil > .git/config",
		// (New user namespaces are refused too, so unshare fails first.)
		"unshare --user --mount --propagation unchanged sh -c 'mount -o remount,bind,rw .git; umount -l .git; echo evil > .git/config'; echo evil > .git/config",
		"unshare --user --map-root-user --mount sh -c 'mount -o remount,bind,rw .git; umount -l .git; echo evil > .git/config'; echo evil > .git/config",
	} {
		if res := run(cmd); !res.IsError || !strings.Contains(res.Content, "Read-only file system") {
			t.Errorf("%s: want a read-only file system:\n%s", cmd, res.Content)
		}
	}
	if res := run(probeCommand(t, "remount", filepath.Join(cwd, ".git"))); !strings.Contains(res.Content, "probe failed") ||
		!strings.Contains(res.Content, "read-only file system") {
		t.Errorf("remount and umount .git by system call: want both refused and .git read-only:\n%s", res.Content)
	}
	// Nor can the write and edit tools, which awl runs itself.
	tools := toolsFor(cwd, sb)
	for _, p := range []string{".git/hooks/post-checkout", ".git/modules/sub/hooks/pre-commit", "sub/../.git/config"} {
		in, _ := json.Marshal(map[string]any{"path": p, "content": "evil\n"})
		if res := tools["write"].Run(context.Background(), in); !res.IsError || !strings.Contains(res.Content, "Permission denied") {
			t.Errorf("write %s: want it refused:\n%s", p, res.Content)
		}
	}
	os.WriteFile(filepath.Join(cwd, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	ein, _ := json.Marshal(map[string]any{"path": ".git/HEAD", "old_string": "main", "new_string": "evil"})
	if res := tools["edit"].Run(context.Background(), ein); !res.IsError || !strings.Contains(res.Content, "Permission denied") {
		t.Errorf("edit .git/HEAD: want it refused:\n%s", res.Content)
	}
	mustNotExist(t, filepath.Join(cwd, ".git/hooks/post-checkout"))
	mustNotExist(t, filepath.Join(cwd, ".git/config"))
	mustOK(t, run("echo fine > sub/file.txt"))

	// A worktree: its gitdir and the common directory are read-only.
	wt := filepath.Join(root, "wt")
	sbw, _, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: wt, Writable: []string{filepath.Join(root, "repo")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sbw.Close()
	bashW := tool.Builtins(tool.Env{Dir: wt, Confine: sbw})[0]
	for _, p := range []string{"repo/.git/worktrees/wt/HEAD", "repo/.git/config"} {
		in, _ := json.Marshal(map[string]any{"command": "echo evil > " + filepath.Join(root, p)})
		if res := bashW.Run(context.Background(), in); !res.IsError || !strings.Contains(res.Content, "Read-only file system") {
			t.Errorf("%s: want a read-only file system:\n%s", p, res.Content)
		}
	}

	// The opt-in.
	sbo, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd, Writable: []string{filepath.Join(cwd, ".git")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sbo.Close()
	if st.GitReadOnly || st.Enforced.Git {
		t.Errorf("--sandbox-writable .git: status %+v", st)
	}
	bashO := tool.Builtins(tool.Env{Dir: cwd, Confine: sbo})[0]
	in, _ := json.Marshal(map[string]any{"command": "echo ok > .git/config"})
	mustOK(t, bashO.Run(context.Background(), in))
}
