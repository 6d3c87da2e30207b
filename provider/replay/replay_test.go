package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

func user(text string) conv.Message {
	return conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text)}}
}

func toolCall(id, input string) conv.Message {
	return conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopToolUse, Model: "m-rec",
		Content: []conv.Block{{Type: conv.BlockToolUse, ID: id, Name: "read", Input: input}}}
}

func result(id, content string) conv.Message {
	return conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: id, Content: content}}}
}

func TestReplayComparesOnlyWhatIsNewEachTurn(t *testing.T) {
	answer := conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Model: "m-rec", Content: []conv.Block{conv.TextBlock("done")}}
	recorded := []conv.Message{user("go"), toolCall("t1", `{"path":"a"}`), result("t1", "A"), toolCall("t2", `{"path":"b"}`), result("t2", "B"), answer}

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
	feedback := user(modelctx.FeedbackText("output-schema", "not JSON"))
	got := New([]conv.Message{{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}, ctx, user("one"), toolCall("t", "{}"), result("t", "r"), feedback, user("two")}, "", false, nil).Prompts()
	if len(got) != 2 || got[0].Text() != "one" || got[1].Text() != "two" {
		t.Fatalf("Prompts = %+v", got)
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

func answerText(text string) conv.Message {
	return conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Model: "m-rec", Content: []conv.Block{conv.TextBlock(text)}}
}

func msgEntry(m conv.Message) session.Entry {
	return session.Entry{Type: session.TypeMessage, Message: &m}
}

func stream(t *testing.T, r *Provider, msgs []conv.Message) conv.Message {
	t.Helper()
	m, err := r.Stream(context.Background(), provider.Request{Messages: msgs}, nil)
	if err != nil {
		t.Fatalf("after %d messages: %v", len(msgs), err)
	}
	return m
}

// TestSamePromptTwice: a recording that asks the same thing in two steps
// answers each step with its own continuation, by the conversation before
// it, in a process of its own.
func TestSamePromptTwice(t *testing.T) {
	path := []session.Entry{msgEntry(user("go")), msgEntry(answerText("first")), {Type: runEntry},
		msgEntry(user("go")), msgEntry(answerText("second")), {Type: runEntry}}
	st, err := fromPath(path, false, nil).Next(nil, "")
	if err != nil || len(st.Prompts) != 1 || st.Prompts[0].Text() != "go" {
		t.Fatalf("step 1: %+v, %v", st, err)
	}
	if m := stream(t, fromPath(path, false, nil), []conv.Message{user("go")}); m.Text() != "first" {
		t.Fatalf("step 1 answered %q", m.Text())
	}
	history := []conv.Message{user("go"), answerText("first")}
	st, err = fromPath(path, false, nil).Next(history, "go")
	if err != nil || len(st.Prompts) != 1 {
		t.Fatalf("step 2: %+v, %v", st, err)
	}
	if m := stream(t, fromPath(path, false, nil), append(history, user("go"))); m.Text() != "second" {
		t.Fatalf("step 2 answered %q", m.Text())
	}
	// A third time goes further than the recording.
	history = append(history, user("go"), answerText("second"))
	var de *DivergedError
	if _, err := fromPath(path, false, nil).Next(history, "go"); !errors.As(err, &de) || !strings.Contains(de.Diff, "no recorded continuation") || !strings.Contains(de.Diff, "prompt:\n  go") {
		t.Fatalf("a third step: %v", err)
	}
	if _, err := fromPath(path, false, nil).Stream(context.Background(), provider.Request{Messages: append(history, user("go"))}, nil); !errors.As(err, &de) || !strings.Contains(de.Diff, "no recorded continuation") {
		t.Fatalf("a third request: %v", err)
	}
}

