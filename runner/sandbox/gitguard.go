package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitWatch is what the sandbox cannot protect but watches: in
// workspace-write, the working directory's git directories are writable
// where awl cannot make them read-only (or the user opted in), and a hook
// or a config setting (core.fsmonitor, core.hooksPath, a filter driver)
// planted there runs in the next git command outside the sandbox, such as
// a later step of a CI job.
type gitWatch struct {
	base   string            // the working directory, links resolved
	dirs   []string          // the git directories
	before map[string]string // file -> digest
}

// watchGit records the config and hooks of the working directory's git
// directories (its .git, or the gitdir and common directory a .git file
// names) and of every submodule's repository in their modules.
func (s *Sandbox) watchGit() {
	if s.Mode != WorkspaceWrite {
		return
	}
	dirs := allGitDirs(s.Cwd)
	if len(dirs) == 0 {
		return
	}
	base := s.Cwd
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	s.git = &gitWatch{base: base, dirs: dirs, before: gitFiles(base, dirs)}
}

// gitFiles digests, in each of dirs and the submodule repositories under
// its modules (nested ones included), config and every file in hooks:
// its mode and contents. Files are named relative to cwd.
func gitFiles(cwd string, dirs []string) map[string]string {
	out := map[string]string{}
	add := func(path string) {
		st, err := os.Lstat(path)
		if err != nil || st.IsDir() {
			return
		}
		h := sha256.New()
		fmt.Fprintf(h, "%v\x00", st.Mode())
		if st.Mode().IsRegular() {
			if f, err := os.Open(path); err == nil {
				io.Copy(h, io.LimitReader(f, 1<<20))
				f.Close()
			}
		} else if target, err := os.Readlink(path); err == nil {
			io.WriteString(h, target)
		}
		rel, err := filepath.Rel(cwd, path)
		if err != nil {
			rel = path
		}
		out[rel] = fmt.Sprintf("%x", h.Sum(nil))
	}
	var repo func(dir string, depth int)
	repo = func(dir string, depth int) {
		add(filepath.Join(dir, "config"))
		hooks, _ := os.ReadDir(filepath.Join(dir, "hooks"))
		for _, e := range hooks {
			add(filepath.Join(dir, "hooks", e.Name()))
		}
		if depth >= 8 {
			return
		}
		// A submodule named a/b has its repository in modules/a/b: any
		// directory under modules holding a config or hooks is one.
		filepath.WalkDir(filepath.Join(dir, "modules"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || p == filepath.Join(dir, "modules") {
				return nil
			}
			if _, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil {
				repo(p, depth+1)
				return fs.SkipDir
			}
			return nil
		})
	}
	for _, d := range dirs {
		repo(d, 0)
	}
	return out
}

// GitChanges lists what changed since the sandbox was made in the config
// and hooks of the working directory's git directories and submodule
// repositories, which confined commands could write (workspace-write) and
// git outside the sandbox would act on: ".git/hooks/post-checkout
// (added)", ".git/modules/sub/config (changed)". Empty when nothing
// changed or the sandbox watches no .git. It is the end of the run for
// the tools: first it ends every process a tool left (sweep), so that
// nothing writes there after the look.
func (s *Sandbox) GitChanges() []string {
	if s == nil || s.git == nil {
		return nil
	}
	// Only once no tool process is left to write after the look.
	s.sweep()
	if s.ns != nil && !s.status.GitReadOnly {
		// Namespaces that could not make .git read-only: their init's
		// end is every tool process's.
		s.ns.close()
	}
	after := gitFiles(s.git.base, s.git.dirs)
	var out []string
	for f, d := range after {
		switch b, ok := s.git.before[f]; {
		case !ok:
			out = append(out, f+" (added)")
		case b != d:
			out = append(out, f+" (changed)")
		}
	}
	for f := range s.git.before {
		if _, ok := after[f]; !ok {
			out = append(out, f+" (removed)")
		}
	}
	slices.Sort(out)
	return out
}

// gitDirs are the git directories of the working directory that commands
// must not write in workspace-write: its .git directory (with
// .git/modules, the submodules' repositories, in it), or for a worktree
// or a submodule, the directory its .git file names and that directory's
// common directory (where config and hooks live). A directory under a
// --sandbox-writable one that lies in it, or is it, is left writable: that
// is how a job that commits opts in.
func gitDirs(p Policy) []string {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	var out []string
	for _, r := range allGitDirs(p.Cwd) {
		optIn := false
		for _, w := range p.Writable {
			if rw, err := filepath.EvalSymlinks(w); err == nil && within(rw, r) {
				optIn = true
			}
		}
		if !optIn {
			out = append(out, r)
		}
	}
	return out
}

// gitWritable reports whether a --sandbox-writable directory of p holds
// one of the working directory's git directories or lies in one.
func gitWritable(p Policy) bool {
	for _, g := range allGitDirs(p.Cwd) {
		for _, w := range p.Writable {
			if rw, err := filepath.EvalSymlinks(w); err == nil && (within(rw, g) || within(g, rw)) {
				return true
			}
		}
	}
	return false
}

// allGitDirs are the git directories of cwd, symbolic links resolved: its
// .git directory, or the directory its .git file names and that
// directory's common directory.
func allGitDirs(cwd string) []string {
	dot := filepath.Join(cwd, ".git")
	st, err := os.Lstat(dot)
	if err != nil {
		return nil
	}
	var dirs []string
	switch {
	case st.IsDir():
		dirs = append(dirs, dot)
	case st.Mode().IsRegular():
		b, err := os.ReadFile(dot)
		if err != nil {
			return nil
		}
		gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return nil
		}
		gd = strings.TrimSpace(gd)
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(cwd, gd)
		}
		dirs = append(dirs, gd)
		if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
			common := strings.TrimSpace(string(c))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gd, common)
			}
			dirs = append(dirs, common)
		}
	}
	var out []string
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// GitWarning says, when commands may write the working directory's git
// directories although the user did not ask for it (workspace-write where
// awl cannot make a mount namespace to make them read-only), that they
// may: "" otherwise.
func (s *Sandbox) GitWarning() string {
	if s == nil || s.Mode != WorkspaceWrite || s.status.GitReadOnly {
		return ""
	}
	dirs := gitDirs(s.Policy)
	if len(dirs) == 0 {
		return ""
	}
	why := "that needs a mount namespace: " + s.namespacesMissing()
	if s.ns != nil {
		why = "the namespaces' init could not bind-mount it read-only"
	}
	return fmt.Sprintf("--sandbox workspace-write: commands may write %s (hooks and config a later git runs): "+
		"awl cannot make it read-only here (%s); it warns after the run when config or hooks changed", andList(dirs), why)
}
