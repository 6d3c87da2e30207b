package projection

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

func msgEntry(id string, role conv.Role, blocks ...conv.Block) session.Entry {
	return session.Entry{Type: session.TypeMessage, ID: id, Message: &conv.Message{Role: role, Content: blocks}}
}

func fieldsEntry(typ, id string, v any) session.Entry {
	b, _ := json.Marshal(v)
	return session.Entry{Type: typ, ID: id, Fields: b}
}

func texts(msgs []conv.Message) string {
	var out []string
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.Type {
			case conv.BlockText:
				out = append(out, string(m.Role)+":"+strings.SplitN(b.Text, "\n", 2)[0])
			case conv.BlockToolUse:
				out = append(out, "call:"+b.ID)
			case conv.BlockToolResult:
				out = append(out, "result:"+strings.SplitN(b.Content, "\n", 2)[0])
			}
		}
	}
	return strings.Join(out, " | ")
}

func TestProject(t *testing.T) {
	big := strings.Repeat("x", 30) + "\n" + strings.Repeat("0123456789\n", 200)
	path := []session.Entry{
		msgEntry("00000001", conv.RoleSystem, conv.TextBlock("sys v1")),
		msgEntry("00000002", conv.RoleUser, conv.TextBlock("task")),
		{Type: session.TypeTurnContext, ID: "00000003", Fields: []byte(`{}`)},
		msgEntry("00000004", conv.RoleAssistant, conv.Block{Type: conv.BlockToolUse, ID: "c1", Name: "bash", Input: `{"command":"go test ./..."}`}),
		msgEntry("00000005", conv.RoleUser, conv.Block{Type: conv.BlockToolResult, ToolUseID: "c1", Content: big}),
		msgEntry("00000006", conv.RoleAssistant, conv.Block{Type: conv.BlockToolUse, ID: "c2", Name: "read", Input: `{"path":"a.go"}`}),
		msgEntry("00000007", conv.RoleUser, conv.Block{Type: conv.BlockToolResult, ToolUseID: "c2", Content: "small"}),
	}
	if got := texts(Project(path)); got != "system:sys v1 | user:task | call:c1 | result:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | call:c2 | result:small" {
		t.Errorf("plain projection: %s", got)
	}

	pruned := append(path[:7:7], fieldsEntry(session.TypePrune, "00000008", session.Prune{UpToID: "00000005"}))
	msgs := Project(pruned)
	stub := msgs[3].Content[0].Content
	want := "[output of `go test ./...`, 2.2 KB, pruned; 12 of 201 lines kept:\n" + strings.Repeat("x", 30) + "\n0123456789"
	if !strings.HasPrefix(stub, want) || !strings.HasSuffix(stub, "0123456789]") || !strings.Contains(stub, "\n…\n") {
		t.Errorf("stub = %q", stub)
	}
	if path[4].Message.Content[0].Content != big {
		t.Error("pruning changed the session's own entry")
	}
	if msgs[5].Content[0].Content != "small" {
		t.Error("a small result was stubbed")
	}

	// A compaction keeps 00000006 on, puts the rebuilt context first and
	// the summary after it.
	comp := append(pruned[:8:8],
		fieldsEntry(session.TypeCompaction, "00000009", session.Compaction{Summary: "did things", FirstKeptEntryID: "00000006"}),
		msgEntry("0000000a", conv.RoleSystem, conv.TextBlock("sys v2")),
		msgEntry("0000000b", conv.RoleUser, conv.TextBlock("<environment_context>")),
		session.Entry{Type: session.TypeTurnContext, ID: "0000000c", Fields: []byte(`{}`)},
		msgEntry("0000000d", conv.RoleAssistant, conv.TextBlock("next")),
	)
	got := texts(Project(comp))
	if got != "system:sys v2 | user:<environment_context> | user:<awl-compaction> | call:c2 | result:small | assistant:next" {
		t.Errorf("compacted projection: %s", got)
	}
	if m := Project(comp)[2]; !IsSummary(m.Content[0].Text) || !strings.Contains(m.Content[0].Text, "did things") {
		t.Errorf("summary message = %q", m.Content[0].Text)
	}

	// A later compaction without a summary (hand-edited, or a summary
	// member that is not a string) would throw the history away: it is
	// skipped, and the one before it applies.
	for _, fields := range []string{`{"firstKeptEntryId":"0000000d"}`, `{"summary":"  \n","firstKeptEntryId":"0000000d"}`, `{"summary":7}`, `not json`} {
		broken := append(comp[:13:13],
			session.Entry{Type: session.TypeCompaction, ID: "0000000e", Fields: []byte(fields)},
			msgEntry("0000000f", conv.RoleAssistant, conv.TextBlock("after")),
		)
		if got := texts(Project(broken)); got != "system:sys v2 | user:<environment_context> | user:<awl-compaction> | call:c2 | result:small | assistant:next | assistant:after" {
			t.Errorf("with the compaction %s: %s", fields, got)
		}
	}
}

