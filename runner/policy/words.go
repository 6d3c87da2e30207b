package policy

import (
	"strconv"
	"strings"
)

// unescapeLit removes the backslashes of unquoted text (a backslash and a
// newline vanish) and reports whether an unescaped glob character is left.
func unescapeLit(s string) (string, bool) {
	if !strings.ContainsAny(s, `\*?[`) {
		return s, false
	}
	var b strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?' || c == '[':
			glob = true
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeDouble removes the backslashes double quotes remove: before $ `
// " \ and a newline.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// braces reports whether unquoted text may hold a brace expansion: a {
// before a } with a comma or .. between them.
func braces(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	inner := s[open:]
	end := strings.LastIndexByte(inner, '}')
	return end > 0 && (strings.Contains(inner[:end], ",") || strings.Contains(inner[:end], ".."))
}

// ansiC decodes the text of $'…'; ok is false for an escape it does not
// decode (the word's value is then not known).
func ansiC(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				j++
			}
			v, err := strconv.ParseUint(s[i+1:j], 16, 8)
			if err != nil || v == 0 {
				return "", false
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			return "", false
		}
	}
	return b.String(), true
}
