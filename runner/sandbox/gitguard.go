package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
