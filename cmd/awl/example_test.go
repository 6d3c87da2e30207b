package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
)

// examplePrompt is the prompt of examples/summarise.jsonl.
const examplePrompt = "Summarise the notes in this directory into SUMMARY.md: decisions, owners, open tasks."

// exampleTurns are the model's answers in examples/summarise.jsonl, written
// by hand: list the directory, read both files, write the summary, answer.
var exampleTurns = []providertest.Turn{
	{
		Text:  "I'll look at what is in the directory first.",
		Calls: []providertest.Call{{ID: "toolu_01", Name: "ls", Input: `{}`}},
	},
	{
		Calls: []providertest.Call{
			{ID: "toolu_02", Name: "read", Input: `{"path":"notes.md"}`},
			{ID: "toolu_03", Name: "read", Input: `{"path":"todo.txt"}`},
		},
	},
	{
		Calls: []providertest.Call{{ID: "toolu_04", Name: "write", Input: `{"path":"SUMMARY.md","content":"# Summary\n\n## Decisions\n\n- 0.4 ships on 2 December, after another review of the resume fix.\n- Go 1.24 support ends after 0.4.\n\n## Owners\n\n- Dana: the 0.4 changelog.\n- Lee: the upgrade notes and the review of the resume fix.\n\n## Open tasks\n\n- Cache the Go module download in CI.\n- List the three slowest tests.\n"}`}},
	},
	{
		Text: "I wrote SUMMARY.md: 0.4 moves to 2 December, Go 1.24 support ends after it, Dana and Lee own the changelog and the upgrade notes, and two CI tasks remain open.",
	},
}

// TestRecordExample re-records examples/summarise.jsonl: it runs the real
// awl in a scratch copy of examples/workspace against the fake provider,
// which answers with exampleTurns, and copies the session file awl wrote.
// It runs only with AWL_RECORD_EXAMPLE=1 (see examples/README.md).
func TestRecordExample(t *testing.T) {
	if os.Getenv("AWL_RECORD_EXAMPLE") != "1" {
		t.Skip("set AWL_RECORD_EXAMPLE=1 to re-record examples/summarise.jsonl")
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	defer srv.Close()
	recordingEnv(t, examples, srv, exampleTurns)

	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "json", examplePrompt}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("awl run exited %d\nstderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	var res struct {
		SessionPath string `json:"session_path"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.SessionPath == "" {
		t.Fatalf("result: %v: %s", err, stdout.String())
	}
	data, err := os.ReadFile(res.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(examples, "summarise.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote examples/summarise.jsonl (%d bytes) from %s", len(data), res.SessionPath)
}

// recordingEnv prepares a recording of an example: a scratch copy of
// examples/workspace as the working directory, srv answering with turns
// as claude-sonnet-4-5 through the Anthropic wire API, sessions in the
// scratch directory, no user AGENTS.md, UTC. It returns the scratch
// directory, the workspace's parent.
func recordingEnv(t *testing.T, examples string, srv *providertest.Server, turns []providertest.Turn) string {
	t.Helper()
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "workspace")
	if err := os.CopyFS(ws, os.DirFS(filepath.Join(examples, "workspace"))); err != nil {
		t.Fatal(err)
	}
	for i, turn := range turns {
		turn.Model = "claude-sonnet-4-5"
		turn.InputTokens, turn.OutputTokens = 900+250*i, 40+30*i
		srv.Enqueue(providertest.Stream("anthropic", turn))
	}
	t.Setenv("ANTHROPIC_API_KEY", "not-a-real-key")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", filepath.Join(tmp, "sessions"))
	t.Setenv("AWL_PROVIDER", "")
	t.Setenv("AWL_MODEL", "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config")) // no user AGENTS.md
	t.Setenv("TZ", "UTC")
	t.Chdir(ws)
	return tmp
}