func TestPruneStubImageAndLabel(t *testing.T) {
	res := conv.Block{Type: conv.BlockToolResult, ToolUseID: "v", Content: "image", Attachments: []conv.Attachment{{Type: "image", MimeType: "image/png", Data: strings.Repeat("A", 4096)}}}
	got := pruneStub(conv.Block{Name: "view_image", Input: `{"path":"shot.png"}`}, res)
	if got != "[output of view_image `shot.png`, 5 bytes, pruned; attachment image/png, 3.0 KB:\nimage]" {
		t.Errorf("stub = %q", got)
	}
	if got := callLabel(conv.Block{Name: "mcp__x__y", Input: `not json`}); got != "mcp__x__y" {
		t.Errorf("label = %q", got)
	}
}

// TestProjectAllPruned: the projection for a summary request that must
// shrink stubs every large result from the result the session holds, even
// one an earlier prune already stubbed: never a stub of a stub.
func TestProjectAllPruned(t *testing.T) {
	big := strings.Repeat("0123456789abcdef ", 200) + "\n"
	var path []session.Entry
	for i := range 3 {
		id := fmt.Sprintf("c%d", i)
		path = append(path,
			msgEntry(fmt.Sprintf("%08d", 2*i+1), conv.RoleAssistant, conv.Block{Type: conv.BlockToolUse, ID: id, Name: "bash", Input: `{"command":"cat big"}`}),
			msgEntry(fmt.Sprintf("%08d", 2*i+2), conv.RoleUser, conv.Block{Type: conv.BlockToolResult, ToolUseID: id, Content: strings.Repeat(big, 20)}))
	}
	path = append(path, fieldsEntry(session.TypePrune, "00000007", session.Prune{UpToID: "00000002"}))
	for i, m := range AllPruned(path) {
		if i%2 == 0 {
			continue
		}
		c := m.Content[0].Content
		if !strings.HasPrefix(c, "[output of `cat big`, 66.4 KB, pruned") || strings.Count(c, "[output of") != 1 {
			t.Errorf("result %d: %.120q", i, c)
		}
	}
}

// makeCall is entry id: an assistant message calling bash, call callID.
func makeCall(id, callID string) session.Entry {
	return msgEntry(id, conv.RoleAssistant, conv.Block{Type: conv.BlockToolUse, ID: callID, Name: "bash", Input: `{"command":"make"}`})
}

// makeResult is entry id: the result out of call callID.
func makeResult(id, callID, out string) session.Entry {
	return msgEntry(id, conv.RoleUser, conv.Block{Type: conv.BlockToolResult, ToolUseID: callID, Content: out})
}

// fourCalls is a session of a task and four calls: the first result
// small, the other three large.
func fourCalls() []session.Entry {
	big := strings.Repeat("0123456789\n", 200)
	return []session.Entry{
		msgEntry("00000001", conv.RoleSystem, conv.TextBlock("sys")),
		msgEntry("00000002", conv.RoleUser, conv.TextBlock("task")),
		makeCall("00000003", "c1"), makeResult("00000004", "c1", "small"),
		makeCall("00000005", "c2"), makeResult("00000006", "c2", big),
		makeCall("00000007", "c3"), makeResult("00000008", "c3", big),
		makeCall("00000009", "c4"), makeResult("0000000a", "c4", big),
	}
}

