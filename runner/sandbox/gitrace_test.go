//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// gitWork is a working directory with a .git (hooks/pre-commit.sample in
// it) and a workspace-write sandbox whose namespaces make the .git
// read-only, or the test skips (fails in CI) as TestGitReadOnly does.
func gitWork(t *testing.T, parentWritable bool) (root, cwd string, sb *sandbox.Sandbox) {
	t.Helper()
	requireABI(t, sandbox.ABINetwork)
	root = t.TempDir()
	cwd = filepath.Join(root, "work")
	for _, d := range []string{".git/hooks", "hooks"} {
		if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cwd, d, "pre-commit.sample"), []byte("sample\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var writable []string
	if parentWritable {
		writable = []string{root}
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd, Writable: writable})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	requireNamespaces(t, st)
	if !st.GitReadOnly {
		t.Fatalf("status %+v: .git not read-only", st)
	}
	return root, cwd, sb
}

// gitTree lists what is in dir, each file with its content.
func gitTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails the test when the tree in dir is no longer want.
func sameTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := gitTree(t, dir)
	for k, v := range got {
		if w, ok := want[k]; !ok || w != v {
			t.Errorf("%s: %s is %q, was %q (present before: %v)", dir, k, v, w, ok)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: %s is gone", dir, k)
		}
	}
}

// run calls a tool.
func run(tools map[string]tool.Tool, name string, in map[string]any) tool.Result {
	b, _ := json.Marshal(in)
	return tools[name].Run(context.Background(), b)
}

// A link in the workspace swapped from the working directory itself to
// its .git while the model writes through it (`sub -> .`, then
// `sub -> .git`): the write and edit tools, which awl runs unconfined,
// must never land in the read-only .git, however the swaps fall between
// CheckWrite and the write. A hook planted there would run in the job's
// next git, outside any sandbox (issue 24).
func TestWriteSwapIntoGitRace(t *testing.T) {
	_, cwd, sb := gitWork(t, false)
	git := filepath.Join(cwd, ".git")
	before := gitTree(t, git)
	link := filepath.Join(cwd, "sub")
	if err := os.Symlink(".", link); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // the swapper, as a confined background process could
		defer close(done)
		tmp := link + ".new"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			dest := "."
			if i%2 == 1 {
				dest = ".git"
			}
			os.Remove(tmp)
			os.Symlink(dest, tmp)
			os.Rename(tmp, link)
		}
	}()
	tools := toolsFor(cwd, sb)
	written := 0
	for i := range 300 {
		if res := run(tools, "write", map[string]any{"path": "sub/hooks/pre-commit", "content": "evil\n"}); !res.IsError {
			written++
		}
		run(tools, "write", map[string]any{"path": "sub/hooks/new" + string(rune('a'+i%26)) + "/pre-push", "content": "evil\n"})
		run(tools, "edit", map[string]any{"path": "sub/hooks/pre-commit.sample", "old_string": "sample", "new_string": "sample!", "replace_all": true})
	}
	close(stop)
	<-done
	sameTree(t, git, before)
	if written == 0 {
		t.Errorf("no write got through to the working directory: the race was not run")
	}
}

// swapAfterCheck is the sandbox, with a confined process's swap falling
// just after each CheckWrite: deterministically, the race above at its
// worst.
type swapAfterCheck struct {
	*sandbox.Sandbox
	swap func()
}

func (c swapAfterCheck) CheckWrite(path string) error {
	err := c.Sandbox.CheckWrite(path)
	c.swap()
	return err
}

