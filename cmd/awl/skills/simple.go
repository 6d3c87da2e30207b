package skills

import (
	"strings"
	"unicode/utf8"
)

// parseSimple reads front matter in the shape nearly every SKILL.md has,
// without the YAML parser: one "key: value" a line, each value a plain
// scalar or a quoted string with no escapes, and a metadata block of such
// lines under one indentation. It returns false for anything else (a
// comment, a blank line, a list, a block scalar, an anchor, a value that
// could be a null, a key given twice, a character YAML treats apart),
// which go.yaml.in/yaml/v3 then reads: that parser stays the one of
// record, and FuzzSimpleIsYAML holds this one to what it reads. seen is
// each top-level key's line, counted from 1 in fm.
func parseSimple(fm []byte) (s Skill, seen map[string]int, ok bool) {
	seen = map[string]int{}
	lines := strings.Split(string(fm), "\n")
	for i := 0; i < len(lines); i++ {
		key, val, has, ok := simpleEntry(lines[i])
		if !ok {
			return Skill{}, nil, false
		}
		if _, dup := seen[key]; dup {
			return Skill{}, nil, false
		}
		seen[key] = i + 1
		if key == "metadata" {
			if has {
				return Skill{}, nil, false
			}
			var n int
			if s.Metadata, n, ok = simpleBlock(lines[i+1:]); !ok {
				return Skill{}, nil, false
			}
			i += n
			continue
		}
		if !has {
			return Skill{}, nil, false
		}
		switch key {
		case "name":
			s.Name = val
		case "description":
			s.Description = val
		case "license":
			s.License = val
		case "compatibility":
			s.Compatibility = val
		case "allowed-tools":
			s.AllowedTools = strings.Fields(val)
		}
	}
	return s, seen, true
}

// simpleBlock reads the lines of a metadata block: one or more, each
// "key: value" under the same indentation of spaces. n is how many lines
// it took; the block ends at a line with no indentation.
func simpleBlock(lines []string) (m map[string]string, n int, ok bool) {
	if len(lines) == 0 {
		return nil, 0, false
	}
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	if indent == 0 {
		return nil, 0, false
	}
	m = map[string]string{}
	for ; n < len(lines) && lines[n] != "" && lines[n][0] == ' '; n++ {
		l := lines[n]
		if len(l)-len(strings.TrimLeft(l, " ")) != indent {
			return nil, 0, false
		}
		key, val, has, ok := simpleEntry(l[indent:])
		if _, dup := m[key]; !ok || !has || dup {
			return nil, 0, false
		}
		m[key] = val
	}
	return m, n, true
}

// simpleEntry splits "key: value": a key of lowercase letters, digits, "-"
// and "_", then a value simpleValue reads; has is false for "key:" alone.
func simpleEntry(line string) (key, val string, has, ok bool) {
	i := 0
	for i < len(line) && (line[i] >= 'a' && line[i] <= 'z' || line[i] >= '0' && line[i] <= '9' || (line[i] == '-' || line[i] == '_') && i > 0) {
		i++
	}
	// YAML takes an implicit key of at most 1024 characters.
	if i == 0 || i > 128 || i == len(line) || line[i] != ':' {
		return "", "", false, false
	}
	key, rest := line[:i], line[i+1:]
	if strings.TrimRight(rest, " ") == "" {
		return key, "", false, true
	}
	if rest[0] != ' ' {
		return "", "", false, false
	}
	val, ok = simpleValue(strings.Trim(rest, " "))
	return key, val, true, ok
}

// simpleValue reads a value that is the same text however YAML would
// read it: a plain scalar that starts with no indicator, holds no ": " or
// " #", and is no null; or a string in double quotes with no "\" or `"`
// in it, or in single quotes with no "'".
func simpleValue(v string) (string, bool) {
	if !printable(v) {
		return "", false
	}
	switch v[0] {
	case '"', '\'':
		q := v[:1]
		if len(v) < 2 || v[len(v)-1] != q[0] || strings.Contains(v[1:len(v)-1], q) || q == `"` && strings.Contains(v, `\`) {
			return "", false
		}
		return v[1 : len(v)-1], true
	}
	if strings.ContainsRune("-?:,[]{}#&*!|>%@`", rune(v[0])) || strings.Contains(v, ": ") || strings.HasSuffix(v, ":") || strings.Contains(v, " #") {
		return "", false
	}
	switch v {
	case "~", "null", "Null", "NULL":
		return "", false
	}
	return v, true
}

// printable tells whether s holds only characters YAML takes as they are
// within a line: no tab or control character, no byte-order mark, no
// character YAML counts as a line break (NEL, LS, PS), valid UTF-8.
func printable(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 0x20 && r <= 0x7e:
		case r == utf8.RuneError, r == 0x85, r == 0x2028, r == 0x2029, r == 0xfeff:
			return false
		case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		default:
			return false
		}
	}
	return true
}
