package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// Open decodes escaped strings in place in its file buffer; Load copies them
// and keeps every Line. These tests hold the two to the same decoding.

// sameAsLoad loads and opens the session file at path and checks that Load
// keeps each line exactly, that Open keeps no Line, and that the two decode
// everything else identically. It returns the opened session.
func sameAsLoad(t *testing.T, path string) *Session {
	t.Helper()
	data := readFile(t, path)
	l, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	o, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { o.Close() })
	if got := readFile(t, path); !bytes.Equal(got, data) {
		t.Fatal("Open changed the file")
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))[1:]
	if len(l.Entries) != len(lines) || len(o.Entries) != len(lines) {
		t.Fatalf("%d lines, Load %d entries, Open %d", len(lines), len(l.Entries), len(o.Entries))
	}
	for i := range lines {
		le, oe := l.Entries[i], o.Entries[i]
		if !bytes.Equal(le.Line, lines[i]) {
			t.Fatalf("entry %d: Load's Line\n%s\nwant\n%s", i, le.Line, lines[i])
		}
		if oe.Line != nil {
			t.Fatalf("entry %d: Open kept Line %s", i, oe.Line)
		}
		le.Line = nil
		if !reflect.DeepEqual(oe, le) {
			t.Fatalf("entry %d (%s): Open and Load differ:\nOpen %+v\nLoad %+v", i, lines[i], oe, le)
		}
		if oe.Message != nil && !reflect.DeepEqual(*oe.Message, *le.Message) {
			t.Fatalf("entry %d: messages differ:\nOpen %+v\nLoad %+v", i, *oe.Message, *le.Message)
		}
	}
	if oc, lc := o.Conversation(), l.Conversation(); !reflect.DeepEqual(oc, lc) {
		t.Fatal("Open and Load rebuild different conversations")
	}
	op, om := o.ActiveModel()
	lp, lm := l.ActiveModel()
	if op != lp || om != lm {
		t.Fatalf("ActiveModel: Open %s %s, Load %s %s", op, om, lp, lm)
	}
	return o
}

// checkAgainstJSON checks every message entry's strings against
// encoding/json's reading of the same line.
func checkAgainstJSON(t *testing.T, s *Session, path string) {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(readFile(t, path), []byte("\n")), []byte("\n"))[1:]
	for i, line := range lines {
		e := s.Entries[i]
		var ref struct {
			ID, ParentID, Provider, Model string
			Message                       struct {
				Role, Provider, Model, StopReason string
				Content                           []conv.Block
			}
		}
		if err := json.Unmarshal(line, &ref); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		if e.ID != ref.ID || e.ParentID != ref.ParentID {
			t.Errorf("line %d: id %q parent %q, encoding/json reads %q %q", i+2, e.ID, e.ParentID, ref.ID, ref.ParentID)
		}
		if e.Message == nil {
			continue
		}
		m := e.Message
		var known []conv.Block
		for _, b := range ref.Message.Content {
			switch b.Type {
			case conv.BlockText, conv.BlockThinking, conv.BlockToolUse, conv.BlockToolResult, conv.BlockImage:
				known = append(known, b)
			}
		}
		if e.Provider != ref.Provider || e.Model != ref.Model || string(m.Role) != ref.Message.Role ||
			m.Provider != ref.Message.Provider || m.Model != ref.Message.Model || string(m.StopReason) != ref.Message.StopReason ||
			!reflect.DeepEqual(m.Content, known) {
			t.Errorf("line %d: %s\ndecoded %+v %q %q\nencoding/json %+v", i+2, line, *m, e.Provider, e.Model, ref)
		}
	}
}

func TestOpenDecodesLikeLoadRealistic(t *testing.T) {
	for _, n := range []int{1, 2_000} {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		writeFile(t, path, realisticSession(n, uint64(n)))
		s := sameAsLoad(t, path)
		if c := s.Conversation(); len(c) != n {
			t.Fatalf("%d messages, want %d", len(c), n)
		}
		if n == 1 {
			checkAgainstJSON(t, s, path)
		}
	}
}

// trickyStrings are texts whose encoding exercises every escape, NUL and
// other control bytes, multi-byte UTF-8 next to escapes, and invalid UTF-8
// (which the writer replaces with U+FFFD).
var trickyStrings = []string{
	"",
	"\"\\/\b\f\n\r\t",
	"\x00",
	"a\x00b\x01\x1f\x7fc",
	"é\né", "🎉\"🎉", "日本\t語\\", "\n🎉", "🎉\n",
	"\u2028\u2029<>&",
	"a\xffb", "\xed\xa0\x80", "\xf0\x9f\x8e", "é\xc3",
	strings.Repeat("line\n", 200) + strings.Repeat("é\"", 50),
	strings.Repeat("\\", 33), strings.Repeat("\x00", 7),
}

