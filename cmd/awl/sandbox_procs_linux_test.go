package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/sandbox"
)

// requireSandboxNamespaces stops t where awl cannot run confined commands
// in namespaces of their own: a kernel without Landlock ABI 4, root
// without CAP_SYS_ADMIN, or a user who is not root where user namespaces
// are unavailable (asked of unshare(1), apart from awl), which skips
// even in CI: the tests without namespaces cover that user.
func requireSandboxNamespaces(t *testing.T) {
	t.Helper()
	if abi := sandbox.ABI(); abi < sandbox.ABINetwork {
		testenv.Require(t, fmt.Sprintf("this kernel's Landlock ABI is %d; the test needs %d", abi, sandbox.ABINetwork))
	}
	if os.Geteuid() == 0 {
		return
	}
	for _, c := range []string{"unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("not root, and %s is not installed: the sandbox cannot make namespaces", c)
		}
	}
	if out, err := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount", "--mount-proc", "true").CombinedOutput(); err != nil {
		t.Skipf("not root, and user namespaces cannot be used here (unshare: %v: %s): the sandbox cannot make namespaces", err, strings.TrimSpace(string(out)))
	}
}

// detachers is a bash command that starts processes meant to outlive it
// and awl, each named tag-something: one setsid'd, one double-forked, one
// plain in the background; then it sleeps, unless rest is "".
func detachers(tag, rest string) string {
	return fmt.Sprintf(`setsid -f bash -c 'exec -a %[1]s-setsid sleep 300' </dev/null >/dev/null 2>&1
( bash -c 'exec -a %[1]s-daemon sleep 300' </dev/null >/dev/null 2>&1 & )
bash -c 'exec -a %[1]s-bg sleep 300' </dev/null >/dev/null 2>&1 &
%[2]s`, tag, rest)
}

