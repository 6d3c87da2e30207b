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
	"sync"
	"time"
)

// gitWatch is what the sandbox cannot protect but watches: in
// workspace-write, the working directory's git directories are writable
// where awl cannot make them read-only (or the user opted in), and a hook
// or a config setting (core.fsmonitor, core.hooksPath, a filter driver)
// planted there runs in the next git command outside the sandbox, such as
// a later step of a CI job.
//
// It also looks, after each confined command, for what no mount holds: a
// .git replaced or made where git will look (a submodule's directory
// renamed and made anew, cwd's own .git where there was none), and, at
// the end of the run, for every .git made or changed anywhere in the
// working directory during the run.
type gitWatch struct {
	base   string            // the working directory, links resolved
	dirs   []string          // allGitDirs
	before map[string]string // file -> digest
	start  time.Time         // when the sandbox was made

	mu sync.Mutex
	// ids are the identities of dirs and of base/.git when the sandbox
	// was made; last the digests at the last look (where .git is not
	// read-only); told the changes notify was told of.
	ids    map[string]fileID
	last   map[string]string
	told   map[string]bool
	notify func(change string)
	looked bool // a confined command ran: the end walks the tree
}

// watchGit records the identities of the working directory's git
// directories and .git files (allGitDirs), and the config and hooks in
// them.
func (s *Sandbox) watchGit() {
	if s.Mode != WorkspaceWrite {
		return
	}
	dirs, missing := gitPaths(s.Cwd)
	// A missing include is watched as a file: made, it is "(added)".
	dirs = append(dirs, missing...)
	base := s.Cwd
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	w := &gitWatch{base: base, dirs: dirs, before: gitFiles(base, dirs), start: time.Now(), told: map[string]bool{}}
	w.ids = w.identities()
	w.last = w.before
	s.git = w
}

// gitFiles digests what of dirs (allGitDirs) git acts on: the files
// that are .git files; in a git directory and the submodule repositories
// under its modules (nested ones included), config, config.worktree,
// commondir, gitdir and every file in hooks and info, and a linked
// worktree's config.worktree, commondir and gitdir; in any other
// directory (a hooks directory core.hooksPath names), every file. Each
// file's mode and contents. Files are named relative to cwd.
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
	addDir := func(dir string) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			add(filepath.Join(dir, e.Name()))
		}
	}
	var repo func(dir string, depth int)
	repo = func(dir string, depth int) {
		for _, f := range []string{"config", "config.worktree", "commondir", "gitdir"} {
			add(filepath.Join(dir, f))
		}
		addDir(filepath.Join(dir, "hooks"))
		addDir(filepath.Join(dir, "info"))
		wts, _ := filepath.Glob(filepath.Join(dir, "worktrees", "*"))
		for _, wt := range wts {
			for _, f := range []string{"config.worktree", "commondir", "gitdir"} {
				add(filepath.Join(wt, f))
			}
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
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case !st.IsDir():
			add(d)
		case isGitDir(d):
			repo(d, 0)
		default:
			addDir(d)
		}
	}
	return out
}

