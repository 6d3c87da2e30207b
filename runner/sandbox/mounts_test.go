//go:build linux && (amd64 || arm64)

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/runner/sandbox"
)

// A root with CAP_SYS_ADMIN whose mounts are refused (Docker's
// --cap-add SYS_ADMIN under AppArmor's docker-default profile, any
// seccomp profile that refuses mount) knows it when the sandbox is made:
// the status says what the namespaces' init could not do, the warnings
// at start say why, and every command still runs, confined, where they
// all failed at the first with "start the namespaces' init". With every
// mount refused, commands run without namespaces; with only read-only
// remounts refused, in the namespaces, whose .git is then not read-only.
// The refusal is a seccomp filter the test binary runs under, first
// shown to refuse what it should and nothing else.
func TestRootMountsRefused(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	if os.Geteuid() != 0 || !sandbox.CanMakeNamespaces() {
		t.Skip("root with CAP_SYS_ADMIN only: another root makes a user namespace, whose init's refused mounts the status always said")
	}
	exe, _ := os.Executable()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	for _, mode := range []string{"all", "ro"} {
		t.Run(mode, func(t *testing.T) {
			// under runs args under the filter of mode, with AWL_PROBE
			// set to next (none when "").
			under := func(next string, env []string, args ...string) (string, error) {
				cmd := exec.Command(exe, args...)
				cmd.Env = append(os.Environ(), append(env, "AWL_PROBE=refuse:"+mode, "AWL_PROBE_NEXT="+next)...)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			dir := t.TempDir()
			remount := []string{unshare, "--mount", "--propagation", "private", "sh", "-c",
				`mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && echo remounted`, dir}
			if out, err := exec.Command(remount[0], remount[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("unfiltered, root could not make a read-only bind mount: the test would prove nothing: %v\n%s", err, out)
			}
			if out, err := under("", nil, remount...); err == nil || strings.Contains(out, "remounted") {
				t.Fatalf("under the filter, root made a read-only bind mount: the filter refuses nothing: %v\n%s", err, out)
			}
			if out, err := under("", nil, unshare, "--mount", "--propagation", "private", "true"); (err == nil) != (mode == "ro") {
				t.Fatalf("under the filter %s, unshare --propagation private: %v\n%s", mode, err, out)
			}

			cwd := filepath.Join(t.TempDir(), "work")
			outside := t.TempDir()
			for name, content := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"} {
				os.MkdirAll(filepath.Dir(filepath.Join(cwd, name)), 0o755)
				if err := os.WriteFile(filepath.Join(cwd, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ownPID, _ := os.Readlink("/proc/self/ns/pid")
			command := "echo ran; echo command-pidns $(readlink /proc/self/ns/pid); " +
				fmt.Sprintf("echo x > %q/f || echo outside refused; ", outside) + "echo caps; " + probeCommand(t, "caps", "")
			calls, _ := json.Marshal([][2]any{{"bash", map[string]any{"command": "echo second call"}}})
			out, err := under("confine:"+cwd, []string{"AWL_PROBE_CMD=" + command, "AWL_PROBE_CALLS=" + string(calls)})
			t.Logf("%s", out)
			if err != nil || !strings.HasPrefix(out, "ran\n") || !strings.Contains(out, "call bash error=false\nsecond call\n") {
				t.Fatalf("commands did not run: %v\n%s", err, out)
			}
			if !strings.Contains(out, "outside refused") {
				t.Errorf("a command wrote outside the workspace")
			}
			_, caps, _ := strings.Cut(out, "caps\n")
			checkExactlyKept(t, capSets(t, caps))
			st := probeStatus(t, out)
			if st.Enforced.Git || !st.Enforced.Files {
				t.Errorf("status %+v: .git could not be made read-only, want git false, files true", st.Enforced)
			}
			inNS := probeField(out, "command-pidns") != ownPID
			warnNS, warnGit := probeField(out, "warning-ns"), probeField(out, "warning-git")
			if mode == "all" {
				if inNS || st.Enforced.Proc {
					t.Errorf("every mount refused: want no namespaces (the command's PID namespace %q, awl's %q), proc false: %+v",
						probeField(out, "command-pidns"), ownPID, st.Enforced)
				}
				if !strings.Contains(warnNS, "without PID and mount namespaces") || !strings.Contains(warnNS, "init") {
					t.Errorf("the warning at start does not say why there are no namespaces: %q", warnNS)
				}
			} else {
				if !inNS || !st.Enforced.Proc || !st.Enforced.Processes {
					t.Errorf("read-only remounts refused: want the namespaces and their /proc: %+v", st.Enforced)
				}
				if warnNS != "" {
					t.Errorf("a warning of no namespaces, with the namespaces: %q", warnNS)
				}
			}
			if !strings.Contains(warnGit, ".git") || !strings.Contains(warnGit, "cannot make it read-only") {
				t.Errorf("the warning at start does not say .git is writable: %q", warnGit)
			}
		})
	}
}