// The same swap, made between the check and the write every time: each
// write and edit is refused as CheckWrite refuses one into .git, and
// leaves nothing there, not even a parent directory it would create.
func TestWriteSwapIntoGitAfterCheck(t *testing.T) {
	_, cwd, sb := gitWork(t, false)
	git := filepath.Join(cwd, ".git")
	before := gitTree(t, git)
	link := filepath.Join(cwd, "sub")
	c := swapAfterCheck{Sandbox: sb, swap: func() {
		os.Remove(link)
		if err := os.Symlink(".git", link); err != nil {
			t.Error(err)
		}
	}}
	tools := map[string]tool.Tool{}
	for _, tl := range tool.Builtins(tool.Env{Dir: cwd, Confine: c}) {
		tools[tl.Name()] = tl
	}
	note := "(awl sandbox: workspace-write; " + git + " is read-only)"
	for _, call := range []struct {
		name string
		in   map[string]any
	}{
		{"write", map[string]any{"path": "sub/hooks/pre-commit", "content": "evil\n"}},
		{"write", map[string]any{"path": "sub/hooks/deep/er/pre-commit", "content": "evil\n"}},
		{"write", map[string]any{"path": "sub/config", "content": "[core]\n\tfsmonitor = evil\n"}},
		{"edit", map[string]any{"path": "sub/hooks/pre-commit.sample", "old_string": "sample", "new_string": "evil"}},
	} {
		os.Remove(link)
		if err := os.Symlink(".", link); err != nil {
			t.Fatal(err)
		}
		res := run(tools, call.name, call.in)
		mustDenied(t, res, note, call.name+": "+call.in["path"].(string)+": Permission denied")
	}
	sameTree(t, git, before)
	// What the link led to before the swap is still written.
	os.Remove(link)
	os.Symlink(".", link)
	mustOK(t, run(toolsFor(cwd, sb), "write", map[string]any{"path": "sub/hooks/pre-commit", "content": "fine\n"}))
	if b, err := os.ReadFile(filepath.Join(cwd, "hooks", "pre-commit")); err != nil || string(b) != "fine\n" {
		t.Errorf("hooks/pre-commit: %q, %v", b, err)
	}
}

// A confined command may rename the working directory when its parent is
// writable too (--sandbox-writable of the parent): the .git mount goes
// with it, so commands still cannot write it, and nor may the write and
// edit tools at its new path, which CheckWrite's paths no longer name.
// What a confined command cannot do is move a directory into .git, or
// out of it: the descriptor check of the write tools rests on that.
func TestWriteGitAfterWorkspaceRenamed(t *testing.T) {
	root, cwd, sb := gitWork(t, true)
	tools := toolsFor(cwd, sb)
	for _, cmd := range []string{"mkdir d && mv d .git/hooks/d", "mv .git/hooks .git-hooks", "mv .git/hooks/pre-commit.sample x"} {
		res := run(tools, "bash", map[string]any{"command": cmd})
		if !res.IsError || !strings.Contains(res.Content, "Read-only file system") && !strings.Contains(res.Content, "Invalid cross-device link") {
			t.Errorf("%s: want it refused:\n%s", cmd, res.Content)
		}
	}
	moved := filepath.Join(root, "moved")
	git := filepath.Join(moved, ".git")
	res := run(tools, "bash", map[string]any{"command": "cd .. && mv work moved && mkdir work && echo evil > moved/.git/config"})
	if !strings.Contains(res.Content, "moved/.git/config: Read-only file system") {
		t.Fatalf("rename the working directory, then write its .git: want the rename done and the write refused:\n%s", res.Content)
	}
	before := gitTree(t, git)
	note := "(awl sandbox: workspace-write; " + filepath.Join(cwd, ".git") + " is read-only)"
	for _, p := range []string{"../moved/.git/hooks/pre-commit", filepath.Join(git, "config"), filepath.Join(git, "hooks", "new", "pre-push")} {
		mustDenied(t, run(tools, "write", map[string]any{"path": p, "content": "evil\n"}), note, "write: "+p+": Permission denied")
	}
	p := filepath.Join(git, "hooks", "pre-commit.sample")
	mustDenied(t, run(tools, "edit", map[string]any{"path": p, "old_string": "sample", "new_string": "evil"}), note, "edit: "+p+": Permission denied")
	sameTree(t, git, before)
	mustOK(t, run(tools, "write", map[string]any{"path": "../moved/hooks/pre-commit", "content": "fine\n"}))
}

