package tool

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The files that say what a walk skips. Inside a git repository, .gitignore
// files and .git/info/exclude apply as git applies them; .ignore files apply
// everywhere, as ripgrep reads them, and take precedence over the git ones.
const (
	gitignoreName = ".gitignore"
	ignoreName    = ".ignore"
)

// maxIgnoreFileBytes caps how much of one ignore file is read.
const maxIgnoreFileBytes = 1 << 20

// matchResult is what one ignore line says about an entry.
type matchResult uint8

const (
	noMatch matchResult = iota // the line does not apply
	exclude                    // the line ignores the entry
	include                    // a "!" line takes it back
)

// ignorePattern is one line of an ignore file, matched as git matches it:
// each slash-separated segment with fnmatch rules (path.Match, which reads
// "*", "?", "[…]", "[^…]" and "\" as git does), "**" as any number of
// segments. A pattern is asked only about the entry itself, never its
// parents: the walk never descends into an ignored directory, and an
// explicitly named root is never checked.
type ignorePattern struct {
	// name is the glob of a pattern with no slash before its end: it
	// matches the entry's name at any depth.
	name string
	// segs is an anchored pattern (a slash before its end): it matches
	// the whole path relative to the ignore file's directory. minSegs is
	// the fewest segments it matches: "a/**" matches below a, not a.
	segs    pattern
	minSegs int
	// dirOnly is a trailing "/"; negate a leading "!".
	dirOnly, negate bool
}

// parseIgnoreFile parses the text of an ignore file. Blank lines and
// comments are skipped; `[!…]` is read as git reads it, a negated class.
func parseIgnoreFile(data []byte) []ignorePattern {
	var ps []ignorePattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFileBytes)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			line = strings.TrimPrefix(line, "\uFEFF")
			first = false
		}
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' || strings.TrimSpace(line) == "" {
			continue
		}
		line = strings.ReplaceAll(line, "[!", "[^")
		var ip ignorePattern
		body, negate := strings.CutPrefix(line, "!")
		ip.negate = negate
		if !strings.HasSuffix(body, `\ `) {
			body = strings.TrimRight(body, " ")
		}
		body, ip.dirOnly = strings.CutSuffix(body, "/")
		if body == "" {
			continue
		}
		if !strings.Contains(body, "/") {
			ip.name = body
			ps = append(ps, ip)
			continue
		}
		ip.segs = strings.Split(strings.TrimPrefix(body, "/"), "/")
		ip.minSegs = len(ip.segs)
		if ip.segs[len(ip.segs)-1] == "**" {
			ip.minSegs++ // "**" at the end needs something under the directory
		}
		for _, s := range ip.segs {
			if s == "**" {
				ip.minSegs-- // "**" may match no segment
			}
		}
		ps = append(ps, ip)
	}
	return ps
}

// match says what p decides about the entry at path (relative to the ignore
// file's directory).
func (p ignorePattern) match(path []string, isDir bool) matchResult {
	switch {
	case p.dirOnly && !isDir:
		return noMatch
	case p.segs == nil:
		if !matchSegment(p.name, path[len(path)-1]) {
			return noMatch
		}
	case len(path) < p.minSegs || !p.segs.match(path):
		return noMatch
	}
	if p.negate {
		return include
	}
	return exclude
}

// ignoreLevel holds the rules of one directory: its .ignore and .gitignore
// files and, at a repository's top, .git/info/exclude.
type ignoreLevel struct {
	parent *ignoreLevel
	// base is the walk root's path relative to this directory, for a
	// directory at or above the walk root; skip is how many leading
	// segments of a walk-relative path lead to a directory below the root.
	base []string
	skip int
	// ign are the .ignore patterns, git the .gitignore ones with
	// .git/info/exclude before them (later lines win).
	ign, git []ignorePattern
}

// ignoreRules is the stack of levels that apply to a directory in a walk.
// It is immutable once built, so walkers share it freely.
type ignoreRules struct {
	top    *ignoreLevel // deepest level with rules, or nil
	inRepo bool         // inside a git repository: the git rules apply
}