func TestOpenDecodesLikeLoadTrickyStrings(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range trickyStrings {
		y := trickyStrings[(i+1)%len(trickyStrings)]
		mustAppend(t, s, Entry{Provider: x, Model: y, Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
			conv.TextBlock(x),
			{Type: conv.BlockToolResult, ToolUseID: y, Content: x + y, IsError: true,
				Attachments: []conv.Attachment{{Type: x, MimeType: y, Data: x}}},
			{Type: conv.BlockImage, MimeType: x, Data: y},
		}}})
		mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleAssistant, Provider: y, Model: x, StopReason: conv.StopReason(x),
			Content: []conv.Block{
				{Type: conv.BlockThinking, Thinking: x, Signature: y, Redacted: x, ItemID: y},
				{Type: conv.BlockToolUse, ID: x, Name: y, Input: x},
			}}})
		fields, _ := json.Marshal(map[string]string{"note": x, y: "k"})
		mustAppend(t, s, Entry{Type: "turnContext", Fields: fields})
	}
	// Escapes the writer never produces: \/, \u for any character, upper
	// case hex, lone and mismatched surrogates, escaped member names and
	// types, escapes in ids, times and unknown members.
	raw := []string{
		`{"type":"message","id":"0000000\u0061","parentId":null,"timestamp":"2026-04-25T14:00:00\u002e000Z","provider":"p\/q","model":"\u006d","message":{"role":"\u0075ser","content":[` +
			`{"type":"text","text":"\u00e9\u00E9\/\uD83C\uDF89|\ud800\u0041|\udc00|\ud800\ud800x|\ud83c\udf89\ud83c|\u0000\u001f\u007f|\u2028"},` +
			`{"t\u0079pe":"t\u0065xt","t\u0065xt":"k\"\\","extra":"\n\n"},` +
			`{"type":"te\u0078t","x":{"a\n":["\ud83c\udf89"]},"text":"after \"unknown\" member"},` +
			`{"type":"futureBlock","text":"\n\u00e9"},` +
			`{"text":"x","type":"fu\"ture\\"},` +
			`{"type":"toolResult","toolUseId":"\u0074","content":"\t\r\n\f\b","isError":true}]},"unknown":"\\\n"}`,
		`{"type":"turnContext","id":"0000000b","parentId":"0000000\u0061","timestamp":"2026-04-25T14:00:01.000Z","n\u006fte":"a\nb","x":["\ud83c\udf89",{"\"":"\\"}]}`,
		`{"type":"futureEntry","id":"0000000c","parentId":"0000000b","timestamp":"2026-04-25T14:00:02.000Z","blob":"\u00e9\n"}`,
		`{"id":"0000000d","type":"mess\u0061ge","parentId":"0000000c","timestamp":"2026-04-25T14:00:03.000Z","message":{"content":[{"text":"\u00e9\n","type":"text"}],"role":"assistant","stopReason":"st\u006fp","usage":{"input":1,"output":2}}}`,
		`{"id":"0000000e","parentId":"0000000d","type":"fu\"ture\\","timestamp":"2026-04-25T14:00:04.000Z","a":"\"\\\n"}`,
	}
	if _, err := s.f.Write([]byte(strings.Join(raw, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	s.Close()

	o := sameAsLoad(t, s.Path)
	checkAgainstJSON(t, o, s.Path)
	n := len(trickyStrings) * 3
	if got := o.Entries[n].Message.Content[0].Text; got != "éé/🎉|\uFFFDA|\uFFFD|\uFFFD\uFFFDx|🎉\uFFFD|\x00\x1f\x7f|\u2028" {
		t.Errorf("hand-written text read as %q", got)
	}
	if got := string(o.Entries[n+1].Fields); got != `{"n\u006fte":"a\nb","x":["\ud83c\udf89",{"\"":"\\"}]}` {
		t.Errorf("Fields %s: not the bytes as written", got)
	}
	if got := string(o.Entries[n+2].Fields); got != `{"blob":"\u00e9\n"}` {
		t.Errorf("Fields %s: not the bytes as written", got)
	}
	if e := o.Entries[n+3]; e.Type != TypeMessage || e.ParentID != "0000000c" || e.Message.StopReason != conv.StopEnd {
		t.Errorf("escaped type: %+v", e)
	}
	// Strings on the tricky entries read back as written, invalid UTF-8
	// as U+FFFD, as encoding/json would replace it.
	for i, x := range trickyStrings {
		want, _ := json.Marshal(x)
		var wantS string
		json.Unmarshal(want, &wantS)
		if got := o.Entries[3*i].Message.Content[0].Text; got != wantS {
			t.Errorf("tricky %d: read %q, want %q", i, got, wantS)
		}
	}

	// The opened session appends, and the file reads back the same.
	mustAppend(t, o, Entry{Message: userMsg(trickyStrings[1])})
	o.Close()
	sameAsLoad(t, s.Path)
}

// Open's in-place decoding changes only its own buffer, never the file,
// even when the open fails on a bad line after escaped strings.
func TestOpenFailureLeavesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	header := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/w","provider":"p","model":"m"}` + "\n"
	good := `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"a\nb\u00e9"}]}}` + "\n"
	bad := `{"type":"message","id":"a1b2c3d5","parentId":"a1b2c3d4","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"user","content":[{"type":"text","text":"x\ny","bad":"\q"}]}}` + "\n"
	data := []byte(header + good + bad + good)
	writeFile(t, path, data)
	_, lerr := Load(path)
	_, err := Open(path)
	if err == nil || lerr == nil || err.Error() != lerr.Error() {
		t.Fatalf("Open: %v; Load: %v", err, lerr)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Fatal("a failed Open changed the file")
	}
}

// TestOpenMemory holds issue 2's target: what a resumed run keeps on the
// heap after Open and Conversation is at most 2× the session file (about
// 1.5× today: the file buffer, which every decoded string shares, and the
// conv structs).
func TestOpenMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and opens a 16 MB session")
	}
	data := realisticSession(10_000, 1)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, data)
	if r := float64(liveAfterOpen(t, path)) / float64(len(data)); r > 2 {
		t.Errorf("live heap after Open is %.2f× the file, want ≤ 2×", r)
	} else {
		t.Logf("live heap after Open: %.2f× the file", r)
	}
}
