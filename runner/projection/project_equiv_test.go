package projection

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

// TestProjectMatchesMapVersion: Project looks ids and tool calls up
// lazily and writes stubs without splitting the output into lines, for
// speed. Its output must stay what the first version's (a map of every id
// and every tool call, strings.Split, encoding/json for labels) gave, kept
// below as projectBefore, byte for byte: a resume by a newer awl must send
// what the older one did. (The paths hold no contextMessages member, which
// came later and changes which compactions are in force; the compaction
// tests cover it.) Random paths cover the awkward cases: repeated
// entry and call ids, boundaries naming missing ids, fields that do not
// parse, compactions without a summary, several compactions and prunes,
// empty and newline-only output, long lines cut inside a multi-byte
// character, escapes, duplicate keys and non-objects in call inputs, and
// images.
func TestProjectMatchesMapVersion(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	for n := range 4000 {
		path := randomPath(rng, 5+rng.IntN(60))
		got, want := Project(path), projectBefore(path)
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("path %d: message %d differs:\n got %+v\nwant %+v", n, i, got[i], want[i])
				}
			}
			t.Fatalf("path %d: %d messages, want %d", n, len(got), len(want))
		}
	}
}

// randomPath returns a path of about n entries with the awkward cases of
// TestProjectMatchesMapVersion.
func randomPath(rng *rand.Rand, n int) []session.Entry {
	var path []session.Entry
	id := func() string {
		if len(path) > 0 && rng.IntN(30) == 0 {
			return path[rng.IntN(len(path))].ID // a repeated id
		}
		return fmt.Sprintf("%08x", len(path)+1)
	}
	ref := func() string {
		switch r := rng.IntN(10); {
		case r == 0:
			return ""
		case r == 1 || len(path) == 0:
			return "ffffffff" // names no entry
		default:
			return path[rng.IntN(len(path))].ID
		}
	}
	callID := func() string { return fmt.Sprintf("call_%d", rng.IntN(12)) } // ids repeat
	inputs := []string{
		`{"command":"go test ./..."}`, `{"path":"a.go","command":"make"}`, `{"file_path":"b.go"}`,
		`{"pattern":"func \\w+"}`, `{"command":"a\nb"}`, `{"command":"x","command":"y"}`, `{"command":"x","command":2}`, `{"path":2,"path":"p"}`,
		`{"command":1,"path":"p"}`, `{"command":""}`, `not json`, `[1,2]`, `null`, `"str"`, ``,
		`{"command":"` + strings.Repeat("é", 50) + `"}`, `{"path":"\u00e9\ud800"}`, `{"Command":"c"}`,
		`{"command":"` + strings.Repeat("ab\n", 40) + `"}`, `{"a":{"command":"nested"},"pattern":"p"}`,
	}
	output := func() string {
		switch rng.IntN(8) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("\n", rng.IntN(3000))
		case 2:
			return strings.Repeat("x", 1000+rng.IntN(100))
		case 3:
			return strings.Repeat(strings.Repeat("é", 100)+"\n", 1+rng.IntN(30))
		}
		var sb strings.Builder
		lines := rng.IntN(40)
		for range lines {
			sb.WriteString(strings.Repeat("ab\tc", rng.IntN(80)))
			sb.WriteString("\n")
		}
		if rng.IntN(2) == 0 {
			sb.WriteString("no final newline")
		}
		return sb.String()
	}
	msg := func(role conv.Role, blocks ...conv.Block) {
		path = append(path, session.Entry{Type: session.TypeMessage, ID: id(), Message: &conv.Message{Role: role, Content: blocks}})
	}
	fields := func(typ string, v any) {
		b, _ := json.Marshal(v)
		if rng.IntN(15) == 0 {
			b = []byte(`{"upToId":`) // does not parse
		}
		path = append(path, session.Entry{Type: typ, ID: id(), Fields: b})
	}
	msg(conv.RoleSystem, conv.TextBlock("system"))
	for len(path) < n {
		switch r := rng.IntN(20); {
		case r < 8:
			var blocks []conv.Block
			for range 1 + rng.IntN(3) {
				blocks = append(blocks, conv.Block{Type: conv.BlockToolUse, ID: callID(), Name: []string{"bash", "read", "", "mcp__x__y"}[rng.IntN(4)], Input: inputs[rng.IntN(len(inputs))]})
			}
			msg(conv.RoleAssistant, append([]conv.Block{conv.TextBlock("thinking aloud")}, blocks...)...)
		case r < 15:
			var blocks []conv.Block
			for range 1 + rng.IntN(3) {
				b := conv.Block{Type: conv.BlockToolResult, ToolUseID: callID(), Content: output(), IsError: rng.IntN(5) == 0}
				if rng.IntN(6) == 0 {
					b.Attachments = []conv.Attachment{{Type: "image", MimeType: "image/png", Data: strings.Repeat("A", rng.IntN(9000))}}
				}
				blocks = append(blocks, b)
			}
			msg(conv.RoleUser, blocks...)
		case r < 16:
			path = append(path, session.Entry{Type: session.TypeTurnContext, ID: id(), Fields: []byte(`{}`)})
		case r < 18:
			fields(session.TypePrune, session.Prune{UpToID: ref(), TokensBefore: 10, TokensAfter: 5})
		case r < 19:
			summary := fmt.Sprintf("summary %d", len(path))
			if rng.IntN(8) == 0 {
				summary = []string{"", " \n"}[rng.IntN(2)] // skipped
			}
			fields(session.TypeCompaction, session.Compaction{Summary: summary, FirstKeptEntryID: ref(), Reason: "threshold"})
		default:
			msg(conv.RoleUser, conv.TextBlock("a prompt"))
		}
	}
	return path
}

