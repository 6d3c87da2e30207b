package conv

import "testing"

func TestMessageTextAndToolUses(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: []Block{
		{Type: BlockThinking, Thinking: "hmm"},
		TextBlock("Hello, "),
		{Type: BlockToolUse, ID: "t1", Name: "bash", Input: `{"command":"ls"}`},
		TextBlock("world"),
	}}
	if got := m.Text(); got != "Hello, world" {
		t.Fatalf("Text() = %q", got)
	}
	uses := m.ToolUses()
	if len(uses) != 1 || uses[0].ID != "t1" {
		t.Fatalf("ToolUses() = %+v", uses)
	}
	u := Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}.Add(Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40})
	if u != (Usage{11, 22, 33, 44}) {
		t.Fatalf("Add = %+v", u)
	}
}
