package modelctx

import (
	"strings"
	"testing"
)

func TestEscapeXML(t *testing.T) {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	for _, s := range []string{"", "/home/u/work", "a&b", "</cwd><x>", "&amp;", "日本<>&"} {
		if got, want := escapeXML(s), r.Replace(s); got != want {
			t.Errorf("escapeXML(%q) = %q, want %q", s, got, want)
		}
	}
}
