package oneline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 10, ""},
		{"  plain  ", 10, "plain"},
		{"a\n\n b\r\n\tc", 10, "a b c"},
		{"abcdef", 3, "abc…"},
		{"abc", 3, "abc"},
		{"ab cd", 3, "ab …"},
		{"\x1b[31mred\x1b[0m", 10, "[31mred[0m"},
		{"bad \xff\xfe utf8", 20, "bad utf8"},
		{"x\u2028y", 10, "x y"},
		// Bidirectional overrides and isolates reorder what a terminal
		// shows (Trojan Source): dropped; a right-to-left script stays.
		{"abc\u202egnp.exe\u202c \u2066x\u2069 \u200fy", 30, "abcgnp.exe x y"},
		{"שלום", 10, "שלום"},
		{"日本語テキスト", 3, "日本語…"},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestCutNeverSplitsACharacter: a text of multi-byte characters, and one
// with invalid bytes at every cut, stays valid UTF-8 at every length. The
// byte-cutting copy (cmd/awl's, for the step summary) could split one.
func TestCutNeverSplitsACharacter(t *testing.T) {
	texts := []string{
		strings.Repeat("é🙂日", 200),
		strings.Repeat("a\xe2\x80", 200),
		strings.Repeat("🙂", 301),
	}
	for _, s := range texts {
		for n := 0; n < 310; n++ {
			got := Cut(s, n)
			if !utf8.ValidString(got) {
				t.Fatalf("Cut(…, %d) is not valid UTF-8: %q", n, got)
			}
			if c := utf8.RuneCountInString(strings.TrimSuffix(got, "…")); c > n {
				t.Fatalf("Cut(…, %d) kept %d characters", n, c)
			}
		}
	}
}
