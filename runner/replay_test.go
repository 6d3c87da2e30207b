package runner

import (
	"bytes"
	"context"
	"errors"
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
	r := NewReplay(recorded, "m-rec", true, &warn)
	now := []conv.Message{user("go")}
	steps := []conv.Message{result("t1", "A changed"), result("t2", "B changed")}
	for i := 0; i < 3; i++ {
		m, err := r.Stream(context.Background(), provider.Request{Messages: now}, nil)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if m.Provider != ReplayName || m.Model != "m-rec" {
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

	strict := NewReplay(recorded, "m-rec", false, nil)
	_, err := strict.Stream(context.Background(), provider.Request{Messages: []conv.Message{user("something else")}}, nil)
	var de *DivergedError
	if !errors.As(err, &de) || !strings.Contains(de.Diff, "something else") || !strings.Contains(de.Diff, "--- recorded\n  prompt:\n  go") {
		t.Fatalf("strict replay: %v", err)
	}
	if _, err := NewReplay(recorded[:1], "m", false, nil).Stream(context.Background(), provider.Request{Messages: []conv.Message{user("go")}}, nil); !errors.As(err, &de) {
		t.Fatalf("asking past the recording: %v", err)
	}
}

func TestReplayPromptsSkipsContextAndToolResults(t *testing.T) {
	ctx := conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>")}}
	got := ReplayPrompts([]conv.Message{{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}, ctx, user("one"), call("t", "{}"), result("t", "r"), user("two")})
	if len(got) != 2 || got[0].Text() != "one" || got[1].Text() != "two" {
		t.Fatalf("ReplayPrompts = %+v", got)
	}
}
