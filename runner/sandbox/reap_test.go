package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// withoutNamespaces gives t the sandbox a user who is not root and whose
// cgroup is not delegated gets: as root, by leaving the namespaces and
// the cgroup out; as another user, by leaving out the cgroup.
func withoutNamespaces(t *testing.T) {
	t.Cleanup(sandbox.WithoutNamespaces())
}

// bothWays runs test in the sandbox the user gets, and again without
// namespaces (withoutNamespaces), as subtests.
func bothWays(t *testing.T, test func(t *testing.T)) {
	for _, without := range []bool{false, true} {
		t.Run(fmt.Sprint("without namespaces ", without), func(t *testing.T) {
			if without {
				withoutNamespaces(t)
			}
			test(t)
		})
	}
}

// Without namespaces (not root), awl is the child subreaper: what a tool
// left running, setsid'd or double-forked, is ended with the run, after a
// finished call and after a timed-out one. (A SIGKILLed awl's are not,
// unless awl has a cgroup: TestNoProcessOutlivesAKilledAwlInItsCgroup.)
func TestNoProcessOutlivesTheRunWithoutNamespaces(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	withoutNamespaces(t)
	tag := fmt.Sprintf("awl-reap-%d", os.Getpid())
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	if st := f.sb.Status(); st.Enforced.Processes {
		t.Fatalf("status %+v: processes enforced without namespaces", st)
	}
	// What holds is said: the end of the run, not a SIGKILL.
	if w := f.sb.ProcessWarning(); !strings.Contains(w, "is ended when the run ends, but outlives awl if awl is SIGKILLed") {
		t.Errorf("ProcessWarning = %q", w)
	}
	mustOK(t, f.bash(t, marked(tag+"-a")))
	waitAlive(t, tag+"-a", 3)
	res := f.call(t, "bash", map[string]any{"command": marked(tag+"-t") + "; sleep 100", "timeout": 1})
	if !strings.Contains(res.Content, "timed out") {
		t.Fatalf("want a timeout:\n%s", res.Content)
	}
	waitAlive(t, tag+"-t", 1)
	f.sb.Close()
	// Close has killed and reaped them: none is left, not even a zombie.
	if left := alive(tag); len(left) != 0 {
		t.Errorf("processes a confined command started outlived the run: %q", left)
	}
}

// Without namespaces the git directories are writable: the watch covers
// the submodules' repositories, and it looks only once every process a
// tool left is gone, so that nothing writes a hook after the look.
func TestGitWatchWithoutNamespaces(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	withoutNamespaces(t)
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	for _, d := range []string{".git/hooks", ".git/modules/lib/hooks", ".git/modules/lib/modules/deep/hooks"} {
		if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git/HEAD", ".git/modules/lib/HEAD", ".git/modules/lib/modules/deep/HEAD", ".git/modules/lib/modules/deep/config"} {
		if err := os.WriteFile(filepath.Join(cwd, f), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if st.GitReadOnly || st.Enforced.Git {
		t.Fatalf("status %+v: .git read-only without namespaces", st)
	}
	if w := sb.GitWarning(); !strings.Contains(w, "commands may write "+filepath.Join(cwd, ".git")) {
		t.Errorf("GitWarning = %q, want it to say .git is writable", w)
	}
	f := &fixture{cwd: cwd, sb: sb}
	f.tools = toolsFor(cwd, sb)
	tag := fmt.Sprintf("awl-gitwriter-%d", os.Getpid())
	// A writer that outlives the call and keeps planting a hook.
	mustOK(t, f.bash(t, `echo x >> .git/modules/lib/modules/deep/config
setsid -f bash -c 'exec -a `+tag+` bash -c "while :; do echo evil >> .git/modules/lib/hooks/post-checkout; sleep 0.01; done"' </dev/null >/dev/null 2>&1
while [ ! -s .git/modules/lib/hooks/post-checkout ]; do sleep 0.01; done`))
	waitAlive(t, tag, 1)
	changes := sb.GitChanges()
	if left := alive(tag); len(left) != 0 {
		t.Errorf("the writer still runs after the final look: %q", left)
	}
	for _, want := range []string{".git/modules/lib/hooks/post-checkout (added)", ".git/modules/lib/modules/deep/config (changed)"} {
		if !slices.Contains(changes, want) {
			t.Errorf("GitChanges = %q, want %q", changes, want)
		}
	}
}

// toolsFor are the built-in tools working in cwd, confined by sb.
func toolsFor(cwd string, sb *sandbox.Sandbox) map[string]tool.Tool {
	m := map[string]tool.Tool{}
	for _, tl := range tool.Builtins(tool.Env{Dir: cwd, Confine: sb}) {
		m[tl.Name()] = tl
	}
	return m
}
