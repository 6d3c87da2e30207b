package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
)

func TestDefaultDir(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		env  func(string) string
		want string
	}{
		{env("AWL_SESSION_DIR", "/s", "XDG_DATA_HOME", "/x", "HOME", "/h"), "/s"},
		{env("XDG_DATA_HOME", "/x", "HOME", "/h"), "/x/awl/sessions"},
		{env("XDG_DATA_HOME", "relative", "HOME", "/h"), "/h/.local/share/awl/sessions"},
		{env("HOME", "/h"), "/h/.local/share/awl/sessions"},
	} {
		got, err := DefaultDir(tc.env)
		if err != nil || got != tc.want {
			t.Errorf("DefaultDir = %q, %v; want %q", got, err, tc.want)
		}
	}
	if _, err := DefaultDir(env()); err == nil {
		t.Error("DefaultDir with no HOME: want an error")
	}
}

func TestEncodeCwd(t *testing.T) {
	for in, want := range map[string]string{
		"/Users/travis/Code/awl": "--Users-travis-Code-awl--",
		"/a-b":                   "--a-b--",
		"/a/b":                   "--a-b--",
		"/":                      "----",
		`C:\Users\x`:             "--C--Users-x--",
		"/a/b/":                  "--a-b--",
	} {
		if got := EncodeCwd(in); got != want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCreateHeaderAndLayout(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/Users/travis/Code/awl", "anthropic", "claude-sonnet-4-20250514")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := "2026-04-25T17:40:15.991Z"
	wantDir := filepath.Join(st.Dir, "--Users-travis-Code-awl--")
	if filepath.Dir(s.Path) != wantDir {
		t.Errorf("dir = %s, want %s", filepath.Dir(s.Path), wantDir)
	}
	wantName := "2026-04-25T17-40-15-991Z_" + s.Header.ID + ".jsonl"
	if filepath.Base(s.Path) != wantName {
		t.Errorf("name = %s, want %s", filepath.Base(s.Path), wantName)
	}
	if !strings.HasPrefix(s.Header.ID, "019dc5ba-53f7-7") {
		t.Errorf("id %s: want a UUIDv7 of the creation time", s.Header.ID)
	}
	want := `{"type":"session","version":1,"id":"` + s.Header.ID + `","timestamp":"` + ts +
		`","cwd":"/Users/travis/Code/awl","provider":"anthropic","model":"claude-sonnet-4-20250514"}` + "\n"
	if got := string(readFile(t, s.Path)); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	for path, perm := range map[string]os.FileMode{s.Path: 0o600, wantDir: 0o700, st.Dir: 0o700} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != perm {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), perm)
		}
	}
	des, _ := os.ReadDir(wantDir)
	if len(des) != 1 {
		t.Errorf("dir holds %d files, want only the session", len(des))
	}
}

func TestRoundTrip(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/work", "anthropic", "claude-sonnet-4-20250514")
	if err != nil {
		t.Fatal(err)
	}
	var stored []Entry
	for _, e := range allKinds() {
		stored = append(stored, mustAppend(t, s, e))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Ids, parents, timestamps and lines as Append promised.
	for i, e := range stored {
		if len(e.ID) != 8 || strings.Trim(e.ID, "0123456789abcdef") != "" {
			t.Errorf("entry %d: id %q", i, e.ID)
		}
		wantParent := ""
		if i > 0 {
			wantParent = stored[i-1].ID
		}
		if e.ParentID != wantParent {
			t.Errorf("entry %d: parent %q, want %q", i, e.ParentID, wantParent)
		}
		if e.Timestamp.Location() != time.UTC || e.Timestamp.Nanosecond()%1e6 != 0 {
			t.Errorf("entry %d: timestamp %v", i, e.Timestamp)
		}
		if !json.Valid(e.Line) {
			t.Errorf("entry %d: invalid JSON line %s", i, e.Line)
		}
	}
	if !bytes.Contains(stored[0].Line, []byte(`"parentId":null`)) {
		t.Errorf("first entry: %s", stored[0].Line)
	}
	// Load keeps each entry's exact Line; Open keeps none.
	noLines := make([]Entry, len(stored))
	for i, e := range stored {
		e.Line = nil
		noLines[i] = e
	}
	for _, open := range []func(string) (*Session, error){Load, Open} {
		got, err := open(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		stored := stored
		if got.f != nil {
			stored = noLines
		}
		if got.Recovered {
			t.Error("Recovered on a clean file")
		}
		if got.Header != s.Header {
			t.Errorf("header %+v, want %+v", got.Header, s.Header)
		}
		if !reflect.DeepEqual(got.Entries, stored) {
			for i := range stored {
				if i >= len(got.Entries) || !reflect.DeepEqual(got.Entries[i], stored[i]) {
					t.Errorf("entry %d:\n got %+v\nwant %+v", i, got.Entries[i], stored[i])
				}
			}
		}
		wantConv := []conv.Message{}
		for _, e := range stored {
			if e.Message != nil {
				wantConv = append(wantConv, *e.Message)
			}
		}
		if c := got.Conversation(); !reflect.DeepEqual(c, wantConv) {
			t.Errorf("Conversation:\n got %+v\nwant %+v", c, wantConv)
		}
		if p, m := got.ActiveModel(); p != "openai" || m != "gpt-4o" {
			t.Errorf("ActiveModel = %s %s", p, m)
		}
		got.Close()
	}
}

func TestAppendedLinesExact(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := mustAppend(t, s, Entry{Provider: "anthropic", Model: "claude", Message: userMsg("hi")})
	b := mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{
		{Type: conv.BlockToolResult, ToolUseID: "t", Content: ""},
		{Type: conv.BlockThinking},
	}}})
	c := mustAppend(t, s, Entry{Type: "turnContext", Fields: []byte("{ \"x\" : [ 1 ,\n 2 ] }")})
	want := []string{
		`{"type":"message","id":"` + a.ID + `","parentId":null,"timestamp":"2026-04-25T17:40:15.992Z","provider":"anthropic","model":"claude","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"message","id":"` + b.ID + `","parentId":"` + a.ID + `","timestamp":"2026-04-25T17:40:15.993Z","message":{"role":"assistant","content":[{"type":"toolResult","toolUseId":"t","content":""},{"type":"thinking","thinking":""}],"provider":"","model":"","stopReason":""}}`,
		`{"type":"turnContext","id":"` + c.ID + `","parentId":"` + b.ID + `","timestamp":"2026-04-25T17:40:15.994Z","x":[1,2]}`,
	}
	lines := strings.Split(strings.TrimSuffix(string(readFile(t, s.Path)), "\n"), "\n")[1:]
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if string(c.Fields) != `{"x":[1,2]}` {
		t.Errorf("Fields = %s", c.Fields)
	}
}

