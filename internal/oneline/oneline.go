// Package oneline shortens text to one safe line for a terminal, a
// listing or a Markdown summary: the one helper for what awl shows of a
// prompt, an error or a stored name in a line of its own.
package oneline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Cut makes s one line of at most about n characters: white space (line
// breaks included) collapsed to one space and trimmed, control characters,
// bidirectional controls and invalid UTF-8 dropped (an escape sequence
// from a tool or a prompt never reaches a terminal, nor an override that
// reorders what it shows), and, when more is left, the first n
// characters followed by "…". It cuts between characters, never inside
// one, whatever the bytes.
func Cut(s string, n int) string {
	var b strings.Builder
	count := 0
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if unicode.IsControl(r) || r == utf8.RuneError || r >= 0x61c && unicode.Is(unicode.Bidi_Control, r) {
			continue
		}
		if space {
			b.WriteByte(' ')
			count++
			space = false
		}
		if count >= n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}
