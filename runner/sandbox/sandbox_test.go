package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// requireABI skips a test on a kernel without the Landlock ABI it needs,
// except in CI, where the sandbox must be tested: there it fails.
func requireABI(t *testing.T, need int) {
	t.Helper()
	if abi := sandbox.ABI(); abi < need {
		testenv.Require(t, fmt.Sprintf("this kernel's Landlock ABI is %d; the test needs ABI %d or later", abi, need))
	}
}

// fixture is a working directory and a home directory outside it.
type fixture struct {
	cwd, home string
	tools     map[string]tool.Tool
	sb        *sandbox.Sandbox
}

func newFixture(t *testing.T, o sandbox.Options) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{cwd: filepath.Join(root, "work"), home: filepath.Join(root, "home")}
	for _, d := range []string{f.cwd, f.home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o.Cwd = f.cwd
	sb, st, err := sandbox.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if !st.Full() {
		t.Fatalf("status %+v: not enforced", st)
	}
	f.sb = sb
	env := tool.Env{Dir: f.cwd, Getenv: f.getenv, Environ: append(os.Environ(), "HOME="+f.home), Confine: sb}
	f.tools = map[string]tool.Tool{}
	for _, tl := range tool.Builtins(env) {
		f.tools[tl.Name()] = tl
	}
	return f
}

func (f *fixture) getenv(k string) string {
	if k == "HOME" {
		return f.home
	}
	return os.Getenv(k)
}

func (f *fixture) call(t *testing.T, name string, in map[string]any) tool.Result {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return f.tools[name].Run(context.Background(), b)
}

func (f *fixture) bash(t *testing.T, command string) tool.Result {
	t.Helper()
	return f.call(t, "bash", map[string]any{"command": command, "timeout": 60})
}

func mustOK(t *testing.T, res tool.Result) {
	t.Helper()
	if res.IsError {
		t.Fatalf("failed:\n%s", res.Content)
	}
}

// mustDenied checks a failed result that ends with the sandbox's note.
func mustDenied(t *testing.T, res tool.Result, note string, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("succeeded, want a failure:\n%s", res.Content)
	}
	if !strings.HasSuffix(res.Content, "\n"+note) {
		t.Errorf("result does not end with the line %q:\n%s", note, res.Content)
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("result lacks %q:\n%s", w, res.Content)
		}
	}
}

func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists (err %v); the sandbox should have stopped it", path, err)
	}
}

// outsideTmp is a path in the system temporary directory, outside the
// sandbox's private one.
func outsideTmp(t *testing.T) string {
	t.Helper()
	p := filepath.Join(os.TempDir(), fmt.Sprintf("awl-sandbox-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	os.Remove(p)
	t.Cleanup(func() { os.Remove(p) })
	return p
}

func TestWorkspaceWriteFiles(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	note := f.sb.Note()
	if want := "(awl sandbox: workspace-write; writes outside " + f.cwd + ", $TMPDIR and network are blocked)"; note != want {
		t.Fatalf("note %q, want %q", note, want)
	}

	mustOK(t, f.bash(t, "echo hi > made.txt && mkdir -p sub/dir && mv made.txt sub/dir/moved.txt && rm -r sub"))
	mustOK(t, f.bash(t, "echo kept > kept.txt"))
	if b, err := os.ReadFile(filepath.Join(f.cwd, "kept.txt")); err != nil || string(b) != "kept\n" {
		t.Fatalf("kept.txt: %q, %v", b, err)
	}
	// The private temporary directory is writable, and TMPDIR names it.
	res := f.bash(t, `echo x > "$TMPDIR/t" && echo "$TMPDIR" && mktemp`)
	mustOK(t, res)
	if !strings.Contains(res.Content, f.sb.TmpDir) || f.sb.TmpDir == os.TempDir() {
		t.Errorf("TMPDIR is not the private directory %s:\n%s", f.sb.TmpDir, res.Content)
	}
	// Discarding output still works.
	mustOK(t, f.bash(t, "echo gone > /dev/null"))

	tmp := outsideTmp(t)
	etc := fmt.Sprintf("/etc/awl-sandbox-test-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	for _, c := range []struct{ cmd, path string }{
		{"touch $HOME/x", filepath.Join(f.home, "x")},
		{"touch " + etc, etc},
		{"echo > " + tmp, tmp},
		{"ln -s /etc/passwd $HOME/link", filepath.Join(f.home, "link")},
		{"mkdir $HOME/d", filepath.Join(f.home, "d")},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			mustDenied(t, f.bash(t, c.cmd), note, "Permission denied")
			mustNotExist(t, c.path)
		})
	}

	// An existing file outside can be read but neither changed, truncated
	// nor removed.
	victim := filepath.Join(f.home, ".bashrc")
	if err := os.WriteFile(victim, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, f.bash(t, "cat $HOME/.bashrc"))
	for _, cmd := range []string{"echo evil >> $HOME/.bashrc", ": > $HOME/.bashrc", "truncate -s 0 $HOME/.bashrc", "rm -f $HOME/.bashrc", "mv $HOME/.bashrc ./stolen"} {
		mustDenied(t, f.bash(t, cmd), note)
	}
	if b, _ := os.ReadFile(victim); string(b) != "original\n" {
		t.Errorf(".bashrc changed: %q", b)
	}
	// A symbolic link in the workspace does not lead out of it.
	if err := os.Symlink(victim, filepath.Join(f.cwd, "rc")); err != nil {
		t.Fatal(err)
	}
	mustDenied(t, f.bash(t, "echo evil >> rc"), note)
	if b, _ := os.ReadFile(victim); string(b) != "original\n" {
		t.Errorf(".bashrc changed through a link: %q", b)
	}
}

