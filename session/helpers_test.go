package session

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
)

// testStore returns a store in a temporary directory with a pinned clock
// (advancing 1ms per call) and seeded randomness.
func testStore(t testing.TB) *Store {
	t.Helper()
	now := time.Date(2026, 4, 25, 17, 40, 15, 990_000_000, time.UTC)
	return &Store{
		Dir: filepath.Join(t.TempDir(), "sessions"),
		Now: func() time.Time {
			now = now.Add(time.Millisecond)
			return now
		},
		Rand: rand.NewChaCha8([32]byte{1, 2, 3}),
	}
}

func mustAppend(t testing.TB, s *Session, e Entry) Entry {
	t.Helper()
	got, err := s.Append(e)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return got
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func userMsg(text string) *conv.Message {
	return &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text)}}
}

// allKinds returns entries covering every entry and block type and every
// optional field.
func allKinds() []Entry {
	return []Entry{
		{Message: &conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("You are a helpful assistant.")}}},
		{Provider: "anthropic", Model: "claude-sonnet-4-20250514", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
			conv.TextBlock("What files are in this directory?\n\"quoted\" \\ tab\t ctl\x01 ünï 🎉"),
			{Type: conv.BlockImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
			conv.TextBlock(""),
		}}},
		{Type: "turnContext", Fields: []byte(`{"cwd":"/x","env":{"a":[1,2.5,true,null]},"note":"n\u00e9"}`)},
		{Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{
			{Type: conv.BlockThinking, Thinking: "The user wants to list files...", Signature: "sig=="},
			{Type: conv.BlockThinking, Redacted: "opaque-redacted"},
			{Type: conv.BlockThinking, Thinking: "summary", Signature: "enc", ItemID: "rs_123"},
			conv.TextBlock("I'll check that for you."),
			{Type: conv.BlockToolUse, ID: "tool_abc123", Name: "bash", Input: `{"command":"ls"}`},
			{Type: conv.BlockToolUse, ID: "tool_2", Name: "noargs", Input: ""},
		}, Provider: "anthropic", Model: "claude-sonnet-4-20250514", StopReason: conv.StopToolUse,
			Usage: &conv.Usage{Input: 1500, Output: 85, CacheRead: 1200, CacheWrite: 300}}},
		{Provider: "openai", Model: "gpt-4o", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
			{Type: conv.BlockToolResult, ToolUseID: "tool_abc123", Content: "file1.txt\nfile2.txt"},
			{Type: conv.BlockToolResult, ToolUseID: "tool_2", Content: "boom", IsError: true,
				Attachments: []conv.Attachment{{Type: "image", MimeType: "image/jpeg", Data: "/9j/4AAQ"}}},
		}}},
		{Type: "turnContext"},
		{Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("done")},
			Provider: "openai", Model: "gpt-4o", StopReason: conv.StopEnd}},
		{Message: &conv.Message{Role: conv.RoleAssistant, Content: nil,
			Provider: "openai", Model: "gpt-4o", StopReason: conv.StopError, Usage: &conv.Usage{}}},
	}
}
