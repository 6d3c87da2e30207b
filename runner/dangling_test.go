package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// TestResumeClosesDanglingToolCalls: a run killed between a tool call and
// its result leaves the call without one. The resumed run appends an
// interrupted error result for each such call (and only those), never runs
// them again, and the next request carries them, so the model sees every
// call answered.
func TestResumeClosesDanglingToolCalls(t *testing.T) {
	g := newBudgetRig(t)
	g.srv.Enqueue(providertest.Text("anthropic", "hello"))
	if res := g.run(context.Background(), "m", nil); res.Err != nil {
		t.Fatal(res.Err)
	}
	// What a run killed after the first of two tool calls leaves.
	s, err := g.store.Open(g.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []conv.Message{
		{Role: conv.RoleAssistant, Content: []conv.Block{
			{Type: conv.BlockToolUse, ID: "c1", Name: "bash", Input: `{"command":"touch ran1"}`},
			{Type: conv.BlockToolUse, ID: "c2", Name: "bash", Input: `{"command":"touch ran2"}`},
		}},
		{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "c1", Content: "done before the kill"}}},
	} {
		if _, err := s.Append(session.Entry{Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	g.srv.Enqueue(providertest.Text("anthropic", "carried on"))
	res := g.run(context.Background(), "m", func(c *runner.Config) { c.Prompt = "go on" })
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, err := os.Stat(filepath.Join(g.work, "ran2")); err == nil {
		t.Error("the dangling call was run again")
	}
	reqs := g.srv.Requests()
	msgs := gjson.GetBytes(reqs[len(reqs)-1].Body, "messages").Array()
	var results []string
	for _, m := range msgs {
		for _, b := range m.Get("content").Array() {
			if b.Get("type").String() == "tool_result" {
				results = append(results, fmt.Sprintf("%s %v %s", b.Get("tool_use_id"), b.Get("is_error").Bool(), b.Get("content").Raw))
			}
		}
	}
	want := []string{
		`c1 false "done before the kill"`,
		`c2 true "interrupted: the run stopped before this tool call finished; it was not run again"`,
	}
	if len(results) != len(want) {
		t.Fatalf("tool results in the resumed request:\n%q\nwant\n%q", results, want)
	}
	for i := range want {
		if results[i] != want[i] {
			t.Errorf("tool result %d = %s, want %s", i, results[i], want[i])
		}
	}
	// The closing result is in the session, before the new prompt.
	s, err = g.store.Open(g.path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	found := false
	for _, e := range s.ActivePath() {
		if e.Message == nil {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == conv.BlockToolResult && b.ToolUseID == "c2" && b.IsError {
				found = true
			}
			if found && b.Type == conv.BlockText && b.Text == "go on" {
				return
			}
		}
	}
	t.Errorf("the session lacks the interrupted result for c2 before the prompt (found %v)", found)
}