// noDirCheck is the sandbox without its DirChecker: the write tools as
// they were before they judged the directories they open.
type noDirCheck struct{ sb *sandbox.Sandbox }

func (c noDirCheck) Start(cmd *exec.Cmd) error    { return c.sb.Start(cmd) }
func (c noDirCheck) CheckWrite(path string) error { return c.sb.CheckWrite(path) }
func (c noDirCheck) Note() string                 { return c.sb.Note() }
func (c noDirCheck) WriteRoots() []string         { return c.sb.WriteRoots() }

// BenchmarkWriteDirCheck writes a file four directories below the working
// directory (a .git beside them, read-only) with the write tool, with and
// without the directory check, in turn within each iteration (the order
// alternating), so both see the same load: added-us/op is the median of
// the differences, which fsync's outliers move far less than the means.
// checkdir-us/op is CheckDir alone on that directory.
func BenchmarkWriteDirCheck(b *testing.B) {
	cwd := filepath.Join(b.TempDir(), "work")
	deep := filepath.Join(cwd, "a", "b", "c", "d")
	for _, d := range []string{filepath.Join(cwd, ".git", "hooks"), deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil || !st.GitReadOnly {
		b.Skipf("no read-only .git here: %v %+v", err, st)
	}
	defer sb.Close()
	write := func(c tool.Confiner) func() time.Duration {
		w := tool.Builtins(tool.Env{Dir: cwd, Confine: c})[2]
		in, _ := json.Marshal(map[string]any{"path": "a/b/c/d/f.txt", "content": "x\n"})
		return func() time.Duration {
			t0 := time.Now()
			if res := w.Run(context.Background(), in); res.IsError {
				b.Fatal(res.Content)
			}
			return time.Since(t0)
		}
	}
	with, without := write(sb), write(noDirCheck{sb})
	dir, err := os.Open(deep)
	if err != nil {
		b.Fatal(err)
	}
	defer dir.Close()
	var sumWith, sumWithout, sumCheck time.Duration
	diffs := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		var dw, dwo time.Duration
		if i%2 == 0 {
			dw, dwo = with(), without()
		} else {
			dwo, dw = without(), with()
		}
		t0 := time.Now()
		if err := sb.CheckDir(dir); err != nil {
			b.Fatal(err)
		}
		sumCheck += time.Since(t0)
		sumWith, sumWithout = sumWith+dw, sumWithout+dwo
		diffs = append(diffs, dw-dwo)
	}
	n := float64(len(diffs))
	slices.Sort(diffs)
	b.ReportMetric(float64(sumWith.Microseconds())/n, "with-us/op")
	b.ReportMetric(float64(sumWithout.Microseconds())/n, "without-us/op")
	b.ReportMetric(float64(diffs[len(diffs)/2].Nanoseconds())/1e3, "added-us/op")
	b.ReportMetric(float64(sumCheck.Nanoseconds())/n/1e3, "checkdir-us/op")
}

// A directory whose place cannot be told (its ancestors past PATH_MAX
// through the descriptor, here 1400 levels deep) is refused, not allowed.
func TestWriteDirUnknownPlaceRefused(t *testing.T) {
	_, cwd, sb := gitWork(t, false)
	rel := strings.Repeat("d/", 1400) + "f.txt"
	if err := os.MkdirAll(filepath.Join(cwd, filepath.Dir(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(toolsFor(cwd, sb), "write", map[string]any{"path": rel, "content": "x"})
	if !res.IsError || !strings.HasSuffix(res.Content, ": Permission denied\n(awl sandbox: workspace-write; whether the directory is in a read-only git directory cannot be told: file name too long)") {
		t.Errorf("want the write refused:\n%.300s", res.Content)
	}
	mustOK(t, run(toolsFor(cwd, sb), "write", map[string]any{"path": "d/d/f.txt", "content": "x"}))
}