func TestWorkspaceWriteTools(t *testing.T) {
	requireABI(t, sandbox.ABIFiles)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
	note := f.sb.Note()
	if want := "(awl sandbox: workspace-write; writes outside " + f.cwd + " and $TMPDIR are blocked)"; note != want {
		t.Fatalf("note %q, want %q", note, want)
	}
	mustOK(t, f.call(t, "write", map[string]any{"path": "in/new.txt", "content": "a\n"}))
	mustOK(t, f.call(t, "edit", map[string]any{"path": "in/new.txt", "old_string": "a", "new_string": "b"}))
	mustOK(t, f.call(t, "write", map[string]any{"path": filepath.Join(f.sb.TmpDir, "t.txt"), "content": "t"}))

	victim := filepath.Join(f.home, ".bashrc")
	if err := os.WriteFile(victim, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(f.cwd, "rc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.home, filepath.Join(f.cwd, "homelink")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"~/.bashrc", "~/new/file", victim, "../home/x", "rc", "homelink/y", "/etc/awl-x", "in/../../home/z"} {
		t.Run(p, func(t *testing.T) {
			mustDenied(t, f.call(t, "write", map[string]any{"path": p, "content": "evil"}), note, "write: ", "Permission denied")
			mustDenied(t, f.call(t, "edit", map[string]any{"path": p, "old_string": "original", "new_string": "evil"}), note, "edit: ", "Permission denied")
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "original\n" {
		t.Errorf(".bashrc changed: %q", b)
	}
	mustNotExist(t, filepath.Join(f.home, "new"))
	mustNotExist(t, filepath.Join(f.home, "y"))
	mustNotExist(t, filepath.Join(f.home, "x"))
}

func TestReadOnly(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.ReadOnly})
	note := f.sb.Note()
	if want := "(awl sandbox: read-only; writes outside $TMPDIR and network are blocked)"; note != want {
		t.Fatalf("note %q, want %q", note, want)
	}
	if err := os.WriteFile(filepath.Join(f.cwd, "a.txt"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, f.bash(t, "cat a.txt && ls / >/dev/null"))
	mustOK(t, f.bash(t, `echo x > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"`))
	mustOK(t, f.call(t, "write", map[string]any{"path": filepath.Join(f.sb.TmpDir, "w"), "content": "w"}))
	tmp := outsideTmp(t)
	for _, cmd := range []string{"echo x > b.txt", "echo x >> a.txt", "rm a.txt", "mkdir d", "touch $HOME/x", "echo > " + tmp} {
		mustDenied(t, f.bash(t, cmd), note, "Permission denied")
	}
	mustDenied(t, f.call(t, "write", map[string]any{"path": "b.txt", "content": "x"}), note)
	mustDenied(t, f.call(t, "edit", map[string]any{"path": "a.txt", "old_string": "data", "new_string": "x"}), note)
	for _, p := range []string{filepath.Join(f.cwd, "b.txt"), filepath.Join(f.cwd, "d"), filepath.Join(f.home, "x"), tmp} {
		mustNotExist(t, p)
	}
	if b, _ := os.ReadFile(filepath.Join(f.cwd, "a.txt")); string(b) != "data\n" {
		t.Errorf("a.txt changed: %q", b)
	}
}

func TestWritableDirs(t *testing.T) {
	requireABI(t, sandbox.ABIFiles)
	cache := t.TempDir()
	f := newFixture(t, sandbox.Options{Mode: sandbox.ReadOnly, Network: true, Writable: []string{cache}})
	mustOK(t, f.bash(t, "echo c > "+filepath.Join(cache, "c")))
	mustOK(t, f.call(t, "write", map[string]any{"path": filepath.Join(cache, "w"), "content": "w"}))
	if want := "(awl sandbox: read-only; writes outside " + cache + " and $TMPDIR are blocked)"; f.sb.Note() != want {
		t.Errorf("note %q, want %q", f.sb.Note(), want)
	}
	mustDenied(t, f.bash(t, "echo c > c"), f.sb.Note())
}

// listen accepts connections on 127.0.0.1 and counts them.
func listen(t *testing.T) (port int, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan struct{}, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			ch <- struct{}{}
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, ch
}

func TestNetwork(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	port, accepted := listen(t)
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)

	off := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	mustDenied(t, off.bash(t, connect), off.sb.Note(), "Permission denied")
	// Nor can a command listen: bind is denied too.
	testenv.RequireCommands(t, "python3")
	mustDenied(t, off.bash(t, `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print("bound")' || exit 1`), off.sb.Note())
	select {
	case <-accepted:
		t.Fatal("a confined command reached the listener with the network off")
	default:
	}

	on := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
	res := on.bash(t, connect)
	mustOK(t, res)
	if !strings.Contains(res.Content, "connected") {
		t.Errorf("no connection:\n%s", res.Content)
	}
	<-accepted
}

func TestUnsupported(t *testing.T) {
	for _, c := range []struct {
		o       sandbox.Options
		enforce bool
		err     string
	}{
		{sandbox.Options{Mode: sandbox.WorkspaceWrite, ABI: -1}, false, "sandbox workspace-write needs Landlock ABI 4 or later to confine files and the network (TCP connect and bind), and this kernel has no Landlock (ABI 0"},
		{sandbox.Options{Mode: sandbox.ReadOnly, ABI: 3}, false, "sandbox read-only needs Landlock ABI 4 or later to confine files and the network (TCP connect and bind), and this kernel's Landlock ABI is 3"},
		{sandbox.Options{Mode: sandbox.ReadOnly, ABI: 2, Network: true}, false, "sandbox read-only needs Landlock ABI 3 or later to confine files, and this kernel's Landlock ABI is 2"},
		{sandbox.Options{Mode: sandbox.ReadOnly, ABI: 3, Network: true}, true, ""},
		{sandbox.Options{Mode: sandbox.WorkspaceWrite, ABI: 4}, true, ""},
	} {
		c.o.Cwd = t.TempDir()
		sb, st, err := sandbox.New(c.o)
		if st.Full() != c.enforce || st.ABI != max(c.o.ABI, 0) || st.Mode != c.o.Mode {
			t.Errorf("%+v: status %+v", c.o, st)
		}
		if c.err == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.o, err)
			}
			sb.Close()
			continue
		}
		var ue *sandbox.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--sandbox-best-effort") {
			t.Errorf("%+v: error %v, want one with %q", c.o, err, c.err)
		}
		// Best effort goes on and says what is missing.
		c.o.BestEffort = true
		sb, st, err = sandbox.New(c.o)
		if err != nil || st.Full() || st.Warning == "" {
			t.Errorf("best effort %+v: %+v, %v", c.o, st, err)
		}
		if sb == nil || sb.CheckWrite("/etc/awl-x") == nil {
			t.Errorf("best effort %+v: write and edit are not checked", c.o)
		}
		sb.Close()
	}
}

