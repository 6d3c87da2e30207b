package tool

import (
	"fmt"
	"path"
	"strings"
)

// pattern is a parsed glob pattern: slash-separated segments, each matched
// with path.Match, where a segment "**" matches any number of segments,
// none included.
type pattern []string

// parsePattern splits a glob pattern into segments and checks their syntax.
// Runs of "**" collapse into one.
func parsePattern(p string) (pattern, error) {
	var segs pattern
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." {
			continue
		}
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %v", p, err)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("pattern %q matches nothing", p)
	}
	return segs, nil
}

// hasMeta reports whether segment s has glob metacharacters.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchSegment reports whether one path segment matches seg, a segment of a
// pattern (syntax checked by parsePattern). The shapes a model writes most,
// `*.go` and `name*`, skip path.Match.
func matchSegment(seg, name string) bool {
	switch {
	case !hasMeta(seg):
		return seg == name
	case seg[0] == '*' && !hasMeta(seg[1:]):
		return strings.HasSuffix(name, seg[1:])
	case seg[len(seg)-1] == '*' && !hasMeta(seg[:len(seg)-1]):
		return strings.HasPrefix(name, seg[:len(seg)-1])
	}
	ok, _ := path.Match(seg, name)
	return ok
}

// literalPrefix splits p into its leading segments without metacharacters
// and the rest.
func (p pattern) literalPrefix() (lit []string, rest pattern) {
	i := 0
	for i < len(p) && !hasMeta(p[i]) {
		i++
	}
	return p[:i], p[i:]
}

// matchPath reports whether the slash-separated path rel matches p. The
// common shapes (`*.go`, `**/*.go`) match without splitting rel.
func (p pattern) matchPath(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case len(p) == 1 && p[0] != "**":
		return len(base) == len(rel) && matchSegment(p[0], base)
	case len(p) == 2 && p[0] == "**" && p[1] != "**":
		return matchSegment(p[1], base)
	}
	return p.match(strings.Split(rel, "/"))
}

// match reports whether the path split into name segments matches p.
func (p pattern) match(name []string) bool {
	// failed[i*(len(name)+1)+j] marks p[i:] known not to match name[j:],
	// which keeps patterns with several "**" linear in practice.
	failed := make([]bool, (len(p)+1)*(len(name)+1))
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		for i < len(p) {
			if failed[i*(len(name)+1)+j] {
				return false
			}
			if p[i] == "**" {
				for k := j; k <= len(name); k++ {
					if rec(i+1, k) {
						return true
					}
				}
				failed[i*(len(name)+1)+j] = true
				return false
			}
			if j == len(name) {
				return false
			}
			if !matchSegment(p[i], name[j]) {
				failed[i*(len(name)+1)+j] = true
				return false
			}
			i, j = i+1, j+1
		}
		return j == len(name)
	}
	return rec(0, 0)
}

// mayMatchUnder reports whether some file below the directory split into dir
// segments could match p, so a walk can skip directories that cannot.
func (p pattern) mayMatchUnder(dir []string) bool {
	for len(dir) > 0 {
		if len(p) == 0 {
			return false
		}
		if p[0] == "**" {
			return true
		}
		if ok, _ := path.Match(p[0], dir[0]); !ok {
			return false
		}
		p, dir = p[1:], dir[1:]
	}
	return len(p) > 0
}
