package runner

import (
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/prompt"
	"github.com/awlrun/awl/session"
)

func TestBoundaryNotes(t *testing.T) {
	two := 2
	path := []session.Entry{
		msgEntry("00000001", conv.RoleUser, conv.TextBlock("task")),
		msgEntry("00000002", conv.RoleAssistant, conv.TextBlock("done")),
		fieldsEntry(TypePrune, "00000003", pruneFields{UpToID: "00000001"}),
		fieldsEntry(TypePrune, "00000004", pruneFields{UpToID: "0badc0de"}),
		fieldsEntry(TypeCompaction, "00000005", compactionFields{Summary: "ok", ContextMessages: &two}),
		msgEntry("00000006", conv.RoleSystem, conv.TextBlock("sys")),
		msgEntry("00000007", conv.RoleUser, conv.TextBlock("<environment_context>\n</environment_context>")),
		{Type: prompt.EntryType, ID: "00000008", Fields: []byte(`{}`)},
		fieldsEntry(TypeCompaction, "00000009", compactionFields{Summary: " "}),
		fieldsEntry(TypeCompaction, "0000000a", compactionFields{Summary: "cut", ContextMessages: &two}),
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
