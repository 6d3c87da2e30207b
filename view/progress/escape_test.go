package progress

import (
	"strings"
	"testing"
)

// The workflow-command escapes match the rules as a strings.Replacer
// spells them, on every byte that matters and around it.
func TestEscapesMatchTheRules(t *testing.T) {
	data := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	prop := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	for _, s := range []string{"", "plain", "100%", "a\r\nb", "k: v, w", "%%\n:,\r", "é%:\n", strings.Repeat("x,", 100)} {
		if got, want := escapeData(s), data.Replace(s); got != want {
			t.Errorf("escapeData(%q) = %q, want %q", s, got, want)
		}
		if got, want := escapeProperty(s), prop.Replace(s); got != want {
			t.Errorf("escapeProperty(%q) = %q, want %q", s, got, want)
		}
	}
}