// TestParallelResultsInAnotherOrder: the results of one turn's calls
// compare in the order of the calls, whatever order they were appended in.
func TestParallelResultsInAnotherOrder(t *testing.T) {
	calls := conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopToolUse, Content: []conv.Block{
		{Type: conv.BlockToolUse, ID: "a", Name: "read", Input: `{"path":"a"}`},
		{Type: conv.BlockToolUse, ID: "b", Name: "read", Input: `{"path":"b"}`}}}
	results := func(ids ...string) conv.Message {
		m := conv.Message{Role: conv.RoleUser}
		for _, id := range ids {
			m.Content = append(m.Content, conv.Block{Type: conv.BlockToolResult, ToolUseID: id, Content: "content of " + id})
		}
		return m
	}
	r := New([]conv.Message{user("go"), calls, results("a", "b"), answerText("done")}, "", false, nil)
	stream(t, r, []conv.Message{user("go")})
	if m := stream(t, r, []conv.Message{user("go"), calls, results("b", "a")}); m.Text() != "done" {
		t.Fatalf("answered %q", m.Text())
	}
	// A result missing is still a divergence.
	var de *DivergedError
	_, err := New([]conv.Message{user("go"), calls, results("a", "b"), answerText("done")}, "", false, nil).
		Stream(context.Background(), provider.Request{Messages: []conv.Message{user("go"), calls, results("b")}}, nil)
	if !errors.As(err, &de) || !strings.Contains(de.Diff, "--- recorded\n  result of tool call a (read") {
		t.Fatalf("a missing result: %v", err)
	}
	// Where both results differ, the difference told is the first call's,
	// on both sides, whatever order they came in.
	changed := results("b", "a")
	for i := range changed.Content {
		changed.Content[i].Content += " changed"
	}
	_, err = New([]conv.Message{user("go"), calls, results("a", "b"), answerText("done")}, "", false, nil).
		Stream(context.Background(), provider.Request{Messages: []conv.Message{user("go"), calls, changed}}, nil)
	if !errors.As(err, &de) || !strings.Contains(de.Diff, "--- recorded\n  result of tool call a (read") ||
		!strings.Contains(de.Diff, "+++ now\n  result of tool call a (read") {
		t.Fatalf("both results changed: %v", err)
	}
}

// TestAnswersWithNothingBetween: two recorded answers with nothing to
// compare between them are served in turn, by how many answers the
// request already ends in.
func TestAnswersWithNothingBetween(t *testing.T) {
	rec := []conv.Message{user("go"), answerText("one"), answerText("two")}
	if m := stream(t, New(rec, "", false, nil), []conv.Message{user("go")}); m.Text() != "one" {
		t.Fatalf("first: %q", m.Text())
	}
	if m := stream(t, New(rec, "", false, nil), []conv.Message{user("go"), answerText("one")}); m.Text() != "two" {
		t.Fatalf("second: %q", m.Text())
	}
}

// TestCompactionInTheRecording: a recording whose run compacted replays in
// a run that does not: the summary and the context rebuilt after it are
// no prompts, and the conversation compared is the whole one.
func TestCompactionInTheRecording(t *testing.T) {
	sys := conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}
	envCtx := conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>")}}
	path := []session.Entry{msgEntry(sys), msgEntry(envCtx), msgEntry(user("go")), msgEntry(toolCall("t1", `{"path":"a"}`)), msgEntry(result("t1", "A")),
		{Type: "compaction", Fields: []byte(`{"summary":"read a","contextMessages":2}`)}, msgEntry(sys), msgEntry(envCtx), {Type: "turnContext", Fields: []byte(`{}`)},
		msgEntry(answerText("done")), {Type: runEntry}}
	r := fromPath(path, false, nil)
	if got := r.Prompts(); len(got) != 1 || got[0].Text() != "go" {
		t.Fatalf("prompts %+v", got)
	}
	stream(t, r, []conv.Message{sys, envCtx, user("go")})
	if m := stream(t, r, []conv.Message{sys, envCtx, user("go"), toolCall("t1", `{"path":"a"}`), result("t1", "A")}); m.Text() != "done" {
		t.Fatalf("after the compaction: %q", m.Text())
	}
	// The recorded session itself, continued with replay (a fork of it,
	// or the artifact of a real run resumed), sends the summary in place
	// of what it stands for: the request the recording made.
	req := projection.Project(path[:9])
	if len(req) != 3 || !projection.IsSummary(req[2].Text()) {
		t.Fatalf("the compaction is not in force: %+v", req)
	}
	if m := stream(t, fromPath(path, false, nil), req); m.Text() != "done" {
		t.Fatalf("the compacted request: %q", m.Text())
	}
	// Another summary is a divergence.
	req[2] = user(strings.Replace(req[2].Text(), "read a", "read b", 1))
	var de *DivergedError
	if _, err := fromPath(path, false, nil).Stream(context.Background(), provider.Request{Messages: req}, nil); !errors.As(err, &de) {
		t.Fatalf("another summary: %v", err)
	}
}

// TestNextOffThePath: a session that did not follow the recording cannot
// continue it.
func TestNextOffThePath(t *testing.T) {
	r := New([]conv.Message{user("go"), answerText("done")}, "", false, nil)
	var de *DivergedError
	if _, err := r.Next([]conv.Message{user("something else"), answerText("x")}, ""); !errors.As(err, &de) || !strings.Contains(de.Diff, "not the recording's conversation") || !strings.Contains(de.Diff, "something else") {
		t.Fatalf("Next: %v", err)
	}
	if _, err := r.Next(nil, "not go"); !errors.As(err, &de) || !strings.Contains(de.Diff, "--- recorded\n  prompt:\n  go\n+++ now\n  prompt:\n  not go") {
		t.Fatalf("Next with another prompt: %v", err)
	}
}

