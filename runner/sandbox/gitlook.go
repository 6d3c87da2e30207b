package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// OnGitChange makes the sandbox call notify, from any goroutine, with
// each change to what git trusts in the working directory that the look
// after a confined command finds, as GitChanges words it: a .git
// replaced or made where git will look ("sub/.git (created)"), and, where
// .git is not read-only, a config or hook changed. GitChanges then leaves
// out what notify was told.
func (s *Sandbox) OnGitChange(notify func(change string)) {
	if s == nil || s.git == nil {
		return
	}
	s.git.mu.Lock()
	s.git.notify = notify
	s.git.mu.Unlock()
}

// fileID is what tells a file apart from one put in its place, or
// changed: for a directory, its device and inode; for a file, its size
// and change time too (modification time where there is none). A
// missing file has the zero fileID.
type fileID struct {
	dev, ino uint64
	size     int64
	ctime    int64 // Unix nanoseconds
	mode     fs.FileMode
}

func identity(path string, dir bool) fileID {
	st, err := os.Lstat(path)
	if err != nil {
		return fileID{}
	}
	id := fileID{mode: st.Mode().Type()}
	var ctime int64
	id.dev, id.ino, ctime = statIDs(st)
	if !dir {
		id.size, id.ctime = st.Size(), ctime
		if ctime == 0 {
			id.ctime = st.ModTime().UnixNano()
		}
	}
	return id
}

// identities are those of w.dirs and of base/.git (which may not exist:
// a tool may make one).
func (w *gitWatch) identities() map[string]fileID {
	ids := map[string]fileID{}
	for _, p := range append(slices.Clone(w.dirs), filepath.Join(w.base, ".git")) {
		st, err := os.Lstat(p)
		ids[p] = identity(p, err == nil && st.IsDir())
	}
	return ids
}

// replaced lists what of ids is no longer what it was: ".git (created)",
// "sub/.git (replaced)", "sub/.git (removed)".
func (w *gitWatch) replaced(ids map[string]fileID) []string {
	var out []string
	for p, was := range ids {
		now := identity(p, was.mode.IsDir() || was == fileID{})
		if now == was || was.mode.IsDir() && now.mode.IsDir() && now.dev == was.dev && now.ino == was.ino {
			continue
		}
		rel, err := filepath.Rel(w.base, p)
		if err != nil {
			rel = p
		}
		switch {
		case was == fileID{}:
			out = append(out, rel+" (created)")
		case now == fileID{}:
			out = append(out, rel+" (removed)")
		case was.mode.IsDir() || now.mode != was.mode || now.dev != was.dev || now.ino != was.ino:
			out = append(out, rel+" (replaced)")
		default:
			out = append(out, rel+" (changed)")
		}
	}
	return out
}

// lookGit is the look after a confined command: the identities of the
// .git files and directories (a few lstat calls), and where .git is not
// read-only, the digests of its config and hooks. Each change found is
// told once.
func (s *Sandbox) lookGit() {
	w := s.git
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.looked = true
	found := w.replaced(w.ids)
	if !s.status.GitReadOnly && len(w.dirs) > 0 {
		now := gitFiles(w.base, w.dirs)
		found = append(found, diffDigests(w.last, now)...)
		w.last = now
	}
	if w.notify == nil {
		return
	}
	slices.Sort(found)
	for _, c := range found {
		if !w.told[c] {
			w.told[c] = true
			w.notify(c)
		}
	}
}

// ran records that a confined command was started: the end of the run
// walks the working directory for a .git it made, whether or not the look
// after it has run yet (it runs once the command has exited, on a
// goroutine of its own, and a run may end at once).
func (w *gitWatch) ran() {
	w.mu.Lock()
	w.looked = true
	w.mu.Unlock()
}

// maxWalk bounds the end of the run's walk of the working directory for
// .git entries made during the run (a variable for the tests).
var maxWalk = 200000

// created lists the .git entries in the working directory (at most
// maxWalk entries looked at) made, moved or changed since the sandbox
// was made, but those allGitDirs holds: "lib/x/.git (created or
// changed)". A .git directory is not walked into; of one that was there
// before (a repository checked out inside the working directory that is
// no submodule, which no mount holds), what git trusts in it that
// changed is listed: "tools/b/.git/config (changed)". A walk cut short
// says so: a command could otherwise hide a .git it made behind as many
// files as the bound.
func (w *gitWatch) created() []string {
	var out []string
	// File times come from a clock that may lag the one start was read
	// from by a tick.
	since := w.start.Add(-10 * time.Millisecond).UnixNano()
	rel := func(p string) string {
		r, _ := filepath.Rel(w.base, p)
		return r
	}
	n := 0
	filepath.WalkDir(w.base, func(p string, d fs.DirEntry, err error) error {
		if n++; n > maxWalk {
			out = append(out, fmt.Sprintf("any .git made past the first %d entries of the working directory (not looked for)", maxWalk))
			return filepath.SkipAll
		}
		if err != nil || d.Name() != ".git" {
			return nil
		}
		if _, known := w.ids[p]; !known {
			if id := identity(p, false); id != (fileID{}) && id.ctime >= since {
				out = append(out, rel(p)+" (created or changed)")
			} else if d.IsDir() {
				for _, f := range trustChanged(p, since) {
					out = append(out, rel(f)+" (changed)")
				}
			}
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// trustChanged lists what git trusts in the git directory dir (config,
// config.worktree, commondir, gitdir, the hooks and info directories and
// every file in them) whose change time is since or later.
func trustChanged(dir string, since int64) []string {
	var out []string
	check := func(p string) {
		if id := identity(p, false); id != (fileID{}) && id.ctime >= since {
			out = append(out, p)
		}
	}
	for _, f := range []string{"config", "config.worktree", "commondir", "gitdir"} {
		check(filepath.Join(dir, f))
	}
	for _, sub := range []string{"hooks", "info"} {
		d := filepath.Join(dir, sub)
		check(d)
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			check(filepath.Join(d, e.Name()))
		}
	}
	return out
}