func TestAppendRefuses(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{
		{},
		{Type: "message"},
		{Type: "session"},
		{Message: &conv.Message{Role: "tool"}},
		{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: "video"}}}},
		{Type: "turnContext", Fields: []byte(`[1]`)},
		{Type: "turnContext", Fields: []byte(`{"id":"x"}`)},
		{Type: "turnContext", Fields: []byte(`{"a":`)},
		{Type: "turnContext", Provider: "p"},
	} {
		if _, err := s.Append(e); err == nil {
			t.Errorf("Append(%+v): want an error", e)
		}
	}
	s.Close()
	if _, err := s.Append(Entry{Message: userMsg("x")}); err == nil {
		t.Error("Append after Close: want an error")
	}
	if got := readFile(t, s.Path); bytes.Count(got, []byte("\n")) != 1 {
		t.Errorf("refused appends wrote to the file:\n%s", got)
	}
	r, err := Load(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Append(Entry{Message: userMsg("x")}); err == nil {
		t.Error("Append to a loaded session: want an error")
	}
}

func TestIDsUnique(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A random source that repeats itself: every other id collides.
	s.Rand = bytes.NewReader(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1, 0, 0, 0, 2}, 4))
	seen := map[string]bool{}
	for range 3 {
		e := mustAppend(t, s, Entry{Message: userMsg("x")})
		if seen[e.ID] {
			t.Fatalf("duplicate id %s", e.ID)
		}
		seen[e.ID] = true
	}
}

func TestSeedExamples(t *testing.T) {
	read := func(name string) []byte { return readFile(t, filepath.Join("testdata", "seed", name+".json")) }
	var h Header
	d := decoder{data: read("header"), copyStrings: true}
	if kind, err := d.line(&h, nil); err != nil || kind != parsedHeader {
		t.Fatalf("header: %v", err)
	}
	wantH := Header{Version: 1, ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572",
		Timestamp: time.Date(2026, 4, 25, 17, 40, 15, 990e6, time.UTC),
		Cwd:       "/Users/travis/Code/awl", Provider: "anthropic", Model: "claude-sonnet-4-20250514"}
	if h != wantH {
		t.Errorf("header %+v", h)
	}
	var compact bytes.Buffer
	json.Compact(&compact, read("header"))
	if got := appendHeader(nil, &h); string(got) != compact.String() {
		t.Errorf("header written as\n%s\nseed:\n%s", got, compact.String())
	}
	for _, name := range []string{"system", "user-prompt", "assistant-tool-call", "user-tool-results", "user-prompt-stamped", "user-tool-results-stamped"} {
		var e Entry
		d := decoder{data: read(name), copyStrings: true}
		if _, err := d.line(nil, &e); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "user-prompt" || name == "user-tool-results" {
			continue // the seed's unstamped forms; awl stamps every user message
		}
		compact.Reset()
		json.Compact(&compact, read(name))
		got, err := appendEntry(nil, &e, nil)
		if err != nil || string(got) != compact.String() {
			t.Errorf("%s written as\n%s (%v)\nseed:\n%s", name, got, err, compact.String())
		}
	}

	// A session made of the examples, as a file.
	var file bytes.Buffer
	for _, name := range []string{"header", "system", "user-prompt-stamped", "assistant-tool-call", "user-tool-results-stamped"} {
		json.Compact(&file, read(name))
		file.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "seed.jsonl")
	writeFile(t, path, file.Bytes())
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []conv.Message{
		{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("You are a helpful assistant.")}},
		{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("What files are in this directory?")}},
		{Role: conv.RoleAssistant, Content: []conv.Block{
			{Type: conv.BlockThinking, Thinking: "The user wants to list files..."},
			conv.TextBlock("I'll check that for you."),
			{Type: conv.BlockToolUse, ID: "tool_abc123", Name: "bash", Input: `{"command":"ls"}`},
		}, Provider: "anthropic", Model: "claude-sonnet-4-20250514", StopReason: conv.StopToolUse, Usage: &conv.Usage{Input: 1500, Output: 85}},
		{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "tool_abc123", Content: "file1.txt\nfile2.txt"}}},
	}
	if got := s.Conversation(); !reflect.DeepEqual(got, want) {
		t.Errorf("Conversation:\n got %+v\nwant %+v", got, want)
	}
	if p, m := s.ActiveModel(); p != "openai" || m != "gpt-4o" {
		t.Errorf("ActiveModel = %s, %s", p, m)
	}
	path2 := s.ActivePath()
	var ids []string
	for _, e := range path2 {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, " ") != "s1s2s3s4 a1b2c3d4 b2c3d4e5 c3d4e5f6" {
		t.Errorf("ActivePath = %v", ids)
	}
}

