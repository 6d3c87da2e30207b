package policy

import (
	"path"
	"slices"
	"strings"
)

// Intersect is what an allow list below (the user's --tools, say) and one
// above it that may only narrow it (an untrusted project file's) allow
// together: each rule of either that a rule of the other contains, once
// (above's first). A rule contains another when every call the other
// allows, it allows (Contains). Every rule kept is within a rule of both
// lists, so the result never allows what either does not: bash(git *)
// and bash(git diff *) give bash(git diff *); read and read(src/**) give
// nothing, since read(…) rules apply to every tool that reads and read to
// one. An empty result allows no tool. A rule that does not parse is kept
// only where both lists hold it as written, for New to refuse.
func Intersect(below, above []string) []string {
	b, a := parseAll(below), parseAll(above)
	out := []string{}
	keep := func(r parsed) {
		if !slices.Contains(out, r.text) {
			out = append(out, r.text)
		}
	}
	for _, p := range a {
		if slices.ContainsFunc(b, func(u parsed) bool { return contains(u, p) }) {
			keep(p)
		}
	}
	for _, u := range b {
		if slices.ContainsFunc(a, func(p parsed) bool { return contains(p, u) }) {
			keep(u)
		}
	}
	return out
}

// parsed is a rule as written and, when it parses, the rule.
type parsed struct {
	text string
	rule *Rule
}

func parseAll(list []string) []parsed {
	var out []parsed
	for _, entry := range list {
		for _, text := range Split(entry) {
			p := parsed{text: text}
			if r, err := ParseRule(text); err == nil {
				p.rule = &r
			}
			out = append(out, p)
		}
	}
	return out
}

// contains tells whether u allows every call r allows.
func contains(u, r parsed) bool {
	if u.text == r.text {
		return true
	}
	if u.rule == nil || r.rule == nil {
		return false
	}
	return Contains(*u.rule, *r.rule)
}

// Contains tells whether the rule u allows every call the rule r allows:
// u names every tool r applies to and, if u has a pattern, r has one of
// the same kind that u's contains. It answers false where it cannot be
// sure (two globs neither of which is a prefix of the other), never true.
func Contains(u, r Rule) bool {
	if u.Text == r.Text {
		return true
	}
	for _, t := range ruleTools(r) {
		if !u.appliesToAll(t) {
			return false
		}
	}
	switch {
	case !u.HasPattern:
		return true
	case !r.HasPattern:
		return false
	case u.cmd != nil && r.cmd != nil:
		return cmdContains(u.cmd, r.cmd)
	case u.path != nil && r.path != nil:
		return pathContains(u.path, r.path)
	}
	return false
}

// ruleTools are the tools a rule applies to: read(…) and write(…) every
// tool that reads or writes; otherwise its name or glob.
func ruleTools(r Rule) []string {
	if r.path != nil {
		switch r.Tool {
		case "read":
			return readTools
		case "write":
			return writeTools
		}
	}
	return []string{r.Tool}
}

// appliesToAll tells whether u applies to every tool the name or glob t
// names.
func (u *Rule) appliesToAll(t string) bool {
	if u.path != nil && (u.Tool == "read" || u.Tool == "write") {
		return !hasMeta(t) && u.appliesTo(t)
	}
	return globContains(u.Tool, t, path.Match)
}

// globContains tells whether every text the glob r matches, the glob u
// matches: the same glob; r without wild characters and matched by u; or
// u a literal prefix and * alone, and r's literal beginning starts with
// that prefix.
func globContains(u, r string, match func(pat, s string) (bool, error)) bool {
	if u == r || u == "*" {
		return true
	}
	lit, wild := literalPrefix(r)
	if !wild {
		ok, _ := match(u, lit)
		return ok
	}
	prefix, ok := strings.CutSuffix(u, "*")
	// A prefix ending in \ escapes the *: u is then a literal.
	if pl, pw := literalPrefix(prefix); ok && !pw && !strings.HasSuffix(prefix, `\`) {
		return strings.HasPrefix(lit, pl)
	}
	return false
}

// literalPrefix is the text a glob starts with before its first wild
// character (\c taken as c), and whether it has one.
func literalPrefix(g string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*', '?', '[':
			return b.String(), true
		case '\\':
			if i+1 < len(g) {
				i++
				b.WriteByte(g[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), false
}

// cmdContains tells whether the command pattern u matches every command r
// matches: word by word, u's trailing * taking whatever r has past u's
// words.
func cmdContains(u, r *cmdPattern) bool {
	switch {
	case u.rest && len(r.words) < len(u.words):
		return false
	case !u.rest && (r.rest || len(r.words) != len(u.words)):
		return false
	}
	for i, w := range u.words {
		if !globContains(w, r.words[i], func(pat, s string) (bool, error) { return globMatch(pat, s), nil }) {
			return false
		}
	}
	return true
}

// pathContains tells whether the path pattern u matches every path r
// matches: both relative or both absolute; segment by segment, a last **
// of u taking whatever r has past u's other segments. A relative r that
// reaches out of the run's directory (..) is contained only by a u that
// does too.
func pathContains(u, r *pathPattern) bool {
	if u.abs != r.abs || !u.abs && r.segs[0] == ".." && u.segs[0] != ".." {
		return false
	}
	us := u.segs
	tail := len(us) > 0 && us[len(us)-1] == "**"
	if tail {
		us = us[:len(us)-1]
	}
	if slices.Contains(us, "**") {
		return slices.Equal(u.segs, r.segs)
	}
	if len(r.segs) < len(us) || !tail && len(r.segs) != len(us) {
		return false
	}
	for i, s := range us {
		if r.segs[i] == "**" || !globContains(s, r.segs[i], path.Match) {
			return false
		}
	}
	return tail || !slices.Contains(r.segs, "**")
}