// TestPipelineSteps: examples/pipeline.jsonl replays as three steps, each
// with the schema in force at its end, and a torn last line (a recording
// copied while it was written) is left out and left alone.
func TestPipelineSteps(t *testing.T) {
	data, err := os.ReadFile("../../examples/pipeline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(t.TempDir(), "torn.jsonl")
	data = append(data, `{"type":"message","id":"0badf00d","parentId":"`...)
	if err := os.WriteFile(torn, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := provider.New(Name, provider.Options{Recording: torn})
	if err != nil {
		t.Fatal(err)
	}
	r := p.(*Provider)
	if after, _ := os.ReadFile(torn); !bytes.Equal(after, data) {
		t.Fatal("opening the recording changed it")
	}
	var history []conv.Message
	var steps [][]conv.Message
	for _, e := range r.Recording().ActivePath() {
		if e.Type == runEntry {
			steps = append(steps, slices.Clone(history))
		} else if e.Message != nil {
			history = append(history, *e.Message)
		}
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps", len(steps))
	}
	want := []string{"Plan the 0.4 changelog", "Write the changelog", "Report what you changed"}
	for i, h := range append([][]conv.Message{nil}, steps[:2]...) {
		st, err := r.Next(h, "")
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if len(st.Prompts) != 1 || !strings.HasPrefix(st.Prompts[0].Text(), want[i]) {
			t.Fatalf("step %d prompts %+v", i+1, st.Prompts)
		}
		if (st.Schema != nil) != (i == 2) {
			t.Fatalf("step %d schema %s", i+1, st.Schema)
		}
	}
	if _, err := r.Next(steps[2], ""); err == nil || !strings.Contains(err.Error(), "no recorded continuation") {
		t.Fatalf("after the last step: %v", err)
	}
}

// TestInterruptedRequest: within a step, a prompt followed by the next
// prompt with no answer between is a request an interrupt message ended,
// replayed as provider.ErrInterrupted; across steps (a run that failed
// after its prompt, then a resumed step) the same shape is no interrupt
// but a divergence, and the recorded results marked interrupted are
// offered for the runner to re-enact.
func TestInterruptedRequest(t *testing.T) {
	run := session.Entry{Type: runEntry}
	stopped := conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "t1", Content: "cancelled", IsError: true, Interrupted: true}}}
	path := []session.Entry{
		msgEntry(user("one")), msgEntry(toolCall("t1", `{"path":"a"}`)), msgEntry(stopped),
		msgEntry(user("two")), msgEntry(user("three")), msgEntry(answerText("Three.")), run,
		msgEntry(user("four")), run, msgEntry(user("five")), msgEntry(answerText("Five.")), run,
	}
	r := fromPath(path, false, nil)
	got := r.Interrupts()
	if len(got) != 1 || !got["t1"].Interrupted || got["t1"].Content != "cancelled" {
		t.Fatalf("interrupts %+v", got)
	}
	// After the interrupted call's result, the recording moved on to
	// "two", whose request was interrupted in turn.
	if _, err := r.Stream(context.Background(), provider.Request{Messages: []conv.Message{user("one"), toolCall("t1", `{"path":"a"}`), stopped}}, nil); !errors.Is(err, provider.ErrInterrupted) {
		t.Fatalf("after the interrupted call: %v", err)
	}
	two := []conv.Message{user("one"), toolCall("t1", `{"path":"a"}`), stopped, user("two")}
	if _, err := r.Stream(context.Background(), provider.Request{Messages: two}, nil); !errors.Is(err, provider.ErrInterrupted) {
		t.Fatalf("two: %v", err)
	}
	if m := stream(t, r, append(two, user("three"))); m.Text() != "Three." {
		t.Fatalf("three: %q", m.Text())
	}
	// "four" ended its step unanswered (a failed run), so its request is
	// no interrupt.
	four := append(two, user("three"), answerText("Three."), user("four"))
	_, err := r.Stream(context.Background(), provider.Request{Messages: four}, nil)
	var div *DivergedError
	if !errors.As(err, &div) {
		t.Fatalf("four: %v", err)
	}
	if New([]conv.Message{user("a"), answerText("b")}, "", false, nil).Interrupts() != nil {
		t.Fatal("a recording with no interrupt has interrupts")
	}
}
