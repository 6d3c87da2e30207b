package projection

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

// TestReachProjectsAsThePath: what Reach keeps projects as the whole path
// does, on the random paths of TestProjectMatchesMapVersion (repeated ids,
// boundaries naming missing or earlier ids, compactions without a
// summary...), and still does after entries are appended that name no
// entry before it: the runner goes on with what it kept. On enough of
// the paths Reach drops something, or the test would prove nothing.
func TestReachProjectsAsThePath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	dropped := 0
	for n := range 4000 {
		path := randomPath(rng, 5+rng.IntN(60))
		at := Reach(path)
		if !reflect.DeepEqual(Project(path[at:]), Project(path)) {
			t.Fatalf("path %d: path[%d:] projects otherwise than the path", n, at)
		}
		if at == 0 {
			continue
		}
		dropped++
		for range 1 + rng.IntN(4) {
			path = extend(rng, path, at)
			if !reflect.DeepEqual(Project(path[at:]), Project(path)) {
				t.Fatalf("path %d: after %s appended, path[%d:] projects otherwise than the path", n, path[len(path)-1].Type, at)
			}
		}
	}
	if dropped < 100 {
		t.Errorf("Reach dropped entries of only %d paths in 4000", dropped)
	}
}

// extend appends one entry of the kinds a run writes after a compaction,
// naming only entries from path[at:]: a model turn, a tool result, a
// prune, or a compaction with its rebuilt context.
func extend(rng *rand.Rand, path []session.Entry, at int) []session.Entry {
	id := fmt.Sprintf("e%07x", len(path))
	ref := func() string { return path[at+rng.IntN(len(path)-at)].ID }
	switch rng.IntN(4) {
	case 0:
		call := conv.Block{Type: conv.BlockToolUse, ID: fmt.Sprint("x", len(path)), Name: "bash", Input: `{"command":"ls"}`}
		return append(path, msgEntry(id, conv.RoleAssistant, conv.TextBlock("t"), call))
	case 1:
		res := conv.Block{Type: conv.BlockToolResult, ToolUseID: fmt.Sprint("x", len(path)-1), Content: string(make([]byte, 2000))}
		return append(path, msgEntry(id, conv.RoleUser, res))
	case 2:
		return append(path, fieldsEntry(session.TypePrune, id, session.Prune{UpToID: ref()}))
	}
	path = append(path, fieldsEntry(session.TypeCompaction, id, session.Compaction{Summary: "s " + id, FirstKeptEntryID: ref(), ContextMessages: new(1)}))
	path = append(path, msgEntry(id+"c", conv.RoleSystem, conv.TextBlock("sys")))
	return append(path, session.Entry{Type: session.TypeTurnContext, ID: id + "b", Fields: []byte(`{}`)})
}

// TestReachOfACompactedSession: in a session as a long run writes it, what
// the compaction summarised is dropped and what it keeps is not: Reach is
// the compaction's first kept entry.
func TestReachOfACompactedSession(t *testing.T) {
	data, _ := compactedSession(2_000, 3)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	path := s.ActivePath()
	var f session.Compaction
	comp := -1
	for i := range path {
		if path[i].Type == session.TypeCompaction && path[i].Decode(&f) == nil {
			comp = i
		}
	}
	at := Reach(path)
	if comp < 0 || at == 0 || at >= comp || path[at].ID != f.FirstKeptEntryID {
		t.Fatalf("Reach = %d (%s); want the first kept entry %s, before the compaction at %d", at, path[at].ID, f.FirstKeptEntryID, comp)
	}
}

// TestReachOfAnEditedPrune: a prune boundary that names an entry before
// the first kept one, after one that names a later entry (edited by hand:
// awl writes them in order), decides what Project stubs; without the
// entries before, the earlier prune would apply. Reach keeps everything.
func TestReachOfAnEditedPrune(t *testing.T) {
	big := string(make([]byte, 3000))
	call := func(id string) conv.Block {
		return conv.Block{Type: conv.BlockToolUse, ID: id, Name: "bash", Input: `{"command":"ls"}`}
	}
	result := func(id string) conv.Block { return conv.Block{Type: conv.BlockToolResult, ToolUseID: id, Content: big} }
	path := []session.Entry{
		msgEntry("00000001", conv.RoleSystem, conv.TextBlock("sys")),
		msgEntry("00000002", conv.RoleUser, conv.TextBlock("task")),
		{Type: session.TypeTurnContext, ID: "00000003", Fields: []byte(`{}`)},
		msgEntry("00000004", conv.RoleAssistant, call("c1")),
		msgEntry("00000005", conv.RoleUser, result("c1")),
		msgEntry("00000006", conv.RoleAssistant, call("c2")),
		msgEntry("00000007", conv.RoleUser, result("c2")),
		fieldsEntry(session.TypePrune, "00000008", session.Prune{UpToID: "00000007"}),
		fieldsEntry(session.TypePrune, "00000009", session.Prune{UpToID: "00000005"}),
		fieldsEntry(session.TypeCompaction, "0000000a", session.Compaction{Summary: "s", FirstKeptEntryID: "00000006", ContextMessages: new(1)}),
		msgEntry("0000000b", conv.RoleSystem, conv.TextBlock("sys")),
		{Type: session.TypeTurnContext, ID: "0000000c", Fields: []byte(`{}`)},
	}
	if reflect.DeepEqual(Project(path[5:]), Project(path)) {
		t.Fatal("the test's path projects the same from its first kept entry: it tests nothing")
	}
	if at := Reach(path); at != 0 {
		t.Errorf("Reach = %d, want 0", at)
	}
	// Without the later prune, the first kept entry is where it reaches.
	path = append(path[:8:8], path[9:]...)
	if at := Reach(path); at != 5 {
		t.Errorf("Reach = %d without the edited prune, want 5", at)
	}
}
