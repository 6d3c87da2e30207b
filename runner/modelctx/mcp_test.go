package modelctx

import (
	"strings"
	"testing"
)

func TestMCPFragmentDiff(t *testing.T) {
	base := State{System: "s", Tools: []string{"read", "mcp__a__x"}}
	cur := base
	cur.MCP = []MCPServer{
		{Name: "a", Tools: []string{"mcp__a__x"}, Instructions: "Be <careful>."},
		{Name: "b", Failed: true},
		{Name: "c"}, // started, no tool offered: not shown
	}
	full := Build(cur, nil)
	text := full[0].Content
	if len(text) != 4 { // system, tool policy, a, b
		t.Fatalf("full context blocks: %d\n%v", len(text), text)
	}
	if !strings.Contains(text[2].Text, `<mcp_server name="a">`) || !strings.Contains(text[2].Text, "Be <careful>.") || !strings.Contains(text[3].Text, "did not start") {
		t.Errorf("blocks: %q %q", text[2].Text, text[3].Text)
	}
	// Nothing changed: nothing to append (the prefix property).
	if got := Build(cur, baseOf(cur)); got != nil {
		t.Errorf("unchanged: %v", got)
	}
	// An old baseline without MCP and no servers now: nothing either.
	if got := Build(base, baseOf(base)); got != nil {
		t.Errorf("no servers: %v", got)
	}
	// b starts now, a's instructions changed, and a new server d appears.
	next := cur
	next.Tools = append(next.Tools, "mcp__b__y", "mcp__d__z")
	next.MCP = []MCPServer{
		{Name: "a", Tools: []string{"mcp__a__x"}, Instructions: "Be careful."},
		{Name: "b", Tools: []string{"mcp__b__y"}},
		{Name: "d", Tools: []string{"mcp__d__z"}},
	}
	diff := Build(next, baseOf(cur))
	var got []string
	for _, b := range diff[0].Content[1:] { // after the tool policy
		got = append(got, strings.SplitN(b.Text, "\n", 3)[1])
	}
	want := []string{"Tools: mcp__a__x.", "Tools: mcp__b__y.", "Tools: mcp__d__z."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("diff: %q", got)
	}
	// All servers gone: one notice each, in baseline order.
	gone := Build(base, baseOf(next))
	var notices []string
	for _, b := range gone[0].Content {
		if strings.Contains(b.Text, "no longer configured") {
			notices = append(notices, strings.SplitN(b.Text, "\n", 2)[0])
		}
	}
	if strings.Join(notices, "|") != `<mcp_server name="a">|<mcp_server name="b">|<mcp_server name="d">` {
		t.Errorf("notices: %q", notices)
	}
}
