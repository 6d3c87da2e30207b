package session

import (
	"path/filepath"
	"testing"
)

// TestBoundaryEntriesAreSkipped: prune and compaction entries, as the runner
// writes them, are unknown to this package, as they are to every awl that
// predates them. Open accepts them, keeps them on the active path with
// their members byte for byte, and the plain rebuild skips them: an older
// awl resumes such a session with the whole conversation.
func TestBoundaryEntriesAreSkipped(t *testing.T) {
	file := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/w","provider":"anthropic","model":"m"}
{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-12-01T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"go"}]}}
{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolUse","id":"c1","name":"read","input":"{\"path\":\"a\"}"}]}}
{"type":"message","id":"00000003","parentId":"00000002","timestamp":"2026-12-01T10:00:02.000Z","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"c1","content":"long output"}]}}
{"type":"prune","id":"00000004","parentId":"00000003","timestamp":"2026-12-01T10:00:03.000Z","upToId":"00000003","tokensBefore":12100,"tokensAfter":4000}
{"type":"compaction","id":"00000005","parentId":"00000004","timestamp":"2026-12-01T10:00:04.000Z","summary":"Task: …","firstKeptEntryId":"00000002","tokensBefore":16200,"tokensAfter":3100,"provider":"anthropic","model":"m","reason":"threshold"}
{"type":"message","id":"00000006","parentId":"00000005","timestamp":"2026-12-01T10:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}
`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, []byte(file))
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := len(s.ActivePath()); got != 6 {
		t.Errorf("active path has %d entries, want 6", got)
	}
	c := s.Conversation()
	if len(c) != 4 || c[3].Text() != "done" {
		t.Errorf("Conversation = %+v, want the four messages", c)
	}
	if got := string(s.ActivePath()[3].Fields); got != `{"upToId":"00000003","tokensBefore":12100,"tokensAfter":4000}` {
		t.Errorf("prune Fields = %s", got)
	}
}