// The first version of Project (with the later rule that a compaction
// without a summary is skipped) and the stub it wrote, kept to check that
// the faster one gives the same messages.

func projectBefore(path []session.Entry) []conv.Message {
	pos := make(map[string]int, len(path))
	for i, e := range path {
		pos[e.ID] = i
	}
	// The latest prune boundary and compaction.
	pruneUpTo, comp := -1, -1
	var cf session.Compaction
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		switch e.Type {
		case session.TypePrune:
			if pruneUpTo < 0 {
				var pf session.Prune
				if json.Unmarshal(e.Fields, &pf) == nil {
					if p, ok := pos[pf.UpToID]; ok {
						pruneUpTo = p
					}
				}
			}
		case session.TypeCompaction:
			var f session.Compaction
			if comp < 0 && json.Unmarshal(e.Fields, &f) == nil && strings.TrimSpace(f.Summary) != "" {
				comp, cf = i, f
			}
		}
	}
	var uses map[string]conv.Block
	if pruneUpTo >= 0 {
		uses = toolUses(path[:pruneUpTo+1])
	}
	out := make([]conv.Message, 0, len(path))
	add := func(from, to int) {
		for i := from; i < to; i++ {
			e := &path[i]
			if e.Type != session.TypeMessage || e.Message == nil {
				continue
			}
			m := *e.Message
			if i <= pruneUpTo {
				m = pruneMessageBefore(m, uses)
			}
			out = append(out, m)
		}
	}
	if comp < 0 {
		add(0, len(path))
		return out
	}
	// The rebuilt context: from C to its baseline.
	ctxEnd := comp
	for i := comp + 1; i < len(path); i++ {
		if path[i].Type == session.TypeTurnContext {
			ctxEnd = i
			break
		}
	}
	add(comp+1, ctxEnd)
	out = append(out, summaryMessage(cf.Summary))
	if k, ok := pos[cf.FirstKeptEntryID]; ok && k < comp {
		add(k, comp)
	}
	add(ctxEnd+1, len(path))
	return out
}

func pruneMessageBefore(m conv.Message, uses map[string]conv.Block) conv.Message {
	changed := false
	for _, b := range m.Content {
		if b.Type == conv.BlockToolResult && (len(b.Content) > PruneMin || len(b.Attachments) > 0) {
			changed = true
			break
		}
	}
	if !changed {
		return m
	}
	blocks := make([]conv.Block, len(m.Content))
	copy(blocks, m.Content)
	for i, b := range blocks {
		if b.Type != conv.BlockToolResult || (len(b.Content) <= PruneMin && len(b.Attachments) == 0) {
			continue
		}
		nb := b
		nb.Content = pruneStubBefore(uses[b.ToolUseID], b)
		nb.Attachments = nil
		blocks[i] = nb
	}
	m.Content = blocks
	return m
}

func pruneStubBefore(use, res conv.Block) string {
	var sb strings.Builder
	sb.WriteString("[output of ")
	sb.WriteString(callLabelBefore(use))
	fmt.Fprintf(&sb, ", %s", humanBytes(len(res.Content)))
	if res.IsError {
		sb.WriteString(", an error")
	}
	sb.WriteString(", pruned")
	lines := strings.Split(strings.TrimRight(res.Content, "\n"), "\n")
	if res.Content == "" {
		lines = nil
	}
	keep := lines
	if len(lines) > stubHead+stubTail {
		keep = append(append([]string{}, lines[:stubHead]...), "…")
		keep = append(keep, lines[len(lines)-stubTail:]...)
		fmt.Fprintf(&sb, "; %d of %d lines kept", stubHead+stubTail, len(lines))
	}
	for _, a := range res.Attachments {
		fmt.Fprintf(&sb, "; attachment %s, %s", a.MimeType, humanBytes(len(a.Data)*3/4))
	}
	if len(keep) > 0 {
		sb.WriteString(":")
		for _, l := range keep {
			sb.WriteString("\n")
			if len(l) > stubLine {
				l = strings.ToValidUTF8(l[:stubLine], "") + "…"
			}
			sb.WriteString(l)
		}
	}
	sb.WriteString("]")
	return sb.String()
}

func callLabelBefore(use conv.Block) string {
	if use.Name == "" {
		return "a tool call"
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(use.Input), &args)
	for _, k := range []string{"command", "path", "file_path", "pattern"} {
		if s, ok := args[k].(string); ok && s != "" {
			if len(s) > 80 {
				s = strings.ToValidUTF8(s[:80], "") + "…"
			}
			s = strings.ReplaceAll(s, "\n", " ")
			if k == "command" {
				return "`" + s + "`"
			}
			return use.Name + " `" + s + "`"
		}
	}
	return use.Name
}
