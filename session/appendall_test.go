package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// AppendAll writes the same lines as Append one by one: each entry the
// parent of the next, the first the child of the leaf.
func TestAppendAllSameAsAppend(t *testing.T) {
	entries := func() []Entry {
		return []Entry{
			{Message: &conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}},
			{Provider: "anthropic", Model: "m", Message: userMsg("hi")},
			{Type: "turnContext", Fields: []byte(`{"cwd":"/w"}`)},
		}
	}
	one, all := testStore(t), testStore(t)
	a, err := one.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := all.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// The same random source and clock for both: the same ids and times.
	a.Rand = bytes.NewReader(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 2))
	b.Rand = bytes.NewReader(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 2))
	mustAppend(t, a, Entry{Message: userMsg("first")})
	mustAppend(t, b, Entry{Message: userMsg("first")})
	var want []Entry
	for _, e := range entries() {
		want = append(want, mustAppend(t, a, e))
	}
	got, err := b.AppendAll(entries())
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if string(got[i].Line) != string(want[i].Line) {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got[i].Line, want[i].Line)
		}
	}
	fa := strings.SplitN(string(readFile(t, a.Path)), "\n", 2)[1]
	fb := strings.SplitN(string(readFile(t, b.Path)), "\n", 2)[1]
	if fa != fb {
		t.Errorf("files differ:\n%s\n---\n%s", fa, fb)
	}
	if len(b.Entries) != 4 || b.ActivePath()[3].ID != got[2].ID {
		t.Errorf("entries in memory: %d, leaf %v", len(b.Entries), b.ActivePath())
	}
	if _, err := Load(b.Path); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// A batch with one bad entry writes nothing and leaves no id reserved.
func TestAppendAllRefusesWhole(t *testing.T) {
	s, err := testStore(t).Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := readFile(t, s.Path)
	if _, err := s.AppendAll([]Entry{{Message: userMsg("ok")}, {Type: "turnContext", Fields: []byte(`[1]`)}}); err == nil {
		t.Fatal("want an error")
	}
	if got := readFile(t, s.Path); !bytes.Equal(got, before) {
		t.Errorf("a refused batch wrote:\n%s", got)
	}
	if len(s.Entries) != 0 || len(s.ids) != 0 {
		t.Errorf("a refused batch left %d entries, %d ids", len(s.Entries), len(s.ids))
	}
	e := mustAppend(t, s, Entry{Message: userMsg("after")})
	if e.ParentID != "" {
		t.Errorf("the next entry's parent is %q, want none", e.ParentID)
	}
}

// A large entry is encoded into one buffer sized up front, exactly but for
// the few hundred bytes of its fixed fields: the line is written without
// the buffer growing (its capacity is the hint's).
func TestAppendSizedOnce(t *testing.T) {
	s, err := testStore(t).Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text := strings.Repeat("fn main() {\n\tprintln(\"h\\\\éllo\x01\")\n}\n", 1<<15) // ~1 MB, code-like escapes and a control byte
	e := Entry{Provider: "p", Model: "m", Message: userMsg(text)}
	hint := sizeHint(&e)
	got := mustAppend(t, s, e)
	if len(got.Line) > hint {
		t.Fatalf("line %d bytes, over the hint %d: the buffer grew", len(got.Line), hint)
	}
	if slack := hint - len(got.Line); slack > 512 {
		t.Errorf("hint %d for a %d-byte line: %d bytes wasted", hint, len(got.Line), slack)
	}
}