// ignored reports whether the entry at rel (walk-relative segments) is
// ignored. Any .ignore decision wins over any .gitignore one; within each
// kind the deepest directory's last matching line decides, as in ripgrep.
func (r *ignoreRules) ignored(rel []string, isDir bool, scratch *[]string) bool {
	if r == nil || r.top == nil {
		return false
	}
	for _, kind := range [2]bool{false, true} {
		for l := r.top; l != nil; l = l.parent {
			ps := l.ign
			if kind {
				if !r.inRepo {
					break
				}
				ps = l.git
			}
			if len(ps) == 0 || len(rel) <= l.skip {
				continue
			}
			path := rel[l.skip:]
			if len(l.base) > 0 {
				*scratch = append(append((*scratch)[:0], l.base...), rel...)
				path = *scratch
			}
			for i := len(ps) - 1; i >= 0; i-- {
				switch ps[i].match(path, isDir) {
				case exclude:
					return true
				case include:
					return false
				}
			}
		}
	}
	return false
}

// push returns the rules for the directory at walk-relative depth skip,
// whose entries are names: it reads the ignore files among them.
func (r *ignoreRules) push(dir string, skip int, names func(string) bool) *ignoreRules {
	var lvl ignoreLevel
	inRepo := r.inRepo
	if names(".git") {
		inRepo = true
		lvl.git = readExclude(filepath.Join(dir, ".git"))
	}
	if names(gitignoreName) {
		lvl.git = append(lvl.git, readIgnore(filepath.Join(dir, gitignoreName))...)
	}
	if names(ignoreName) {
		lvl.ign = readIgnore(filepath.Join(dir, ignoreName))
	}
	if len(lvl.git) == 0 && len(lvl.ign) == 0 {
		if inRepo == r.inRepo {
			return r
		}
		return &ignoreRules{top: r.top, inRepo: inRepo}
	}
	lvl.parent, lvl.skip = r.top, skip
	return &ignoreRules{top: &lvl, inRepo: inRepo}
}

// rootIgnoreRules returns the rules of the directories above root for a
// walk rooted there: .gitignore up to the repository's top, .ignore up to
// the file system's. Root's own come from push.
func rootIgnoreRules(root string) *ignoreRules {
	abs, err := filepath.Abs(root)
	if err != nil {
		return &ignoreRules{}
	}
	// dirs[0] is root; each next one is its parent.
	var dirs []string
	for d := abs; ; {
		dirs = append(dirs, d)
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	repoTop := -1 // index in dirs of the repository's top
	for i, d := range dirs {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			repoTop = i
			break
		}
	}
	rules := &ignoreRules{inRepo: repoTop >= 0}
	for i := len(dirs) - 1; i >= 1; i-- {
		var lvl ignoreLevel
		if i <= repoTop {
			if i == repoTop {
				lvl.git = readExclude(filepath.Join(dirs[i], ".git"))
			}
			lvl.git = append(lvl.git, readIgnore(filepath.Join(dirs[i], gitignoreName))...)
		}
		lvl.ign = readIgnore(filepath.Join(dirs[i], ignoreName))
		if len(lvl.git) == 0 && len(lvl.ign) == 0 {
			continue
		}
		rel, err := filepath.Rel(dirs[i], abs)
		if err != nil {
			continue
		}
		lvl.base = strings.Split(filepath.ToSlash(rel), "/")
		lvl.parent = rules.top
		rules.top = &lvl
	}
	return rules
}

// readIgnore reads an ignore file; a missing or unreadable one has no rules.
func readIgnore(file string) []ignorePattern {
	data, ok := readSmallFile(file)
	if !ok {
		return nil
	}
	return parseIgnoreFile(data)
}

// readSmallFile reads up to maxIgnoreFileBytes of file if it is a regular
// file (or a link to one). Anything else, a named pipe above all, is left
// alone: a repository is untrusted input.
func readSmallFile(file string) ([]byte, bool) {
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	f, err := openSearchFile(file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	return data, err == nil
}

// readExclude reads info/exclude of the repository whose .git entry is
// dotGit: a directory, or a file pointing at one (a worktree or submodule).
func readExclude(dotGit string) []ignorePattern {
	gitDir := dotGit
	if st, err := os.Stat(dotGit); err != nil {
		return nil
	} else if !st.IsDir() {
		data, ok := readSmallFile(dotGit)
		if !ok {
			return nil
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return nil
		}
		gitDir = strings.TrimSpace(target)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(filepath.Dir(dotGit), gitDir)
		}
		// A worktree keeps info/exclude in the common directory.
		if common, ok := readSmallFile(filepath.Join(gitDir, "commondir")); ok {
			c := strings.TrimSpace(string(common))
			if !filepath.IsAbs(c) {
				c = filepath.Join(gitDir, c)
			}
			gitDir = c
		}
	}
	return readIgnore(filepath.Join(gitDir, "info", "exclude"))
}
