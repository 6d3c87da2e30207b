package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
)

func TestList(t *testing.T) {
	st := testStore(t)
	st.IsContext = func(s string) bool { return strings.HasPrefix(s, "<environment>") }

	a, err := st.Create("/a/b", "anthropic", "claude")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, Entry{Message: &conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}})
	mustAppend(t, a, Entry{Provider: "anthropic", Model: "claude", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
		conv.TextBlock("<environment>cwd</environment>"),
		conv.TextBlock("  fix   the\n\tbug " + strings.Repeat("x", 300)),
	}}})
	mustAppend(t, a, Entry{Type: "turnContext", Fields: []byte(`{"k":1}`)})
	mustAppend(t, a, Entry{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopToolUse, Content: []conv.Block{{Type: conv.BlockToolUse, ID: "t", Name: "bash", Input: "{}"}}}})
	mustAppend(t, a, Entry{Provider: "openai", Model: "gpt-5", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "t", Content: "ok"}}}})
	mustAppend(t, a, Entry{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopLength}})
	a.Close()
	// A torn line in flight is not counted.
	f, _ := os.OpenFile(a.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"message","id":"12`)
	f.Close()

	// Same encoded directory, another cwd.
	b, err := st.Create("/a-b", "openai", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	// It stays /a-b's when a line of it is corrupt.
	f, _ = os.OpenFile(b.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"type\":\"message\",\"message\":{\"role\":7}}\n{}\n")
	f.Close()
	c, err := st.Create("/other", "openai", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, c, Entry{Provider: "openai", Model: "gpt-4o", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, Content: "x"}}}})
	c.Close()
	// A broken file in a's directory names no directory: it is listed with
	// Err for every directory of that encoding (/a/b and /a-b), as for all.
	bad := filepath.Join(filepath.Dir(a.Path), "2026-04-25T17-40-15-000Z_00000000-0000-7000-8000-000000000000.jsonl")
	writeFile(t, bad, []byte("not json\n"))
	// Junk that is not a session is ignored.
	writeFile(t, filepath.Join(filepath.Dir(a.Path), ".x.jsonl.tmp"), []byte("junk"))
	writeFile(t, filepath.Join(filepath.Dir(a.Path), "notes.txt"), []byte("junk"))

	infos, err := st.List("/a/b")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Path != bad || infos[0].Err == nil || infos[0].IsSession || infos[0].Cwd != "" {
		t.Fatalf("List(/a/b) = %d infos, want the broken file with its error, then a: %+v", len(infos), infos)
	}
	if ab, err := st.List("/a-b"); err != nil || len(ab) != 2 || ab[0].Path != bad || ab[1].Path != b.Path {
		t.Fatalf("List(/a-b) = %+v, %v; want the broken file, then b", ab, err)
	}
	got := infos[1]
	fi, _ := os.Stat(a.Path)
	want := Info{ID: a.Header.ID, Path: a.Path, Cwd: "/a/b", Created: a.Header.Timestamp, Modified: fi.ModTime(),
		Messages: 5, Provider: "openai", Model: "gpt-5",
		FirstPrompt:    "fix the bug " + strings.Repeat("x", 188) + "…",
		LastStopReason: "length", Status: "killed", IsSession: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List:\n got %+v\nwant %+v", got, want)
	}

	all, err := st.List("")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range all {
		ids = append(ids, in.ID)
	}
	wantIDs := []string{"00000000-0000-7000-8000-000000000000", a.Header.ID, b.Header.ID, c.Header.ID}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("List(\"\") ids = %v, want %v", ids, wantIDs)
	}
	if all[0].Path != bad || all[0].Err == nil {
		t.Errorf("first should be the broken file (oldest by name): %+v", all[0])
	}
	var se *Error
	if !errors.As(all[0].Err, &se) || se.Kind != KindCorrupt || all[0].IsSession {
		t.Errorf("broken file error: %v", all[0].Err)
	}
	if all[2].Cwd != "/a-b" || all[2].Err == nil {
		t.Errorf("corrupt /a-b session: %+v", all[2])
	}
	if all[3].FirstPrompt != "" || all[3].Messages != 1 || all[2].Provider != "openai" || all[2].Model != "gpt-4o" {
		t.Errorf("List(\"\"): %+v", all[2:])
	}

	if infos, err := (&Store{Dir: filepath.Join(t.TempDir(), "none")}).List(""); err != nil || len(infos) != 0 {
		t.Errorf("List of a missing dir = %v, %v", infos, err)
	}
}

