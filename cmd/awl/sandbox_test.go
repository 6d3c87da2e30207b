package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/sandbox"
)

// scriptCondition adds [landlock]: the kernel has Landlock ABI 4 or later,
// so every sandbox mode is enforced; [mcpnpm] (mcp_test.go); and
// [cmd:A,B]: the commands A and B are on PATH. Where one is false, a
// script skips, except in CI (CI=true), where what it tests must be
// tested: there the condition is an error and the script fails. A script
// needing a command uses [!cmd:NAME], never testscript's own [!exec:NAME],
// which skips in CI too (TestScriptSkipsGoThroughTestenv).
func scriptCondition(cond string) (bool, error) {
	if cond == "mcpnpm" {
		return mcpNPMCondition()
	}
	if names, ok := strings.CutPrefix(cond, "cmd:"); ok {
		return commandsCondition(names)
	}
	if cond != "landlock" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	abi := sandbox.ABI()
	if abi < sandbox.ABINetwork {
		return false, testenv.Missing(fmt.Sprintf("this kernel's Landlock ABI is %d; [landlock] needs %d or later", abi, sandbox.ABINetwork))
	}
	return true, nil
}

// commandsCondition is [cmd:A,B]: every named command is on PATH.
func commandsCondition(names string) (bool, error) {
	for name := range strings.SplitSeq(names, ",") {
		if _, err := exec.LookPath(name); err != nil {
			return false, testenv.Missing("the script needs " + name + " on PATH")
		}
	}
	return true, nil
}

// TestScriptSkipsGoThroughTestenv: no script skips on testscript's
// [!exec:NAME], which CI=true cannot turn into a failure.
func TestScriptSkipsGoThroughTestenv(t *testing.T) {
	scripts, _ := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if len(scripts) < 20 {
		t.Fatalf("found %d scripts", len(scripts))
	}
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "[!exec:") {
				t.Errorf("%s:%d: %s: use [!cmd:NAME], which fails in CI instead of skipping", p, i+1, line)
			}
		}
	}
}

// cmdSink: `sink` listens on 127.0.0.1 until the script ends, sets
// $SINK_PORT, and appends a line to $WORK/sink.log for every connection,
// with what arrived on it: an exfiltration target.
func cmdSink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sink")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { l.Close() })
	log := filepath.Join(ts.Getenv("WORK"), "sink.log")
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				n, _ := c.Read(buf)
				// Logged before the answer: a client that has its answer
				// finds the connection in the log.
				mu.Lock()
				f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err == nil {
					fmt.Fprintf(f, "connection: %d bytes: %q\n", n, firstLine(buf[:n]))
					f.Close()
				}
				mu.Unlock()
				c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"))
			}()
		}
	}()
	ts.Setenv("SINK_PORT", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return string(line)
}