func TestOff(t *testing.T) {
	for _, m := range []string{"", "off"} {
		mode, err := sandbox.ParseMode(m)
		if err != nil || mode != sandbox.Off {
			t.Fatalf("ParseMode(%q) = %q, %v", m, mode, err)
		}
		sb, st, err := sandbox.New(sandbox.Options{Mode: mode, Cwd: t.TempDir()})
		if sb != nil || err != nil || st.Mode != sandbox.Off || !st.Network || st.Full() || st.Enforced != (sandbox.Enforced{}) {
			t.Errorf("off: %v %+v %v", sb, st, err)
		}
	}
	if _, err := sandbox.ParseMode("workspace"); err == nil || !strings.Contains(err.Error(), sandbox.Modes) {
		t.Errorf("bad mode: %v", err)
	}
}

func TestCloseRemovesTmp(t *testing.T) {
	sb, _, err := sandbox.New(sandbox.Options{Mode: sandbox.ReadOnly, Cwd: t.TempDir(), ABI: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.TmpDir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sb.Close()
	mustNotExist(t, sb.TmpDir)
}

// TestAwlStaysUnconfined: commands are confined from threads of awl's own,
// and nothing of that confinement may reach the rest of awl, which must
// still write the session anywhere, start unconfined processes and reach
// the model, on whatever thread the Go runtime runs it.
func TestAwlStaysUnconfined(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	port, accepted := listen(t)
	outside := filepath.Join(f.home, "outside")
	// Confined calls in parallel, each denied.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			res := f.bash(t, fmt.Sprintf("echo x > %s-%d", outside, i))
			if !res.IsError || !strings.Contains(res.Content, "Permission denied") {
				t.Errorf("call %d was not confined:\n%s", i, res.Content)
			}
		})
	}
	wg.Wait()
	// Then awl itself, on many threads at once (each goroutine holds a
	// thread of its own while it works).
	for i := range 32 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			p := fmt.Sprintf("%s-awl-%d", outside, i)
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Errorf("awl could not write %s after confined calls: %v", p, err)
			}
			if err := exec.Command("sh", "-c", "echo x > "+p+".sh").Run(); err != nil {
				t.Errorf("an unconfined command could not write %s.sh: %v", p, err)
			}
			c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Errorf("awl could not connect after confined calls: %v", err)
				return
			}
			c.Close()
			<-accepted
		})
	}
	wg.Wait()
}