// TestProjectStable: the stable prefix ends before the first large tool
// result a prune has not stubbed, so the next prune, which stubs from
// there on, leaves it as it is; a prune moves it past its stubs; a
// compaction's kept messages count like any other.
func TestProjectStable(t *testing.T) {
	call, result := makeCall, makeResult
	path := fourCalls()
	check := func(name string, p []session.Entry, want int) {
		t.Helper()
		msgs, stable := ProjectStable(p)
		if stable != want {
			t.Errorf("%s: stable %d, want %d (%s)", name, stable, want, texts(msgs))
		}
		if again := Project(p); texts(again) != texts(msgs) {
			t.Errorf("%s: Project and ProjectStable differ", name)
		}
		// Stubbing every result the next prune could reach leaves the
		// stable prefix as it was.
		if stable < len(msgs) {
			after := Project(append(p[:len(p):len(p)], fieldsEntry(session.TypePrune, "ffffffff", session.Prune{UpToID: p[len(p)-1].ID})))
			for i := range stable {
				if fmt.Sprint(after[i]) != fmt.Sprint(msgs[i]) {
					t.Errorf("%s: message %d changed under the next prune", name, i)
				}
			}
			if fmt.Sprint(after[stable]) == fmt.Sprint(msgs[stable]) {
				t.Errorf("%s: the next prune left message %d, the first past the stable prefix, as it was", name, stable)
			}
		}
	}
	check("no large result yet", path[:5], 5)
	check("no prune", path, 5)
	pruned := append(path[:len(path):len(path)], fieldsEntry(session.TypePrune, "0000000b", session.Prune{UpToID: "00000006"}))
	check("after a prune", pruned, 7)
	pruned = append(pruned, fieldsEntry(session.TypePrune, "0000000c", session.Prune{UpToID: "0000000a"}))
	check("everything pruned", pruned, 10)
	comp := append(path[:len(path):len(path)],
		fieldsEntry(session.TypeCompaction, "0000000d", session.Compaction{Summary: "did things", FirstKeptEntryID: "00000009"}),
		msgEntry("0000000e", conv.RoleSystem, conv.TextBlock("sys")),
		session.Entry{Type: session.TypeTurnContext, ID: "0000000f", Fields: []byte(`{}`)},
		call("00000010", "c5"), result("00000011", "c5", "small"),
	)
	// sys, summary, kept call c4, its large result: the stable prefix ends
	// before it.
	check("after a compaction", comp, 3)
}

// TestProjectShared: after a prune, the shared prefix is the stable prefix
// the requests before it had (the projection without the prune), which
// the request after it begins with unchanged; it is 0 with no prune, and
// when a compaction came after the latest prune (no earlier request
// begins with its summary).
func TestProjectShared(t *testing.T) {
	big := strings.Repeat("0123456789\n", 200)
	call, result := makeCall, makeResult
	prune := func(id, upTo string) session.Entry {
		return fieldsEntry(session.TypePrune, id, session.Prune{UpToID: upTo})
	}
	path := fourCalls()
	grow := func(p []session.Entry, more ...session.Entry) []session.Entry {
		return append(p[:len(p):len(p)], more...)
	}
	// check: Shared is the stable prefix of before (the path without its
	// latest prune), and the two projections agree up to it.
	check := func(name string, p, before []session.Entry, want int) {
		t.Helper()
		msgs, got := ProjectPrefixes(p)
		if got.Shared != want {
			t.Errorf("%s: shared %d, want %d (%s)", name, got.Shared, want, texts(msgs))
		}
		if _, stable := ProjectStable(p); got.Stable != stable {
			t.Errorf("%s: stable %d, ProjectStable says %d", name, got.Stable, stable)
		}
		if before == nil {
			return
		}
		prev, stable := ProjectStable(before)
		if want != stable {
			t.Errorf("%s: want %d, but the requests before the prune marked %d", name, want, stable)
		}
		for i := range min(want, len(prev), len(msgs)) {
			if fmt.Sprint(prev[i]) != fmt.Sprint(msgs[i]) {
				t.Errorf("%s: message %d differs from the requests before the prune", name, i)
			}
		}
		if want < len(msgs) && fmt.Sprint(prev[want]) == fmt.Sprint(msgs[want]) {
			t.Errorf("%s: message %d, the first past the shared prefix, is as it was", name, want)
		}
	}
	check("no prune", path, nil, 0)
	one := grow(path, prune("0000000b", "00000006"))
	check("a prune", one, path, 5)
	more := grow(one, call("0000000c", "c5"), result("0000000d", "c5", big))
	check("a turn after it", more, nil, 5)
	two := grow(more, prune("0000000e", "0000000a"))
	check("a second prune", two, more, 7)
	comp := grow(two,
		fieldsEntry(session.TypeCompaction, "0000000f", session.Compaction{Summary: "did things", FirstKeptEntryID: "0000000c"}),
		msgEntry("00000010", conv.RoleSystem, conv.TextBlock("sys")),
		session.Entry{Type: session.TypeTurnContext, ID: "00000011", Fields: []byte(`{}`)},
		call("00000012", "c6"), result("00000013", "c6", big),
	)
	check("a compaction after the prunes", comp, nil, 0)
	after := grow(comp, prune("00000014", "0000000d"))
	// sys, summary, kept call c5: its result is the first newly stubbed.
	check("a prune after the compaction", after, comp, 3)
	again := grow(after, prune("00000015", "00000013"))
	check("another", again, after, 5)
}
