package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// The hand-written matchers (no regexp compiled at start) accept exactly
// what the documented patterns accept.
func TestNameMatchersAgreeWithPatterns(t *testing.T) {
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)
	varRE := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	inputs := []string{"", "a", "A_b-9", "9x", "_", "-", "a b", "a.b", "é", "a\n", strings.Repeat("a", 40), strings.Repeat("a", 41), "X1", "1X", "ab$", "\x00"}
	for _, s := range inputs {
		if got, want := validName(s), nameRE.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, want %v", s, got, want)
		}
		if got, want := validVarName(s), varRE.MatchString(s); got != want {
			t.Errorf("validVarName(%q) = %v, want %v", s, got, want)
		}
	}
}