// running lists the live processes, in this /proc, whose command line
// starts with tag.
func running(tag string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(b), tag) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// sandboxRun starts awl with --sandbox workspace-write in a directory of
// its own, its model asking for one bash call with command and then
// answering "done". It returns awl, started, with its NDJSON on stdout.
// With a parentSecret (NAME=value), awl's parent is a shell that holds it
// in its environment, as a CI step's does, and awl does not.
func sandboxRun(t *testing.T, command, parentSecret string, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	t.Cleanup(srv.Close)
	input, _ := json.Marshal(map[string]string{"command": command})
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", string(input)), providertest.Text("anthropic", "done"))
	argv := append(append([]string{awl, "run", "--no-stdin", "-o", "ndjson", "--sandbox", "workspace-write"}, args...), "go")
	name, _, withParent := strings.Cut(parentSecret, "=")
	if withParent {
		// sh stays awl's parent: it runs awl, then exits with its code.
		// It has the secret on its command line too ($0), as a step
		// that passes a token as an argument has.
		argv = append([]string{"/bin/sh", "-c", `"$@"; exit $?`, "ci-step --token " + parentSecret, "env", "-u", name}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(tmp, "work")
	if err := os.Mkdir(cmd.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = awlEnv(tmp, srv.URL, filepath.Join(tmp, "sessions"))
	if withParent {
		cmd.Env = append(cmd.Env, parentSecret)
	}
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// sandboxEnforced reads awl's NDJSON up to the session event and returns
// what it says is enforced.
func sandboxEnforced(t *testing.T, sc *bufio.Scanner) map[string]bool {
	t.Helper()
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Sandbox struct {
				Enforced map[string]bool `json:"enforced"`
			} `json:"sandbox"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "session" {
			return ev.Sandbox.Enforced
		}
	}
	t.Fatal("awl printed no session event")
	return nil
}

// With --sandbox, what a tool detached (setsid -f, a double fork, a
// background job) dies with awl: after a finished run, a --timeout, and a
// SIGKILL of awl, which can clean nothing up. As root the namespaces do
// it; as another user, a user namespace's, with no cgroup delegated.
func TestSandboxNoProcessOutlivesAwl(t *testing.T) {
	requireSandboxNamespaces(t)
	for _, c := range []struct {
		name, rest string
		args       []string
		kill       bool
	}{
		{"finished", "sleep 0.2", nil, false},
		{"timeout", "sleep 100", []string{"--timeout", "3s"}, false},
		{"sigkill", "sleep 100", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tag := fmt.Sprintf("awl-outlive-%d-%s", os.Getpid(), c.name)
			awl, sc := sandboxRun(t, detachers(tag, c.rest), "", c.args...)
			t.Cleanup(func() {
				for _, p := range running(tag) {
					var pid int
					fmt.Sscan(p, &pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			if e := sandboxEnforced(t, sc); !e["processes"] || !e["proc"] {
				t.Fatalf("the session event's sandbox.enforced: %v, want processes and proc true", e)
			}
			for deadline := time.Now().Add(60 * time.Second); len(running(tag)) < 3; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the tool's processes never all ran: %q", running(tag))
				}
			}
			if c.kill {
				awl.Process.Kill()
			}
			for sc.Scan() {
			}
			awl.Wait()
			for deadline := time.Now().Add(10 * time.Second); len(running(tag)) > 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("processes a tool started outlived awl (%s): %q", c.name, running(tag))
				}
			}
		})
	}
}

// With --sandbox, a tool cannot read the environment or the command line
// of the process that started awl, which hold the CI step's secrets. A
// confined command can read no environ outside the sandbox anyway
// (Landlock allows no ptrace access out of its domain, which reading
// another process's environ needs); the command lines, which need none,
// are hidden by the sandbox's own /proc, which shows its processes
// alone. (Without the sandbox a tool can read the environ of its user's
// processes: what it reads there is redacted, secrets_proc.txtar.)
func TestSandboxHidesTheStepsEnviron(t *testing.T) {
	requireSandboxNamespaces(t)
	const secret = "sk-step-secret-0123456789"
	// Every environ and command line a tool can read (the pattern does
	// not match itself), and how many processes it sees.
	awl, sc := sandboxRun(t, `cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -c 'sk-step-[s]ecret'; ls /proc | grep -c '^[0-9]'`,
		"STEP_SECRET="+secret)
	// The parent holds it, readable to its user (unless the sandbox
	// hides it), once its exec is done.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", awl.Process.Pid))
		if err == nil && strings.Contains(string(b), secret) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("awl's parent's environ: %v %q", err, b)
		}
	}
	if e := sandboxEnforced(t, sc); !e["proc"] {
		t.Errorf("the session event's sandbox.enforced: %v, want proc true", e)
	}
	var result string
	for sc.Scan() {
		var ev struct {
			Type  string `json:"type"`
			Entry struct {
				Message struct {
					Role    string `json:"role"`
					Content []struct {
						Type    string `json:"type"`
						Content string `json:"content"`
					} `json:"content"`
				} `json:"message"`
			} `json:"entry"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "entry" {
			for _, b := range ev.Entry.Message.Content {
				if b.Type == "toolResult" {
					result = b.Content
				}
			}
		}
	}
	if err := awl.Wait(); err != nil {
		t.Errorf("awl: %v", err)
	}
	if !strings.HasPrefix(result, "0\n") {
		t.Errorf("a confined tool read the step's secret in another process's environ or command line (the count first):\n%s", result)
	}
	if strings.Contains(result, secret) {
		t.Errorf("the secret reached the tool result:\n%s", result)
	}
}

// A hardened Kubernetes pod's root (no CAP_SYS_ADMIN, CAP_SETUID nor
// CAP_SETGID: a user namespace of awl's could map uid 0 alone) in a
// checkout of uid 1001's: awl's bash tool writes and edits there, the
// session event says proc and git are not enforced, and stderr says why
// at start.
func TestSandboxPodRootWritesCheckout(t *testing.T) {
	requireSandboxNamespaces(t)
	if os.Geteuid() != 0 {
		t.Skip("root only: another user cannot own files as 1001")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Require(t, "setpriv (util-linux) is not installed")
	}
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	t.Cleanup(srv.Close)
	input, _ := json.Marshal(map[string]string{"command": "echo new > b.txt && sed -i s/old/new/ a.txt"})
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", string(input)), providertest.Text("anthropic", "done"))
	dir := filepath.Join(tmp, "work")
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", ".git", ".git/HEAD", "a.txt"} {
		if err := os.Chown(filepath.Join(dir, p), 1001, 1001); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--bounding-set=-sys_admin,-setuid,-setgid", "--inh-caps=-all", "--",
		awl, "run", "--no-stdin", "-o", "ndjson", "--sandbox", "workspace-write", "go")
	cmd.Dir = dir
	cmd.Env = awlEnv(tmp, srv.URL, filepath.Join(tmp, "sessions"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	if e := sandboxEnforced(t, sc); e["proc"] || e["git"] || !e["files"] {
		t.Errorf("session event: enforced %v, want proc and git false, files true", e)
	}
	for name, want := range map[string]string{"a.txt": "new\n", "b.txt": "new\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q\nstdout:\n%s", name, b, err, want, out)
		}
	}
	if w := stderr.String(); !strings.Contains(w, "awl: warning: --sandbox: commands run without PID and mount namespaces") ||
		!strings.Contains(w, "uid 1001") || !strings.Contains(w, "commands may write "+filepath.Join(dir, ".git")) {
		t.Errorf("stderr does not say why there are no namespaces, nor that .git is writable:\n%s", w)
	}
}
