//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
)

// An MCP stdio server, started confined, keeps what its configuration
// gave it (a ${VAR} secret in its environment) from the model's tools: no
// tool reads its /proc/PID/environ, attaches to it or (Landlock ABI 6)
// signals it, with the namespaces and without them (issue 47). Where
// there are namespaces, the server runs in a PID namespace of its own,
// which the tools' /proc does not list: no tool reads its command line
// (a secret in its args) either. The test process, unconfined and the
// same user, reads both: the secrets are there.
func TestServerApartFromTools(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	const secret, argSecret = "s3cr3t-mcp-server-value", "s3cr3t-mcp-server-arg"
	for _, without := range []bool{false, true} {
		t.Run(fmt.Sprint("without namespaces ", without), func(t *testing.T) {
			if without {
				withoutNamespaces(t)
			}
			f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
			srv := exec.Command("sh", "-c", "sleep 31.5; : \"$1\"", "awl-server", argSecret)
			srv.Env = []string{"SRV_TOKEN=" + secret}
			if err := f.sb.ForServers().Start(srv); err != nil {
				t.Fatal(err)
			}
			defer func() { srv.Process.Kill(); srv.Wait() }()
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", srv.Process.Pid))
				c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", srv.Process.Pid))
				if strings.Contains(string(b), secret) && strings.Contains(string(c), argSecret) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("unconfined, the server's environ and command line do not show the secrets: the test would prove nothing: %q %q", b, c)
				}
			}
			all := f.bash(t, `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline; echo; done 2>/dev/null`).Content
			if f.sb.Status().Enforced.Proc {
				if strings.Contains(all, argSecret) || strings.Contains(all, "sleep 31.5") {
					t.Errorf("a tool sees the server's command line:\n%s", all)
				}
				return
			}
			// The server, as the tools see it: its pid in their /proc.
			find := `for p in /proc/[0-9]*; do if tr '\0' ' ' 2>/dev/null < $p/cmdline | grep -q '^sh -c sleep 31.5'; then echo ${p#/proc/}; fi; done 2>/dev/null`
			pid := strings.TrimSpace(strings.SplitN(f.bash(t, find).Content, "\n", 2)[0])
			if _, err := fmt.Sscan(pid, new(int)); err != nil {
				t.Fatalf("the tools do not see the server: %q\n%s", pid, f.bash(t, "ps -eo pid,ppid,user,args").Content)
			}
			res := f.bash(t, "cat /proc/"+pid+"/environ; tr '\\0' '\\n' < /proc/"+pid+"/environ; head -c 64 /proc/"+pid+"/mem")
			if strings.Contains(res.Content, secret) || !strings.Contains(res.Content, "Permission denied") {
				t.Errorf("a tool read the server's environment:\n%s", res.Content)
			}
			if res := f.bash(t, probeCommand(t, "ptrace", pid)); !strings.Contains(res.Content, "probe failed") {
				t.Errorf("a tool attached to the server:\n%s", res.Content)
			}
			if sandbox.ABI() >= 6 {
				if res := f.bash(t, "kill -STOP "+pid+" && echo signalled"); strings.Contains(res.Content, "signalled") {
					t.Errorf("a tool signalled the server:\n%s", res.Content)
				}
			}
			// A command the tools start themselves stays theirs to read.
			if res := f.bash(t, "SRV_TOKEN=mine sleep 5 & sleep 0.2; tr '\\0' '\\n' < /proc/$!/environ | grep SRV_TOKEN; kill $!"); !strings.Contains(res.Content, "SRV_TOKEN=mine") {
				t.Errorf("a tool could not read its own child's environment:\n%s", res.Content)
			}
		})
	}
}