// isGitDir reports whether dir looks like a git directory (it has HEAD).
func isGitDir(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "HEAD"))
	return err == nil || filepath.Base(dir) == ".git"
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
	w := s.git
	w.mu.Lock()
	defer w.mu.Unlock()
	out := diffDigests(w.before, gitFiles(w.base, w.dirs))
	out = append(out, w.replaced(w.ids)...)
	if w.looked {
		out = append(out, w.created()...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// What a look already told (and the caller warned of) is not said
	// twice.
	return slices.DeleteFunc(out, func(c string) bool { return w.told[c] })
}

// diffDigests lists the files added, changed and removed from before to
// after: "f (added)".
func diffDigests(before, after map[string]string) []string {
	var out []string
	for f, d := range after {
		switch b, ok := before[f]; {
		case !ok:
			out = append(out, f+" (added)")
		case b != d:
			out = append(out, f+" (changed)")
		}
	}
	for f := range before {
		if _, ok := after[f]; !ok {
			out = append(out, f+" (removed)")
		}
	}
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

// allGitDirs are what git trusts of cwd's repositories and lies where a
// confined command might write, symbolic links resolved, none inside
// another: cwd's .git (a directory; or a file, and the git directory it
// names and that one's common directory), every submodule's .git (a file
// in the worktree, or an embedded directory), found through each
// .gitmodules, nested ones included, the .git files of the linked
// worktrees a common directory lists (worktrees/*/gitdir), and the hooks
// directory core.hooksPath names (husky's .husky). A git outside the
// sandbox acts on each: a .git file decides which directory is a
// repository's, and so whose config and hooks run.
func allGitDirs(cwd string) []string {
	dirs, _ := gitPaths(cwd)
	return dirs
}

// gitPaths are allGitDirs, and the files the repositories' configuration
// includes and the hooks directories it names (core.hooksPath) that do
// not exist (yet): a command that makes one in the workspace sets what
// the next git does.
func gitPaths(cwd string) (dirs, missing []string) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil || seen[r] {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	var repo func(root string, depth int)
	repo = func(root string, depth int) {
		dot := filepath.Join(root, ".git")
		gd, common := gitDirOf(dot)
		if gd == "" {
			return
		}
		add(dot)
		add(gd)
		add(common)
		tr := configTrust(root, gd, common)
		for _, h := range tr.hooks {
			add(h)
		}
		for _, f := range tr.includes {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				add(f)
			} else if err != nil && !slices.Contains(missing, f) {
				missing = append(missing, f)
			}
		}
		for _, h := range tr.noHooks {
			if !slices.Contains(missing, h) {
				missing = append(missing, h)
			}
		}
		wts, _ := filepath.Glob(filepath.Join(common, "worktrees", "*", "gitdir"))
		for _, f := range wts {
			if b, err := os.ReadFile(f); err == nil {
				if wt := strings.TrimSpace(string(b)); filepath.IsAbs(wt) {
					if st, err := os.Lstat(wt); err == nil && st.Mode().IsRegular() {
						add(wt)
					}
				}
			}
		}
		if depth >= 8 {
			return
		}
		for _, sub := range submodulePaths(root) {
			repo(filepath.Join(root, sub), depth+1)
		}
	}
	repo(cwd, 0)
	// Outermost first; none inside another, which a mount of the outer
	// one already holds.
	slices.SortFunc(out, func(a, b string) int { return len(a) - len(b) })
	var kept []string
	for _, p := range out {
		if !slices.ContainsFunc(kept, func(k string) bool { return within(p, k) }) {
			kept = append(kept, p)
		}
	}
	return kept, missing
}

// missingTrusted are the files the repositories' configuration includes,
// and the hooks directories it names, that do not exist and lie in a
// directory commands may write: no mount can hold a name that does not
// exist, so a command may make one.
func missingTrusted(p Policy) []string {
	if p.Mode == Off {
		return nil
	}
	_, missing := gitPaths(p.Cwd)
	var out []string
	for _, f := range missing {
		rf := f
		if d, err := filepath.EvalSymlinks(filepath.Dir(f)); err == nil {
			rf = filepath.Join(d, filepath.Base(f))
		}
		for _, w := range p.WritableDirs() {
			rw, err := filepath.EvalSymlinks(w)
			if within(f, w) || err == nil && within(rf, rw) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// gitDirOf is the git directory that dot (a .git directory or file)
// makes a repository's, and its common directory (itself, or what its
// commondir file names): "" when dot is neither.
func gitDirOf(dot string) (gitDir, common string) {
	st, err := os.Lstat(dot)
	switch {
	case err != nil:
		return "", ""
	case st.IsDir():
		gitDir = dot
	case st.Mode().IsRegular():
		b, err := os.ReadFile(dot)
		if err != nil {
			return "", ""
		}
		gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return "", ""
		}
		if gitDir = strings.TrimSpace(gd); !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(filepath.Dir(dot), gitDir)
		}
	default:
		return "", ""
	}
	common = gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		if common = strings.TrimSpace(string(c)); !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	return gitDir, common
}

// submodulePaths are the paths .gitmodules in root gives its submodules
// (relative to root), those that stay inside it.
func submodulePaths(root string) []string {
	b, err := os.ReadFile(filepath.Join(root, ".gitmodules"))
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		if v = filepath.Clean(strings.Trim(strings.TrimSpace(v), `"`)); v != "." && filepath.IsLocal(v) {
			out = append(out, v)
		}
	}
	return out
}

// GitWarning says, when commands may write the working directory's git
// directories although the user did not ask for it (workspace-write where
// awl cannot make a mount namespace to make them read-only), that they
// may: "" otherwise.
func (s *Sandbox) GitWarning() string {
	if s == nil || s.Mode == Off {
		return ""
	}
	if inc := missingTrusted(s.Policy); len(inc) > 0 && s.Mode == WorkspaceWrite && s.status.GitReadOnly {
		return fmt.Sprintf("--sandbox: git's configuration includes or takes hooks from %s, which does not exist and lies where commands may write: "+
			"a command that makes it sets what a later git runs (core.fsmonitor, core.hooksPath, a hook); awl warns after the run when one is made", andList(inc))
	}
	if s.Mode != WorkspaceWrite || s.status.GitReadOnly {
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