func TestResolveAndLatest(t *testing.T) {
	st := testStore(t)
	mk := func(cwd string) *Session {
		s, err := st.Create(cwd, "p", "m")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		return s
	}
	a1, a2, b := mk("/a/b"), mk("/a-b"), mk("/c")
	// All three share the clock's prefix; make a prefix unique to each.
	for _, s := range []*Session{a1, a2, b} {
		got, err := st.Resolve(s.Header.ID, "/")
		if err != nil || got != s.Path {
			t.Errorf("Resolve(full id) = %s, %v", got, err)
		}
		got, err = st.Resolve(strings.ToUpper(s.Header.ID[:len(s.Header.ID)-4]), "/")
		if err != nil || got != s.Path {
			t.Errorf("Resolve(unique prefix) = %s, %v", got, err)
		}
	}
	prefix := a1.Header.ID[:8]
	_, err := st.Resolve(prefix, "/elsewhere")
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindAmbiguous || len(se.Candidates) != 3 || !strings.Contains(se.Msg, a1.Header.ID+" (/a/b)") {
		t.Errorf("ambiguous prefix: %v (%+v)", err, se)
	}
	// Many candidates: the message names the first ten, Candidates all.
	many := testStore(t)
	for range 13 {
		s, err := many.Create("/m", "p", "m")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	_, err = many.Resolve(a1.Header.ID[:8], "/elsewhere")
	if !errors.As(err, &se) || se.Kind != KindAmbiguous || len(se.Candidates) != 13 ||
		strings.Count(se.Msg, " (/m)") != 10 || !strings.HasSuffix(se.Msg, " (/m) … and 3 more") || !strings.Contains(se.Msg, se.Candidates[9]) || strings.Contains(se.Msg, se.Candidates[10]) {
		t.Errorf("ambiguous prefix of 13 sessions: %v (%d candidates)", err, len(se.Candidates))
	}
	// Ambiguous across directories but one of cwd's: that one, even with
	// the encoding collision between /a/b and /a-b.
	if got, err := st.Resolve(prefix, "/a-b"); err != nil || got != a2.Path {
		t.Errorf("Resolve in cwd = %s, %v", got, err)
	}
	if _, err := st.Resolve("ffff", "/a/b"); !errors.As(err, &se) || se.Kind != KindNotFound || se.Msg != "no session matches ffff" {
		t.Errorf("no match: %v", err)
	}
	// A path works from anywhere, even outside the store.
	elsewhere := filepath.Join(t.TempDir(), "artifact.jsonl")
	writeFile(t, elsewhere, readFile(t, b.Path))
	if got, err := st.Resolve(elsewhere, "/x"); err != nil || got != elsewhere {
		t.Errorf("Resolve(path) = %s, %v", got, err)
	}
	if _, err := st.Resolve(filepath.Join(t.TempDir(), "gone.jsonl"), "/x"); !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("Resolve(missing path): %v", err)
	}
	// A path to a file that is not a session is refused, so that nothing
	// takes it for one; a session with a broken line still resolves (Open
	// says where it is broken).
	readme := filepath.Join(t.TempDir(), "README.md")
	writeFile(t, readme, []byte("# awl\n"))
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	writeFile(t, notes, []byte(`{"note":"x"}`+"\n"))
	for _, p := range []string{readme, notes} {
		if _, err := st.Resolve(p, "/x"); !errors.As(err, &se) || se.Kind != KindNotSession || se.Msg != p+": not an awl session file" {
			t.Errorf("Resolve(%s) = %v, want KindNotSession", p, err)
		}
	}
	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	writeFile(t, broken, append(readFile(t, b.Path), "garbage\n{}\n"...))
	if got, err := st.Resolve(broken, "/x"); err != nil || got != broken {
		t.Errorf("Resolve(a session with a corrupt line) = %s, %v", got, err)
	}
	if _, err := Open(broken); !errors.As(err, &se) || se.Kind != KindCorrupt || se.Msg != broken+":2: invalid JSON at column 1: want an object" {
		t.Errorf("Open(a session with a corrupt line) = %v", err)
	}

	a3 := mk("/a/b")
	// Latest is the session used last (modified last), not the one created
	// last; equal times fall back to creation, then id.
	base := time.Now().Add(-time.Hour)
	touch := func(s *Session, d time.Duration) {
		t.Helper()
		if err := os.Chtimes(s.Path, base.Add(d), base.Add(d)); err != nil {
			t.Fatal(err)
		}
	}
	touch(a1, 0)
	touch(a3, 0)
	if got, err := st.Latest("/a/b"); err != nil || got != a3.Path {
		t.Errorf("Latest(/a/b), same mtimes = %s, %v; want the newer %s", got, err, a3.Path)
	}
	touch(a1, time.Minute)
	if got, err := st.Latest("/a/b"); err != nil || got != a1.Path {
		t.Errorf("Latest(/a/b) after a1 was written = %s, %v; want %s", got, err, a1.Path)
	}
	// Same mtime and same creation time: the greater id.
	twin := filepath.Join(filepath.Dir(a1.Path), FileName(a1.Header.Timestamp, "ffffffff"+a1.Header.ID[8:]))
	writeFile(t, twin, []byte(strings.Replace(string(readFile(t, a1.Path)), a1.Header.ID, "ffffffff"+a1.Header.ID[8:], 1)))
	if err := os.Chtimes(twin, base.Add(time.Minute), base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Latest("/a/b"); err != nil || got != twin {
		t.Errorf("Latest(/a/b), same mtime and creation = %s, %v; want %s", got, err, twin)
	}
	if got, err := st.Latest("/a-b"); err != nil || got != a2.Path {
		t.Errorf("Latest(/a-b) = %s, %v", got, err)
	}
	if _, err := st.Latest("/nothing"); !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("Latest(/nothing): %v", err)
	}
}

