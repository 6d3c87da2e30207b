package replay

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
)

func user(text string) conv.Message {
	return conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text)}}
}

func call(id, input string) conv.Message {
	return conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopToolUse, Model: "m-rec",
		Content: []conv.Block{{Type: conv.BlockToolUse, ID: id, Name: "read", Input: input}}}
}

func result(id, content string) conv.Message {
	return conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: id, Content: content}}}
}

func TestReplayComparesOnlyWhatIsNewEachTurn(t *testing.T) {
	answer := conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Model: "m-rec", Content: []conv.Block{conv.TextBlock("done")}}
	recorded := []conv.Message{user("go"), call("t1", `{"path":"a"}`), result("t1", "A"), call("t2", `{"path":"b"}`), result("t2", "B"), answer}

	var warn bytes.Buffer
	r := New(recorded, "m-rec", true, &warn)
	now := []conv.Message{user("go")}
	steps := []conv.Message{result("t1", "A changed"), result("t2", "B changed")}
	for i := 0; i < 3; i++ {
		m, err := r.Stream(context.Background(), provider.Request{Messages: now}, nil)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if m.Provider != Name || m.Model != "m-rec" {
			t.Fatalf("served %s/%s", m.Provider, m.Model)
		}
		now = append(now, m)
		if i < len(steps) {
			now = append(now, steps[i])
		}
	}
	w := warn.String()
	if strings.Count(w, "replay diverged") != 2 || !strings.Contains(w, "A changed") || !strings.Contains(w, "B changed") {
		t.Fatalf("want one warning per divergence, each naming its own result:\n%s", w)
	}
	if r.Remaining() != 0 {
		t.Fatalf("%d answers left", r.Remaining())
	}

	strict := New(recorded, "m-rec", false, nil)
	_, err := strict.Stream(context.Background(), provider.Request{Messages: []conv.Message{user("something else")}}, nil)
	var de *DivergedError
	if !errors.As(err, &de) || !strings.Contains(de.Diff, "something else") || !strings.Contains(de.Diff, "--- recorded\n  prompt:\n  go") {
		t.Fatalf("strict replay: %v", err)
	}
	if _, err := New(recorded[:1], "m", false, nil).Stream(context.Background(), provider.Request{Messages: []conv.Message{user("go")}}, nil); !errors.As(err, &de) {
		t.Fatalf("asking past the recording: %v", err)
	}
}

func TestReplayPromptsSkipsContextAndToolResults(t *testing.T) {
	ctx := conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>")}}
	got := Prompts([]conv.Message{{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}, ctx, user("one"), call("t", "{}"), result("t", "r"), user("two")})
	if len(got) != 2 || got[0].Text() != "one" || got[1].Text() != "two" {
		t.Fatalf("ReplayPrompts = %+v", got)
	}
}

// TestInTheRegistry: replay is a provider of the registry, marked as a
// recording, and provider.New opens the recording it is given.
func TestInTheRegistry(t *testing.T) {
	s, ok := provider.Lookup(Name)
	if !ok || !s.Recorded || s.KeyVar != "" || s.Auto {
		t.Fatalf("registry entry %+v, %v", s, ok)
	}
	if !slices.Contains(provider.Names(), Name) {
		t.Fatalf("provider.Names() = %v", provider.Names())
	}
	if _, err := provider.New(Name, provider.Options{Recording: filepath.Join(t.TempDir(), "none.jsonl")}); err == nil {
		t.Fatal("a missing recording opened")
	}
	p, err := provider.New(Name, provider.Options{Recording: "../../examples/summarise.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	r := p.(*Provider)
	if r.Name() != Name || r.Model() != "claude-sonnet-4-5" || r.Remaining() != 4 || r.Recording() == nil {
		t.Fatalf("opened %s %s with %d answers", r.Name(), r.Model(), r.Remaining())
	}
}
