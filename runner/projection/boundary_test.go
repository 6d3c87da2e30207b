package projection

import (
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

func TestBoundaryNotes(t *testing.T) {
	two := 2
	path := []session.Entry{
		msgEntry("00000001", conv.RoleUser, conv.TextBlock("task")),
		msgEntry("00000002", conv.RoleAssistant, conv.TextBlock("done")),
		fieldsEntry(session.TypePrune, "00000003", session.Prune{UpToID: "00000001"}),
		fieldsEntry(session.TypePrune, "00000004", session.Prune{UpToID: "0badc0de"}),
		fieldsEntry(session.TypeCompaction, "00000005", session.Compaction{Summary: "ok", ContextMessages: &two}),
		msgEntry("00000006", conv.RoleSystem, conv.TextBlock("sys")),
		msgEntry("00000007", conv.RoleUser, conv.TextBlock("<environment_context>\n</environment_context>")),
		{Type: session.TypeTurnContext, ID: "00000008", Fields: []byte(`{}`)},
		fieldsEntry(session.TypeCompaction, "00000009", session.Compaction{Summary: " "}),
		fieldsEntry(session.TypeCompaction, "0000000a", session.Compaction{Summary: "cut", ContextMessages: &two}),
		msgEntry("0000000b", conv.RoleSystem, conv.TextBlock("sys")),
	}
	var got []string
	for _, n := range BoundaryNotes(path) {
		got = append(got, n.ID+" "+n.Reason)
	}
	want := []string{
		"00000004 its upToId 0badc0de names no entry on the path",
		"00000009 its summary is missing or blank",
		"0000000a the context rebuilt after it is incomplete",
	}
	if len(got) != len(want) {
		t.Fatalf("notes %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("note %d = %q, want it to start %q", i, got[i], want[i])
		}
	}
}
