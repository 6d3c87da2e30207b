package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutBytesCountsBytes: the limit is in bytes, and the cut falls
// before a character, never inside one, whatever its width.
func TestCutBytesCountsBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"},                      // é is 2 bytes: 3 in all, so it goes whole
		{"€€", 4, "€…"},                      // € is 3 bytes: the second would end at byte 6
		{strings.Repeat("日", 4), 11, "日日日…"}, // 12 bytes, cut after 9
		{"🙂x", 3, "…"},
	} {
		got := cutBytes(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("cutBytes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) || len(strings.TrimSuffix(got, "…")) > tc.n {
			t.Errorf("cutBytes(%q, %d) = %q: invalid or over %d bytes", tc.in, tc.n, got, tc.n)
		}
	}
}