// A session with a broken line is listed with the error Open would give,
// not as a healthy session with fewer messages; a torn last line, which
// Open trims, is no error.
func TestListCorruptLine(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(strings.Repeat("x", i*200_000))}}})
	}
	s.Close()
	good := string(readFile(t, s.Path))
	lines := strings.SplitAfter(good, "\n")
	lines = lines[:len(lines)-1] // header and three entries
	join := func(ls ...string) string { return strings.Join(ls, "") }
	for _, tc := range []struct {
		name, data string
		line       int
		reason     string // "" for no error
		messages   int
	}{
		{"healthy", good, 0, "", 3},
		{"torn last line", good + `{"type":"message","id":"1`, 0, "", 3},
		{"torn last line with a newline", good + `{"type":"message","id":"1` + "\n", 0, "", 3},
		{"cut middle line", join(lines[0], lines[1][:40]+"\n", lines[2], lines[3]), 2, "", 0},
		{"cut middle line across chunks", join(lines[0], lines[1], lines[3][:300_000]+"\n", lines[2]), 3, "", 0},
		{"garbage middle line", join(lines[0], lines[1], "garbage\n", lines[2]), 3, "invalid JSON at column 1: want an object", 0},
		{"empty middle line", join(lines[0], "\n", lines[1]), 2, "invalid JSON at column 1: want an object", 0},
		{"object that is no entry", join(lines[0], `{"id":"x"}`+"\n", lines[1]), 2, "type: missing", 0},
		{"second header", join(lines[0], lines[1], lines[0], lines[2]), 3, "a second session header", 0},
		{"bad line before a torn one", join(lines[0], lines[1], "garbage\n", `{"type":"mess`), 3, "invalid JSON at column 1: want an object", 0},
		{"last line an object but no entry", join(lines[0], lines[1], `{"x":1}`+"\n"), 3, "type: missing", 0},
		{"hand-written entry", join(lines[0], ` {"id":"abcdef01","type":"message","parentId":null,"timestamp":"2026-04-25T17:40:16.000Z","message":{"role":"user","content":[]}} `+"\n"), 0, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, s.Path, []byte(tc.data))
			infos, err := st.List("/w")
			if err != nil || len(infos) != 1 {
				t.Fatalf("List = %v, %v", infos, err)
			}
			in := infos[0]
			_, openErr := Load(s.Path)
			if tc.line == 0 {
				if in.Err != nil || in.Messages != tc.messages || openErr != nil {
					t.Errorf("Err = %v, Messages = %d, want none and %d (Load: %v)", in.Err, in.Messages, tc.messages, openErr)
				}
				return
			}
			var se *Error
			if !errors.As(in.Err, &se) || se.Kind != KindCorrupt || se.Line != tc.line || !strings.HasPrefix(se.Msg, fmt.Sprintf("%s:%d: %s", s.Path, tc.line, tc.reason)) {
				t.Errorf("Err = %v, want %s:%d: %s…", in.Err, s.Path, tc.line, tc.reason)
			}
			// The same words as Open.
			if fmt.Sprint(openErr) != fmt.Sprint(in.Err) {
				t.Errorf("listing says %v, Load says %v", in.Err, openErr)
			}
			if !in.IsSession || in.ID != s.Header.ID || in.Cwd != "/w" || in.Messages != 0 {
				t.Errorf("info of a broken session: %+v", in)
			}
		})
	}
}