func TestActiveModelFallsBackToHeader(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "anthropic", "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p, m := s.ActiveModel(); p != "anthropic" || m != "claude" {
		t.Errorf("ActiveModel = %s %s", p, m)
	}
	mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}})
	if p, m := s.ActiveModel(); p != "anthropic" || m != "claude" {
		t.Errorf("ActiveModel = %s %s", p, m)
	}
	mustAppend(t, s, Entry{Provider: "openai", Model: "gpt-5", Message: userMsg("hi")})
	mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleAssistant, Provider: "anthropic", Model: "other"}})
	if p, m := s.ActiveModel(); p != "openai" || m != "gpt-5" {
		t.Errorf("ActiveModel = %s %s", p, m)
	}
}

// A hand-written file with a branch: the active path follows parentId from
// the last entry, skipping the abandoned branch and unknown entries' data.
func TestActivePathBranch(t *testing.T) {
	file := `{"type":"session","version":1,"id":"x","timestamp":"2026-04-25T14:00:00.000Z","cwd":"/w","provider":"p","model":"m"}
{"type":"message","id":"r","parentId":null,"timestamp":"2026-04-25T14:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"root"}]}}
{"type":"message","id":"a","parentId":"r","timestamp":"2026-04-25T14:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"abandoned"}]}}
{"type":"compaction","id":"c","parentId":"r","timestamp":"2026-04-25T14:00:00.000Z","summary":{"text":"s"},"message":[1,2]}
{"type":"message","id":"b","parentId":"c","timestamp":"2026-04-25T14:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"kept"},{"type":"video","url":{"x":1}}],"future":{"a":1}}}
`
	path := filepath.Join(t.TempDir(), "b.jsonl")
	writeFile(t, path, []byte(file))
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range s.ActivePath() {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, " ") != "r c b" {
		t.Errorf("ActivePath = %v", ids)
	}
	c := s.Conversation()
	if len(c) != 2 || c[0].Text() != "root" || c[1].Text() != "kept" || len(c[1].Content) != 1 {
		t.Errorf("Conversation = %+v", c)
	}
	if got := string(s.Entries[2].Fields); got != `{"summary":{"text":"s"},"message":[1,2]}` {
		t.Errorf("Fields = %s", got)
	}
}

func TestOpenNotFound(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope.jsonl"))
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("Open missing file: %v", err)
	}
}

// A session file awl cannot read or write is a session error naming the
// path (exit 3), not an internal error.
func TestOpenAccess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindAccess || se.Path != dir || !strings.Contains(se.Msg, dir+": is a directory") {
			t.Errorf("%s of a directory = %v, want KindAccess naming it", what, err)
		}
	}
	_, err := Open(dir)
	check("Open", err)
	_, err = Load(dir)
	check("Load", err)
	check("Remove", Remove(dir))

	// Permission denied and a read-only file system, which root's tests
	// cannot make: the classification of what open returns.
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EROFS} {
		path := "/s/x.jsonl"
		err := openError(path, &fs.PathError{Op: "open", Path: path, Err: errno})
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindAccess || se.Path != path || se.Msg != "cannot open session file /s/x.jsonl: "+errno.Error() || !errors.Is(err, errno) {
			t.Errorf("openError(%v) = %#v", errno, err)
		}
	}
	if os.Geteuid() != 0 {
		st := testStore(t)
		s, err := st.Create("/w", "p", "m")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := os.Chmod(s.Path, 0); err != nil {
			t.Fatal(err)
		}
		_, err = Open(s.Path)
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindAccess || se.Path != s.Path {
			t.Errorf("Open of an unreadable file = %v", err)
		}
	}
}
