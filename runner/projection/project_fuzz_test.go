package projection

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

// fuzzPath builds an active path from data, one entry per byte pair: the
// first byte picks the kind, the second a size or an earlier entry. Ids
// are unique; boundaries may name any entry, earlier or not on the path,
// and carry any contextMessages, as a hand-edited file might.
func fuzzPath(data []byte) []session.Entry {
	var path []session.Entry
	id := func(i int) string { return fmt.Sprintf("%08x", i+1) }
	for i := 0; i+1 < len(data) && len(path) < 400; i += 2 {
		kind, arg := data[i]%9, int(data[i+1])
		n := len(path)
		ref := func() string {
			if n == 0 || arg%7 == 0 {
				return "nope"
			}
			return id(arg % n)
		}
		switch kind {
		case 0:
			path = append(path, msgEntry(id(n), conv.RoleUser, conv.TextBlock("task "+strings.Repeat("u", arg))))
		case 1:
			path = append(path, msgEntry(id(n), conv.RoleAssistant, conv.Block{Type: conv.BlockToolUse, ID: fmt.Sprintf("c%d", n), Name: "bash", Input: `{"command":"make"}`}))
		case 2:
			path = append(path, msgEntry(id(n), conv.RoleUser, conv.Block{Type: conv.BlockToolResult, ToolUseID: fmt.Sprintf("c%d", n-1), Content: strings.Repeat("out\n", arg*8)}))
		case 3:
			path = append(path, msgEntry(id(n), conv.RoleAssistant, conv.TextBlock("answer")))
		case 4:
			path = append(path, msgEntry(id(n), conv.RoleSystem, conv.TextBlock("system")))
		case 5:
			path = append(path, msgEntry(id(n), conv.RoleUser, conv.TextBlock("<environment_context>\n</environment_context>")))
		case 6:
			path = append(path, fieldsEntry(session.TypePrune, id(n), session.Prune{UpToID: ref()}))
		case 7:
			cm := arg%5 - 1 // -1 .. 3
			f := session.Compaction{Summary: strings.Repeat("s", arg%3), FirstKeptEntryID: ref(), ContextMessages: &cm}
			if arg%11 == 0 {
				f.ContextMessages = nil
			}
			path = append(path, fieldsEntry(session.TypeCompaction, id(n), f))
		case 8:
			path = append(path, session.Entry{Type: session.TypeTurnContext, ID: id(n), Fields: json.RawMessage(`{}`)})
		}
	}
	return path
}

// FuzzProject: Project never panics on any path, is a pure function, never
// shows more messages than the path holds (plus the summary), and keeps
// the prefix property: a message appended to a path extends its
// projection by that message, unchanged.
func FuzzProject(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 200, 3, 0, 6, 2, 7, 1, 4, 0, 5, 0, 8, 0, 0, 9})
	f.Add([]byte{0, 1, 1, 0, 2, 255, 1, 0, 2, 255, 3, 0, 7, 6, 4, 0, 5, 0, 8, 0, 6, 4, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := fuzzPath(data)
		got := Project(path)
		if again := Project(path); !reflect.DeepEqual(got, again) {
			t.Fatal("Project gave two answers for one path")
		}
		msgs := 0
		for _, e := range path {
			if e.Message != nil {
				msgs++
			}
		}
		if len(got) > msgs+1 {
			t.Fatalf("%d messages projected from %d", len(got), msgs)
		}
		_ = AllPruned(path)
		next := append(path[:len(path):len(path)], msgEntry("ffffffff", conv.RoleUser, conv.TextBlock("next")))
		ext := Project(next)
		if len(ext) != len(got)+1 || !reflect.DeepEqual(ext[:len(got)], got) || ext[len(got)].Content[0].Text != "next" {
			t.Fatalf("appending a message did not extend the projection:\n%s\n%s", texts(got), texts(ext))
		}
	})
}
