package modelctx

import (
	"encoding/xml"
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

// TestSkillPathWithQuote: a skill whose checkout path holds a quote (or
// markup) stays one well-formed element: the attribute is not ended early,
// and it reads back, through an XML decoder, as the path it was.
func TestSkillPathWithQuote(t *testing.T) {
	path := `/work/it's "ours" <&>/.agents/skills/deploy/SKILL.md`
	entry := Skill{Name: "deploy", Description: `Ship "it" & <check>`, Path: path}.entry()
	var got struct {
		Name string `xml:"name,attr"`
		Path string `xml:"path,attr"`
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte(entry), &got); err != nil {
		t.Fatalf("%s: %v", entry, err)
	}
	if got.Name != "deploy" || got.Path != path || got.Text != `Ship "it" & <check>` {
		t.Errorf("%s read back as %+v", entry, got)
	}
}
