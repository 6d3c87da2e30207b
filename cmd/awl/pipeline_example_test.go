package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/modelctx"
)

// pipelineStep is one step of examples/pipeline.jsonl: the arguments of its
// `awl run` (the session reference is filled in) and the model's answers,
// written by hand.
type pipelineStep struct {
	args  func(id, path string) []string
	turns []providertest.Turn
}

// The prompts of examples/pipeline.jsonl, in the order the steps give them.
const (
	pipelinePlan      = "Plan the 0.4 changelog from the notes in this directory."
	pipelineImplement = "Write the changelog to CHANGELOG.md."
	pipelineReport    = "Report what you changed."
)

// pipelineSteps are the three chained steps of examples/pipeline.jsonl: a
// new session, a --resume by id, and a --resume by path with
// --output-schema (examples/pipeline.schema.json).
var pipelineSteps = []pipelineStep{
	{
		args: func(string, string) []string { return []string{pipelinePlan} },
		turns: []providertest.Turn{
			{
				Text: "I'll read the notes and the task list.",
				Calls: []providertest.Call{
					{ID: "toolu_p1", Name: "read", Input: `{"path":"notes.md"}`},
					{ID: "toolu_p2", Name: "read", Input: `{"path":"todo.txt"}`},
				},
			},
			{Text: "Plan for the 0.4 changelog:\n1. Changed: the release moves to 2 December.\n2. Removed: Go 1.24 support ends after 0.4.\n3. Still open: the resume fix review (Lee), the CI module cache."},
		},
	},
	{
		args: func(id, _ string) []string { return []string{"--resume", id, pipelineImplement} },
		turns: []providertest.Turn{
			{Calls: []providertest.Call{{ID: "toolu_p3", Name: "write", Input: `{"path":"CHANGELOG.md","content":"# Changelog\n\n## 0.4 (2 December)\n\n### Changed\n\n- The release moves to 2 December, after another review of the resume fix.\n\n### Removed\n\n- Support for Go 1.24 ends with this release.\n"}`}}},
			{Text: "I wrote CHANGELOG.md: the new date under Changed, the end of Go 1.24 support under Removed."},
		},
	},
	{
		args: func(_, path string) []string {
			return []string{"--resume", path, "--output-schema", "../pipeline.schema.json", pipelineReport}
		},
		turns: []providertest.Turn{
			{Calls: []providertest.Call{{ID: "toolu_p4", Name: "read", Input: `{"path":"CHANGELOG.md"}`}}},
			{Text: `{"files":["CHANGELOG.md"],"summary":"Added the 0.4 changelog: the release date and the end of Go 1.24 support."}`},
		},
	},
}

// recordPipeline runs the three steps of pipelineSteps with the real awl in
// a scratch copy of examples/workspace against the fake provider and
// returns the session file of the last step: the recording of the whole
// pipeline.
func recordPipeline(t *testing.T) []byte {
	t.Helper()
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	defer srv.Close()
	var turns []providertest.Turn
	for _, step := range pipelineSteps {
		turns = append(turns, step.turns...)
	}
	tmp := recordingEnv(t, examples, srv, turns)
	// The schema sits beside the workspace, so the recorded
	// --output-schema is the relative path the demo gives.
	schema, err := os.ReadFile(filepath.Join(examples, "pipeline.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "pipeline.schema.json"), schema, 0o644); err != nil {
		t.Fatal(err)
	}

	var id, path string
	for i, step := range pipelineSteps {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "--no-stdin", "-o", "json"}, step.args(id, path)...)
		if code := Main(context.Background(), args, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("step %d: awl %q exited %d\nstderr:\n%s\nstdout:\n%s", i+1, args, code, stderr.String(), stdout.String())
		}
		var res struct {
			SessionID   string `json:"session_id"`
			SessionPath string `json:"session_path"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.SessionPath == "" {
			t.Fatalf("step %d result: %v: %s", i+1, err, stdout.String())
		}
		if id != "" && res.SessionID != id {
			t.Fatalf("step %d continued session %s, not %s", i+1, res.SessionID, id)
		}
		id, path = res.SessionID, res.SessionPath
	}
	if got := len(srv.Requests()); got != len(turns) {
		t.Fatalf("the pipeline made %d requests, want %d", got, len(turns))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRecordPipelineExample re-records examples/pipeline.jsonl. It runs
// only with AWL_RECORD_EXAMPLE=1 (see examples/README.md).
func TestRecordPipelineExample(t *testing.T) {
	if os.Getenv("AWL_RECORD_EXAMPLE") != "1" {
		t.Skip("set AWL_RECORD_EXAMPLE=1 to re-record examples/pipeline.jsonl")
	}
	out, err := filepath.Abs("../../examples/pipeline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	data := recordPipeline(t)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote examples/pipeline.jsonl (%d bytes)", len(data))
}

// TestPipelineExampleIsWhatTheScriptMakes: the committed recording is what
// recording pipelineSteps makes today, up to what differs between any two
// recordings (ids, times, the scratch directory, the context shown).
func TestPipelineExampleIsWhatTheScriptMakes(t *testing.T) {
	committed, err := os.ReadFile("../../examples/pipeline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want, got := recordingShape(t, committed), recordingShape(t, recordPipeline(t))
	if !reflect.DeepEqual(want, got) {
		for i := range max(len(want), len(got)) {
			var w, g string
			if i < len(want) {
				w = want[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if w != g {
				t.Fatalf("examples/pipeline.jsonl is not what the script records now (re-record it with AWL_RECORD_EXAMPLE=1 go test -run TestRecordPipelineExample ./cmd/awl/):\nentry %d committed: %s\nentry %d now:       %s", i, w, i, g)
			}
		}
	}
}

// recordingShape is a session file's lines as what two recordings of the
// same script share: each entry's type, a message's role and content (but
// the system prompt's and the context's), a run's exit code, reason and
// turns.
func recordingShape(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type     string `json:"type"`
			Provider string `json:"provider"`
			Model    string `json:"model"`
			Message  *struct {
				Role    string           `json:"role"`
				Content []map[string]any `json:"content"`
			} `json:"message"`
			ExitCode *int   `json:"exitCode"`
			Reason   string `json:"reason"`
			Turns    *int   `json:"turns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		line := e.Type
		switch {
		case e.Type == "session":
			line += " " + e.Provider + " " + e.Model
		case e.Message != nil && (e.Message.Role == "system" || contextualContent(e.Message.Role, e.Message.Content)):
			line += " " + e.Message.Role + " (context)"
		case e.Message != nil:
			b, _ := json.Marshal(e.Message)
			line += " " + string(b)
		case e.ExitCode != nil:
			b, _ := json.Marshal([]any{*e.ExitCode, e.Reason, e.Turns})
			line += " " + string(b)
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// contextualContent: a user message made only of context fragments.
func contextualContent(role string, content []map[string]any) bool {
	m := conv.Message{Role: conv.Role(role)}
	for _, b := range content {
		text, ok := b["text"].(string)
		if b["type"] != "text" || !ok {
			return false
		}
		m.Content = append(m.Content, conv.TextBlock(text))
	}
	return modelctx.IsContextualMessage(m)
}