// TestWithNetwork: the networked twin of a sandbox keeps its files policy
// and private temporary directory, reaches the network, and is closed
// with it.
func TestWithNetwork(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	n, err := f.sb.WithNetwork()
	if err != nil {
		t.Fatal(err)
	}
	if n2, _ := f.sb.WithNetwork(); n2 != n {
		t.Error("WithNetwork made a second twin")
	}
	if n.TmpDir != f.sb.TmpDir || !n.Network || f.sb.Network {
		t.Fatalf("twin %+v of %+v", n.Policy, f.sb.Policy)
	}
	port, accepted := listen(t)
	run := func(sb *sandbox.Sandbox, script string) error {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = f.cwd
		if err := sb.Start(cmd); err != nil {
			return err
		}
		return cmd.Wait()
	}
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)
	if err := run(n, connect); err != nil {
		t.Errorf("the twin could not connect: %v", err)
	}
	<-accepted
	if err := run(f.sb, connect); err == nil {
		t.Error("the sandbox itself connected")
	}
	if err := run(n, "echo x > "+filepath.Join(f.home, "x")); err == nil {
		t.Error("the twin wrote outside the workspace")
	}
	if err := run(n, `test "$TMPDIR" = `+f.sb.TmpDir+` && echo x > "$TMPDIR/x" && echo y > y`); err != nil {
		t.Errorf("the twin could not write its temporary directory or the workspace: %v", err)
	}
}

// TestStartedCommandIsWaitable: Start hands back a command that Wait reaps
// as usual, with its exit status, while the sandbox waits for it without
// reaping.
func TestStartedCommandIsWaitable(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.ReadOnly})
	for i := range 50 {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("exit %d", i%4))
		if err := f.sb.Start(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if got := cmd.ProcessState.ExitCode(); got != i%4 {
			t.Fatalf("exit code %d (err %v), want %d", got, err, i%4)
		}
	}
	// A command that cannot start is an error from Start, as from
	// cmd.Start.
	if err := f.sb.Start(exec.Command("/nonexistent/awl-test")); err == nil {
		t.Error("Start of a missing program succeeded")
	}
}

// TestConfinedTimeout: awl, unconfined, can still stop a confined command
// and what it started when the timeout passes (Landlock's scoping stops
// the confined side from signalling out, never awl from signalling in).
func TestConfinedTimeout(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	// Named, because its pid in the sandbox's PID namespace is not the
	// one this test sees.
	tag := fmt.Sprintf("awl-timeout-%d", os.Getpid())
	res := f.call(t, "bash", map[string]any{"command": `bash -c 'exec -a ` + tag + ` sleep 100' & sleep 100`, "timeout": 2})
	if !res.IsError || !strings.Contains(res.Content, "timed out after 2s") {
		t.Fatalf("want a timeout:\n%s", res.Content)
	}
	for range 1000 {
		if len(alive(tag)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("the confined background process survived the timeout: %q", alive(tag))
}
