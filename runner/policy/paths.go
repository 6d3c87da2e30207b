package policy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// pathPattern is the pattern of a file tool's rule, read(src/**): a glob
// of slash-separated segments in which * ? [..] match within a segment and
// a segment ** matches any number of segments, none included. A relative
// pattern is judged against the path relative to the run's directory, an
// absolute one against the absolute path.
type pathPattern struct {
	segs []string
	abs  bool
}

func parsePathPattern(p string) (*pathPattern, error) {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "~") {
		return nil, errors.New("~ is not expanded in a path pattern: write the absolute path")
	}
	abs := strings.HasPrefix(p, "/")
	if strings.HasSuffix(p, "/") {
		p += "**" // a directory: everything in it
	}
	p = path.Clean(p)
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %v", p, err)
		}
	}
	return &pathPattern{segs: segs, abs: abs}, nil
}

// match reports whether the pattern matches the path, given relative to
// the run's directory (rel) and absolute (abs).
func (pp *pathPattern) match(rel, abs string) bool {
	if pp.abs {
		return matchSegs(pp.segs, strings.Split(strings.TrimPrefix(abs, "/"), "/"))
	}
	if rel == "." {
		return matchSegs(pp.segs, nil)
	}
	if (rel == ".." || strings.HasPrefix(rel, "../")) && pp.segs[0] != ".." {
		return false // outside the run's directory: only a pattern that says so
	}
	return matchSegs(pp.segs, strings.Split(rel, "/"))
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for k := 0; k <= len(segs); k++ {
				if matchSegs(pat[1:], segs[k:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// HasPathRules reports whether a rule with a path pattern applies to the
// tool name: when none does, the tool never asks CheckPath.
func (p *Policy) HasPathRules(tool string) bool {
	if p == nil {
		return false
	}
	has := func(r Rule) bool { return r.path != nil && r.appliesTo(tool) }
	return slices.ContainsFunc(p.allow, has) || slices.ContainsFunc(p.deny, has)
}

func (p *Policy) hasWriteRules() bool { return p.HasPathRules("write") }

// abs returns path made absolute against the run's directory, its ".."
// left for CheckPath to resolve both as written and as the kernel does.
func (p *Policy) abs(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return p.dir + "/" + name
}

// CheckPath judges the absolute path a tool opens: as written ('..'
// resolved) and with its symbolic links followed as far as it exists, both
// must be allowed, and neither denied. The tools call it at the moment
// they open the path, with the path they really open.
func (p *Policy) CheckPath(tool, abs string) *Denial {
	return p.checkPath(tool, abs, nil)
}

// checkPath is CheckPath; dirs, when not nil, keeps the directories
// resolved so far, for the redirections of one command.
func (p *Policy) checkPath(tool, abs string, dirs map[string]string) *Denial {
	if p == nil || !p.HasPathRules(tool) {
		return nil
	}
	lexical := filepath.Clean(abs)
	var real string
	if dirs == nil {
		real = resolveExisting(abs)
	} else {
		dir, base := filepath.Split(abs)
		rd, ok := dirs[dir]
		if !ok {
			rd = resolveExisting(dir)
			dirs[dir] = rd
		}
		real = resolveFrom(rd, []string{base})
	}
	forms := []string{lexical}
	if real != lexical {
		forms = append(forms, real)
	}
	for _, f := range forms {
		if d := p.judgePath(tool, f); d != nil {
			if f != lexical {
				d.Reason = fmt.Sprintf("%s leads to %s: %s", abs, f, d.Reason)
			}
			return d
		}
	}
	return nil
}

// judgePath judges one form of a path by the rules of tool.
func (p *Policy) judgePath(tool, abs string) *Denial {
	rels := p.rels(abs)
	matches := func(r Rule) bool {
		if r.path == nil || !r.appliesTo(tool) {
			return false
		}
		return slices.ContainsFunc(rels, func(rel string) bool { return r.path.match(rel, abs) })
	}
	for _, r := range p.deny {
		if matches(r) {
			return &Denial{Tool: tool, Rule: r.Text, Reason: fmt.Sprintf("%s matches it", abs)}
		}
	}
	if p.allowsWhole(tool) {
		return nil
	}
	var allowed []string
	for _, r := range p.allow {
		if matches(r) {
			return nil
		}
		if r.path != nil && r.appliesTo(tool) {
			allowed = append(allowed, r.Text)
		}
	}
	return &Denial{Tool: tool, Reason: fmt.Sprintf("%s is not allowed by any rule (allowed: %s)", abs, strings.Join(allowed, ", "))}
}

// rels returns abs relative to the run's directory, as written and with
// the directory's own links resolved ("/tmp" may be "/private/tmp").
func (p *Policy) rels(abs string) []string {
	var out []string
	for _, d := range []string{p.dir, p.realDir} {
		if d == "" {
			continue
		}
		if rel, err := filepath.Rel(d, abs); err == nil && !slices.Contains(out, filepath.ToSlash(rel)) {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// resolveExisting resolves the symbolic links of path as far as it exists,
// a dangling link's target included, and appends the rest unchanged (as
// realpath -m does): where a write through the path would land.
//
// A ".." steps out of the directory reached so far, links resolved, as the
// kernel does: src/link/.. is the parent of link's target, not src.
func resolveExisting(path string) string {
	if !filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return resolveFrom("/", strings.Split(strings.TrimPrefix(path, "/"), "/"))
}

// resolveFrom is resolveExisting of cur, a directory whose path holds no
// link, followed by the elements rest.
func resolveFrom(cur string, rest []string) string {
	for links := 0; len(rest) > 0; {
		switch rest[0] {
		case "", ".":
			rest = rest[1:]
			continue
		case "..":
			cur, rest = filepath.Dir(cur), rest[1:]
			continue
		}
		next := filepath.Join(cur, rest[0])
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{cur}, rest...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur, rest = next, rest[1:]
			continue
		}
		if links++; links > 40 {
			return filepath.Join(append([]string{next}, rest[1:]...)...)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest[1:]...)...)
		}
		if !filepath.IsAbs(target) {
			target = cur + "/" + target
		}
		rest = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), rest[1:]...)
		cur = "/"
	}
	return cur
}

// PathDenied is CheckPath as an error: the tools' PathPolicy.
func (p *Policy) PathDenied(tool, abs string) error {
	if d := p.CheckPath(tool, abs); d != nil {
		return d
	}
	return nil
}
