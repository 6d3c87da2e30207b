package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitWatch is what the sandbox cannot protect but watches: in
// workspace-write, the working directory's .git is writable, and a hook or
// a config setting (core.fsmonitor, core.hooksPath, a filter driver)
// planted there runs in the next git command outside the sandbox, such as
// a later step of a CI job.
type gitWatch struct {
	dir    string            // the .git directory
	before map[string]string // file, relative to dir's parent -> digest
}

// watchGit records .git/config and .git/hooks/* under cwd, when cwd holds
// a .git directory and it is writable.
func (s *Sandbox) watchGit() {
	if s.Mode != WorkspaceWrite {
		return
	}
	dir := filepath.Join(s.Cwd, ".git")
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return
	}
	s.git = &gitWatch{dir: dir, before: gitFiles(dir)}
}

// gitFiles digests config and every file in hooks: its mode and contents.
func gitFiles(dir string) map[string]string {
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
		rel, _ := filepath.Rel(filepath.Dir(dir), path)
		out[rel] = fmt.Sprintf("%x", h.Sum(nil))
	}
	add(filepath.Join(dir, "config"))
	hooks, _ := os.ReadDir(filepath.Join(dir, "hooks"))
	for _, e := range hooks {
		add(filepath.Join(dir, "hooks", e.Name()))
	}
	return out
}

// GitChanges lists what changed since the sandbox was made in the
// working directory's .git/config and .git/hooks, which confined commands
// could write (workspace-write) and git outside the sandbox would act on:
// ".git/hooks/post-checkout (added)", ".git/config (changed)". Empty when
// nothing changed or the sandbox watches no .git.
func (s *Sandbox) GitChanges() []string {
	if s == nil || s.git == nil {
		return nil
	}
	after := gitFiles(s.git.dir)
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
	dot := filepath.Join(p.Cwd, ".git")
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
			gd = filepath.Join(p.Cwd, gd)
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
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		optIn := false
		for _, w := range p.Writable {
			if rw, err := filepath.EvalSymlinks(w); err == nil && within(rw, r) {
				optIn = true
			}
		}
		if !optIn && !slices.Contains(out, r) {
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
	return fmt.Sprintf("--sandbox workspace-write: commands may write %s (hooks and config a later git runs): "+
		"awl cannot make it read-only here (that needs a mount namespace, so root); it warns after the run when config or hooks changed", andList(dirs))
}
