package runner

import (
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

// TestSeedWindowFromStoredSession: a resumed run starts its estimate from
// the usage of the session's last response, as the session stores it: the
// request's provider and model on the user message before it (the answer
// itself may name a dated model), none at the assistant entry's level.
func TestSeedWindowFromStoredSession(t *testing.T) {
	user := func(id, provider, model string) session.Entry {
		return session.Entry{Type: session.TypeMessage, ID: id, Provider: provider, Model: model,
			Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("go")}}}
	}
	answer := session.Entry{Type: session.TypeMessage, ID: "00000002", Message: &conv.Message{
		Role: conv.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5-20250929",
		Content: []conv.Block{conv.TextBlock("done")}, Usage: &conv.Usage{Input: 500, Output: 20, CacheRead: 4000, CacheWrite: 100}}}
	path := []session.Entry{user("00000001", "anthropic", "claude-sonnet-4-5"), answer}

	if got := seedWindow(path, projection.Project(path), "anthropic", "claude-sonnet-4-5", modelinfo.Default()); got != (windowState{tokens: 4620, covered: 2}) {
		t.Errorf("seed = %+v, want the last response's 4620 tokens covering 2 messages", got)
	}
	if got := seedWindow(path, projection.Project(path), "anthropic", "claude-opus-4-1", modelinfo.Default()); got != (windowState{}) {
		t.Errorf("another model: seed = %+v, want none (it counts tokens otherwise)", got)
	}
	pruned := append(path[:2:2], session.Entry{Type: session.TypePrune, ID: "00000003", Fields: []byte(`{"upToId":"00000001"}`)})
	if got := seedWindow(pruned, projection.Project(pruned), "anthropic", "claude-sonnet-4-5", modelinfo.Default()); got != (windowState{}) {
		t.Errorf("after a prune: seed = %+v, want none", got)
	}
	if got := seedWindow(path[1:], projection.Project(path[1:]), "anthropic", "claude-sonnet-4-5", modelinfo.Default()); got != (windowState{}) {
		t.Errorf("no request recorded: seed = %+v, want none", got)
	}
	// The table's alias (a dated snapshot) of the same model counts
	// tokens the same way; without the table, or in another provider's
	// family, it is another model.
	if got := seedWindow(path, projection.Project(path), "anthropic", "claude-sonnet-4-5-20250929", modelinfo.Default()); got != (windowState{tokens: 4620, covered: 2}) {
		t.Errorf("an alias: seed = %+v, want the 4620 tokens", got)
	}
	if got := seedWindow(path, projection.Project(path), "anthropic", "claude-sonnet-4-5-20250929", nil); got != (windowState{}) {
		t.Errorf("an alias without the table: seed = %+v, want none", got)
	}
	if got := seedWindow(path, projection.Project(path), "openrouter", "claude-sonnet-4-5", modelinfo.Default()); got != (windowState{}) {
		t.Errorf("another provider: seed = %+v, want none", got)
	}
}
