package modelctx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocs checks that the renderings quoted in docs/context.md and
// docs/context-entry.md are the ones the code produces.
func TestDocs(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	context, entry := read("context.md"), read("context-entry.md")

	s := State{
		Cwd: "/home/u/repo", Shell: "bash", Date: "2026-04-25", Timezone: "Europe/Paris",
		System: DefaultSystem, Tools: []string{"write", "read", "edit", "bash"},
		AgentsMD: []Source{{Path: "/home/u/repo/AGENTS.md", Content: "Run make check before committing.\n"}},
	}
	var quoted []string
	full := Build(s, nil)
	for _, b := range append(full[0].Content[1:], full[1].Content...) { // all but the default prompt
		quoted = append(quoted, b.Text)
	}
	next := s
	next.Date = "2026-04-26"
	next.AgentsMD = nil
	next.AppendSystem = "x"
	next.Tools = nil
	for _, m := range Build(next, baseOf(s)) {
		for _, b := range m.Content {
			quoted = append(quoted, strings.ReplaceAll(b.Text, "/home/u/repo/AGENTS.md", "/home/u/repo/sub/AGENTS.md"))
		}
	}
	withAppend := s
	withAppend.AppendSystem = "y"
	gone := withAppend
	gone.AppendSystem = ""
	quoted = append(quoted,
		Build(withAppend, baseOf(next))[0].Content[0].Text, // replaced
		Build(gone, baseOf(withAppend))[0].Content[0].Text, // removed
	)
	// The output schema, its replacement and its removal.
	withSchema := s
	withSchema.OutputSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	otherSchema := withSchema
	otherSchema.OutputSchema = `{"type":"boolean"}`
	noSchema := withSchema
	noSchema.OutputSchema = ""
	quoted = append(quoted,
		Build(withSchema, baseOf(s))[0].Content[0].Text,
		strings.SplitN(Build(otherSchema, baseOf(withSchema))[0].Content[0].Text, "\n\n", 2)[0],
		Build(noSchema, baseOf(withSchema))[0].Content[0].Text,
	)
	// MCP servers: started, failed, removed.
	gh := s
	gh.MCP = []MCPServer{{Name: "github", Tools: []string{"mcp__github__get_issue", "mcp__github__create_issue"}, Instructions: "Use get_issue before commenting.\n"}}
	ghFailed := s
	ghFailed.MCP = []MCPServer{{Name: "github", Failed: true}}
	quoted = append(quoted,
		Build(gh, baseOf(s))[0].Content[0].Text,
		Build(ghFailed, baseOf(gh))[0].Content[0].Text,
		Build(s, baseOf(gh))[0].Content[0].Text,
	)
	for _, q := range quoted {
		q = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(q, "x"), "y"), "\n\n")
		if !strings.Contains(context, q) {
			t.Errorf("docs/context.md does not quote %q", q)
		}
	}

	for _, b := range []Baseline{s.Baseline(), func() Baseline { o := s; o.NoEnv, o.NoAgentsMD = true, true; return o.Baseline() }()} {
		fields := string(b.Fields())
		if !strings.Contains(entry, strings.TrimPrefix(fields, "{")) {
			t.Errorf("docs/context-entry.md does not show %s", fields)
		}
	}
}