// TestSandboxUnsupported runs awl as on a kernel without Landlock: an
// explicit --sandbox and AWL_SANDBOX both exit 4 naming the ABI, unless
// --sandbox-best-effort, which warns on stderr and in the session event.
func TestSandboxUnsupported(t *testing.T) {
	assumeABI = -1
	t.Cleanup(func() { assumeABI = 0 })
	srv := providertest.New()
	defer srv.Close()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("ANTHROPIC_API_KEY", sentinelKey)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", filepath.Join(dir, "sessions"))
	t.Setenv("AWL_PROVIDER", "")
	t.Setenv("AWL_SANDBOX", "")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"run", "--no-stdin", "-o", "ndjson"}, args...), nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	want := "sandbox workspace-write needs Landlock ABI 4 or later to confine files and the network (TCP connect and bind), and this kernel has no Landlock (ABI 0"
	code, out, errs := run("--sandbox", "workspace-write", "hi")
	if code != 4 || !strings.Contains(errs, want) || !strings.Contains(out, `"reason":"sandbox_unavailable"`) {
		t.Errorf("--sandbox: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	t.Setenv("AWL_SANDBOX", "read-only")
	code, _, errs = run("hi")
	if code != 4 || !strings.Contains(errs, "sandbox read-only needs Landlock ABI 4") {
		t.Errorf("AWL_SANDBOX: exit %d\nstderr %s", code, errs)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("a refused run reached the provider %d times", n)
	}

	srv.Enqueue(providertest.Text("anthropic", "ok"))
	code, out, errs = run("--sandbox-best-effort", "hi")
	if code != 0 || !strings.Contains(errs, "awl: warning: the sandbox is not enforced for commands") {
		t.Fatalf("best effort: exit %d\nstderr %s", code, errs)
	}
	var ev struct {
		Type    string         `json:"type"`
		Sandbox sandbox.Status `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "session" || ev.Sandbox.Mode != sandbox.ReadOnly || ev.Sandbox.Full() || ev.Sandbox.Enforced.Files || ev.Sandbox.ABI != 0 || !strings.Contains(ev.Sandbox.Warning, "not enforced") {
		t.Errorf("session event %+v", ev)
	}
	if err := validateEvents(out); err != nil {
		t.Error(err)
	}

	// Bad values are usage errors.
	t.Setenv("AWL_SANDBOX", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox", "strict", "hi"}, `--sandbox: unknown sandbox mode "strict" (off, read-only, workspace-write)`},
		{[]string{"--sandbox-network", "hi"}, "--sandbox-writable and --sandbox-network need --sandbox read-only or workspace-write"},
		{[]string{"--sandbox", "read-only", "--sandbox-writable", filepath.Join(dir, "missing"), "hi"}, "--sandbox-writable: stat " + filepath.Join(dir, "missing")},
	} {
		if code, _, errs := run(c.args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %s; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	t.Setenv("AWL_SANDBOX", "sometimes")
	if code, _, errs := run("hi"); code != 2 || !strings.Contains(errs, `AWL_SANDBOX: unknown sandbox mode "sometimes"`) {
		t.Errorf("bad AWL_SANDBOX: exit %d, stderr %s", code, errs)
	}
}

// TestActionSandbox runs the action's run step with the sandbox inputs: the
// model is told the mode and each writable directory of the multi-line
// input.
func TestActionSandbox(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.ABINetwork {
		testenv.Require(t, fmt.Sprintf("this kernel's Landlock ABI is %d; the action's sandbox needs %d", abi, sandbox.ABINetwork))
	}
	a, _ := loadAction(t)
	srv := providertest.New()
	defer srv.Close()
	work := t.TempDir()
	cacheA, cacheB := t.TempDir(), t.TempDir()
	env := []string{
		"ANTHROPIC_API_KEY=" + sentinelKey, "ANTHROPIC_BASE_URL=" + srv.URL, "OPENAI_API_KEY=",
		"AWL_PROVIDER=", "AWL_MODEL=", "AWL_SANDBOX=",
		"AWL_SESSION_DIR=" + filepath.Join(work, "sessions"),
		"XDG_CONFIG_HOME=" + filepath.Join(work, "config"),
	}
	srv.Enqueue(providertest.Text("anthropic", "ok"))
	out := actionRun(t, a, work, env, map[string]string{"prompt": "hi", "sandbox": "workspace-write", "sandbox-writable": cacheA + "\n" + cacheB + "\n"})
	if out["exit_code"] != "0" {
		t.Fatalf("outputs %v", out)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, "Sandbox: workspace-write.") || !strings.Contains(body, ", except in "+cacheA+", "+cacheB+";") || !strings.Contains(body, "Network access is blocked") {
		t.Errorf("the request does not tell the sandbox with both directories:\n%s", body)
	}
}

// TestSandboxBroadWriteWarns: a workspace (or --sandbox-writable
// directory) that is / or holds the home directory protects little; awl
// says so on stderr and still runs.
func TestSandboxBroadWriteWarns(t *testing.T) {
	for _, c := range []struct{ dir, home, want string }{
		{"/", "/home/u", "the whole file system"},
		{"/home/u", "/home/u", "holds the home directory /home/u"},
		{"/home", "/home/u/", "holds the home directory /home/u"},
		{"/home/u/src", "/home/u", ""},
		{"/home/us", "/home/u", ""},
		{"/srv", "", ""},
		{"/srv", "relative", ""},
	} {
		got := broadWrite(c.dir, c.home)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("broadWrite(%q, %q) = %q, want %q", c.dir, c.home, got, c.want)
		}
	}

	if abi := sandbox.ABI(); abi < sandbox.ABINetwork {
		testenv.Require(t, fmt.Sprintf("this kernel's Landlock ABI is %d; the run needs %d", abi, sandbox.ABINetwork))
	}
	srv := providertest.New()
	defer srv.Close()
	home := t.TempDir()
	t.Chdir(home)
	t.Setenv("HOME", home)
	t.Setenv("ANTHROPIC_API_KEY", sentinelKey)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", filepath.Join(t.TempDir(), "sessions"))
	t.Setenv("AWL_PROVIDER", "")
	t.Setenv("AWL_SANDBOX", "")
	srv.Enqueue(providertest.Text("anthropic", "ok"))
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "--no-stdin", "--sandbox", "workspace-write", "hi"}, nil, &out, &errb)
	if want := "awl: warning: --sandbox workspace-write: tools may write anywhere under " + home + ", which holds the home directory"; code != 0 || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d, stderr %q, want it to contain %q", code, errb.String(), want)
	}
}
