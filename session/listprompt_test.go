package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/oneline"
)

// writeSession writes a session of cwd whose messages are msgs, as awl's
// encoder writes them, and returns its path.
func writeSession(t testing.TB, st *Store, cwd string, n int, msgs ...*conv.Message) string {
	t.Helper()
	id := fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", n+1)
	created := time.Date(2026, 4, 25, 14, n%60, 0, 0, time.UTC)
	h := Header{Version: 1, ID: id, Timestamp: created, Cwd: cwd, Provider: "anthropic", Model: "m"}
	buf := append(appendHeader(nil, &h), '\n')
	parent := ""
	for k, m := range msgs {
		e := Entry{Type: TypeMessage, ID: fmt.Sprintf("%08x", k+1), ParentID: parent, Timestamp: created, Message: m}
		if m.Role == conv.RoleUser {
			e.Provider, e.Model = "anthropic", "m"
		}
		var err error
		if buf, err = appendEntry(buf, &e, nil); err != nil {
			t.Fatal(err)
		}
		buf = append(buf, '\n')
		parent = e.ID
	}
	dir := filepath.Join(st.Dir, EncodeCwd(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, FileName(created, id))
	if err := os.WriteFile(p, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A first prompt longer than what the listing reads of its line is shown
// as the whole line shows it, whatever falls at the cut: the text's
// escapes (\n, \", \\, \u escapes of control characters, a surrogate
// pair) and multi-byte runes are cut at every byte offset around the
// 64 KiB mark. A context block that long, told by its end, is passed
// over; a text that only starts like one is a prompt. Listed and
// scanned, the prompt is the one a decoding of the whole line gives.
func TestListLongFirstPrompt(t *testing.T) {
	const cwd = "/w"
	st := testStore(t)
	st.IsContext = func(s string) bool {
		s = strings.TrimSpace(s)
		return strings.HasPrefix(s, "<environment>") && strings.HasSuffix(s, "</environment>")
	}
	unit := "é\"\\\x01😀\n\tx " // escapes, a 2-byte and a 4-byte rune, a control character
	type want struct {
		path, prompt string
	}
	var wants []want
	for pad := range 40 {
		text := strings.Repeat("a", promptHead-pad-200) + strings.Repeat(unit, 20_000)
		text = "Summarise: " + text
		p := writeSession(t, st, cwd, pad, userMsg(text), &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("ok")}})
		wants = append(wants, want{p, oneline.Cut(text, promptCut)})
	}
	// The prompt is past the first 200 characters: they are spaces.
	spaces := strings.Repeat(" ", promptHead) + "late start " + strings.Repeat("b", promptHead)
	wants = append(wants, want{writeSession(t, st, cwd, 50, userMsg(spaces)), "late start " + strings.Repeat("b", promptCut-11) + "…"})
	// A long context block, then the prompt.
	ctx := "<environment>\n" + strings.Repeat("x\\y\n", promptHead) + "</environment>\n"
	wants = append(wants, want{writeSession(t, st, cwd, 51, userMsg(ctx), userMsg("the real prompt")), "the real prompt"})
	// Starts like a context block, does not end like one: a prompt.
	fake := "<environment>\n" + strings.Repeat("z", 2*promptHead)
	wants = append(wants, want{writeSession(t, st, cwd, 52, userMsg(fake), userMsg("not this")), oneline.Cut(fake, promptCut)})
	// A long context block and the prompt in one message.
	both := &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(ctx), conv.TextBlock("after the context")}}
	wants = append(wants, want{writeSession(t, st, cwd, 53, both), "after the context"})

	for _, list := range []func(string) ([]Info, error){st.List, st.Scan} {
		infos, err := list(cwd)
		if err != nil {
			t.Fatal(err)
		}
		byPath := map[string]Info{}
		for _, in := range infos {
			byPath[in.Path] = in
		}
		for _, w := range wants {
			in := byPath[w.path]
			if in.Err != nil || in.FirstPrompt != w.prompt {
				t.Errorf("%s: first prompt %q, %v\nwant %q", filepath.Base(w.path), in.FirstPrompt, in.Err, w.prompt)
			}
		}
	}
}

// A line in another writer's key order (keys sorted: the message's
// content before its role) is decoded whole, as before: the listing still
// finds its prompt.
func TestListLongFirstPromptOtherKeyOrder(t *testing.T) {
	const cwd = "/w"
	st := testStore(t)
	text := "sorted " + strings.Repeat("q", 2*promptHead)
	p := writeSession(t, st, cwd, 0, userMsg("placeholder"))
	b := readFile(t, p)
	lines := strings.SplitAfter(string(b), "\n")
	lines[1] = `{"id":"00000001","message":{"content":[{"text":"` + text + `","type":"text"}],"role":"user"},"model":"m","parentId":null,"provider":"anthropic","timestamp":"2026-04-25T14:00:00.000Z","type":"message"}` + "\n"
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := st.Scan(cwd)
	if err != nil || len(infos) != 1 || infos[0].Err != nil || infos[0].FirstPrompt != oneline.Cut(text, promptCut) {
		t.Fatalf("scan: %+v, %v", infos, err)
	}
}

// closeJSON closes an object cut inside a string, and refuses one cut
// elsewhere.
func TestCloseJSON(t *testing.T) {
	for _, c := range []struct {
		head, want string
		ok         bool
	}{
		{`{"a":{"b":[{"t":"xy`, `{"a":{"b":[{"t":"xy"}]}}`, true},
		{`{"t":"x\`, `{"t":"x"}`, true},
		{`{"t":"x\\`, `{"t":"x\\"}`, true},
		{`{"t":"x\u00`, `{"t":"x"}`, true},
		{`{"t":"x\ud83d\ude`, `{"t":"x"}`, true},
		{`{"t":"x\ud83d\ude00`, `{"t":"x\ud83d\ude00"}`, true},
		{"{\"t\":\"x\xf0\x9f\x98", `{"t":"x"}`, true},
		{`{"t":"a\"b`, `{"t":"a\"b"}`, true},
		{`{"t":[1,2`, ``, false},
		{`{"t":"a","ke`, ``, false},
		{`{"t":`, ``, false},
	} {
		got, _, ok := closeJSON([]byte(c.head))
		if ok != c.ok || ok && string(got) != c.want {
			t.Errorf("closeJSON(%q) = %q, %v; want %q, %v", c.head, got, ok, c.want, c.ok)
		}
	}
}