// A prompt or tool results after the last assistant message were never
// answered: the session has no last stop reason.
func TestListLastStopReasonUnanswered(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	user := func(b conv.Block) Entry {
		return Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{b}}}
	}
	assistant := func(r conv.StopReason) Entry {
		return Entry{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: r}}
	}
	stop := func(want string) {
		t.Helper()
		infos, err := st.List("/w")
		if err != nil || len(infos) != 1 || infos[0].Err != nil {
			t.Fatalf("List = %+v, %v", infos, err)
		}
		if got := infos[0].LastStopReason; got != want {
			t.Errorf("LastStopReason = %q, want %q", got, want)
		}
	}
	stop("")
	mustAppend(t, s, user(conv.TextBlock("first")))
	stop("")
	mustAppend(t, s, assistant(conv.StopToolUse))
	stop("toolUse")
	mustAppend(t, s, user(conv.Block{Type: conv.BlockToolResult, ToolUseID: "t", Content: "ok"}))
	stop("")
	mustAppend(t, s, assistant(conv.StopEnd))
	mustAppend(t, s, Entry{Type: "turnContext", Fields: []byte(`{"k":1}`)})
	stop("stop")
	mustAppend(t, s, user(conv.TextBlock("a resumed prompt whose request failed")))
	stop("")
	s.Close()
}

// TestFirstPromptIsOneSafeLine: the listing's first prompt has no control
// character (an escape sequence in a prompt would reach the terminal of
// `awl sessions --json | jq -r`) and no invalid UTF-8, and is cut between
// characters.
func TestFirstPromptIsOneSafeLine(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Message: userMsg("\x1b]0;title\x07 \x1b[2Jclear\xff " + strings.Repeat("🙂", 300))})
	s.Close()
	infos, err := st.List("/w")
	if err != nil || len(infos) != 1 {
		t.Fatalf("List = %+v, %v", infos, err)
	}
	want := "]0;title [2Jclear " + strings.Repeat("🙂", promptCut-len("]0;title [2Jclear ")) + "…"
	if got := infos[0].FirstPrompt; got != want {
		t.Errorf("FirstPrompt = %q, want %q", got, want)
	}
}

// TestListSameCreatedByPath: sessions created at the same instant are
// listed by path, not in the order their directories were read: the
// directory of /a ("--a--") is read before that of /a-- ("--a----"), whose
// paths sort first ('-' before '/').
func TestListSameCreatedByPath(t *testing.T) {
	st := testStore(t)
	at := time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return at }
	for _, cwd := range []string{"/a", "/a--"} {
		s, err := st.Create(cwd, "anthropic", "claude")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	infos, err := st.List("")
	if err != nil || len(infos) != 2 {
		t.Fatalf("List = %+v, %v", infos, err)
	}
	if !infos[0].Created.Equal(infos[1].Created) || infos[0].Cwd != "/a--" || infos[1].Cwd != "/a" || infos[0].Path >= infos[1].Path {
		t.Errorf("List = %s (%s), %s (%s); want /a-- first, by path", infos[0].Path, infos[0].Created, infos[1].Path, infos[1].Created)
	}
}
