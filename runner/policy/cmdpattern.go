package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// cmdPattern is the pattern of a bash(…) rule: one glob per word of a
// simple command; a last word that is * alone (or Claude Code's :*
// suffix) stands for any number of further words, none included.
type cmdPattern struct {
	words []string // globs: * ? [..] wild, \c literal
	rest  bool
	name  string // words[0] when it holds no wild character
}

// parseCmdPattern parses the pattern of bash(PATTERN) as the shell would a
// simple command: quoted text is literal, unquoted * ? [..] are wild.
func parseCmdPattern(p string) (*cmdPattern, error) {
	if s, ok := strings.CutSuffix(p, ":*"); ok {
		p = s + " *"
	}
	if words, ok := plainWords(p); ok {
		return newCmdPattern(words), nil
	}
	return shellPattern(p)
}

// shellPattern parses a pattern with mvdan.cc/sh.
func shellPattern(p string) (*cmdPattern, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(p), "")
	if err != nil {
		return nil, fmt.Errorf("cannot parse the command: %v", err)
	}
	if len(f.Stmts) != 1 {
		return nil, errors.New("the pattern must be one simple command (write one rule for each)")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || st.Background || st.Negated || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, errors.New("the pattern must be one simple command: words only, no operators, redirections or assignments")
	}
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		if words[i], err = wordGlob(w); err != nil {
			return nil, err
		}
	}
	return newCmdPattern(words), nil
}

// newCmdPattern is the pattern of the globs of a simple command's words.
func newCmdPattern(words []string) *cmdPattern {
	cp := &cmdPattern{words: words}
	if n := len(words); n > 1 && words[n-1] == "*" {
		cp.words, cp.rest = words[:n-1], true
	}
	if !hasMeta(cp.words[0]) {
		cp.name = cp.words[0]
	}
	return cp
}

// plainWords splits a pattern of plain words, as nearly every rule is
// (git diff *, go test ./...), without the shell's parser, whose code is
// cold at a run's start: words of letters, digits and -_./*,:@+%^ apart
// from = (a first word with one may be an assignment), separated by
// spaces and tabs, the first no reserved word. Anything else is false,
// and mvdan.cc/sh reads the pattern; FuzzPlainWordsAreTheShells holds the
// two to the same pattern.
func plainWords(p string) ([]string, bool) {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_./*,:@+%^= \t", c) >= 0:
		default:
			return nil, false
		}
	}
	words := strings.Fields(p)
	if len(words) == 0 || strings.Contains(words[0], "=") || slices.Contains(reservedWords, words[0]) {
		return nil, false
	}
	return words, true
}

// reservedWords are the words mvdan.cc/sh does not read as a simple
// command's name at the start of a statement (of those plainWords lets
// through).
var reservedWords = []string{
	"case", "coproc", "declare", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function",
	"if", "in", "let", "local", "nameref", "readonly", "select", "then", "time", "typeset", "until", "while",
}

// wordGlob turns a word of a pattern into a glob: unquoted text as it is
// (a backslash escapes), quoted text escaped.
func wordGlob(w *syntax.Word) (string, error) {
	var b strings.Builder
	quote := func(s string) {
		for _, c := range s {
			if strings.ContainsRune(`*?[]\`, c) {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
		}
	}
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", errors.New("$'…' is not allowed in a pattern")
			}
			quote(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", errors.New("a pattern holds no expansion ($, `)")
				}
				quote(unescapeDouble(lit.Value))
			}
		default:
			return "", errors.New("a pattern holds no expansion ($, `, {a,b})")
		}
	}
	return b.String(), nil
}

// match reports whether the command's words match the pattern. With
// possible false, a word whose value is not in the text matches only a
// pattern word that is * alone (one word) or the trailing * (any number of
// them): the match is certain. With possible true, any word that could
// expand to match does: a deny rule is judged so.
func (cp *cmdPattern) match(args []arg, possible bool) bool {
	if cp.name != "" && len(args) > 0 && args[0].static && !args[0].multi && args[0].s != cp.name {
		return false // the common case: another command
	}
	T, N := len(cp.words), len(args)
	if !slices.ContainsFunc(args, func(a arg) bool { return a.multi }) {
		// Each pattern word takes one word; the trailing * the rest.
		if N < T || N > T && !cp.rest {
			return false
		}
		for i, w := range cp.words {
			if a := args[i]; a.static && !globMatch(w, a.s) || !a.static && !possible && w != "*" {
				return false
			}
		}
		return true
	}
	// ok[i*(N+1)+j]: words[i:] can match args[j:].
	var small [64]bool
	ok := small[:0]
	if n := (T + 1) * (N + 1); n <= len(small) {
		ok = small[:n]
	} else {
		ok = make([]bool, n)
	}
	at := func(i, j int) *bool { return &ok[i*(N+1)+j] }
	for j := N; j >= 0; j-- {
		all := true
		for _, a := range args[j:] {
			all = all && a.multi
		}
		*at(T, j) = cp.rest || j == N || (possible && all)
	}
	for i := T - 1; i >= 0; i-- {
		for j := N - 1; j >= 0; j-- {
			a, w := args[j], cp.words[i]
			switch {
			case a.multi:
				if possible {
					for k := i; k <= T && !*at(i, j); k++ {
						*at(i, j) = *at(k, j+1)
					}
				}
			case !a.static:
				*at(i, j) = (possible || w == "*") && *at(i+1, j+1)
			default:
				*at(i, j) = globMatch(w, a.s) && *at(i+1, j+1)
			}
		}
	}
	return *at(0, 0)
}

// globMatch matches s against a glob whose * matches any text, / and
// spaces included; ? one character; [..] a class; \c the character c.
func globMatch(pat, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	for px < len(pat) || sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				nextPx, nextSx = px, sx+1
				px++
				continue
			case '?':
				if sx < len(s) {
					_, n := decodeRune(s[sx:])
					px++
					sx += n
					continue
				}
			case '[':
				if sx < len(s) {
					n, end, ok := matchClass(pat[px:], s[sx:])
					if ok {
						px += end
						sx += n
						continue
					}
					if end == 0 && s[sx] == '[' { // no closing ]: a literal [
						px++
						sx++
						continue
					}
				}
			case '\\':
				if px+1 < len(pat) && sx < len(s) && s[sx] == pat[px+1] {
					px += 2
					sx++
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextSx > 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

// matchClass matches the first character of s against the class that
// begins pat ([abc], [!a-z], [^x]): how many bytes of s and of pat it
// took, and whether it matched.
func matchClass(pat, s string) (n, end int, ok bool) {
	r, n := decodeRune(s)
	i := 1
	negate := i < len(pat) && (pat[i] == '!' || pat[i] == '^')
	if negate {
		i++
	}
	matched := false
	for first := true; i < len(pat); first = false {
		if pat[i] == ']' && !first {
			return n, i + 1, matched != negate
		}
		lo, w := decodeRune(pat[i:])
		if pat[i] == '\\' && i+1 < len(pat) {
			lo, w = decodeRune(pat[i+1:])
			w++
		}
		i += w
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi, w = decodeRune(pat[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return 0, 0, false // no closing ]: not a class
}
