package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// sessionBytes returns a small valid session file and its entries' lines.
func sessionBytes(t *testing.T) (file []byte, path string) {
	t.Helper()
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("one")})
	mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("two")}, StopReason: conv.StopEnd}})
	s.Close()
	return readFile(t, s.Path), s.Path
}

func TestRecovery(t *testing.T) {
	good, _ := sessionBytes(t)
	next := `{"type":"message","id":"0badc0de","parentId":null,"timestamp":"2026-04-25T14:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"three"}]}}`
	for _, tc := range []struct {
		name string
		tail string
	}{
		{"cut mid-string", next[:60]},
		{"cut after a value", next[:len(next)-2]},
		{"complete object without newline", next},
		{"garbage with newline", "{\"type\":\"mess\n"},
		{"NUL padding after a crash", "\x00\x00\x00\x00"},
		{"NUL padding with newline", "\x00\x00\n"},
		{"empty last line", "\n"},
		{"array, not an object", "[1,2]\n"},
		{"one byte", "{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			writeFile(t, path, append(bytes.Clone(good), tc.tail...))

			l, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !l.Recovered || len(l.Entries) != 2 {
				t.Errorf("Load: Recovered=%v, %d entries", l.Recovered, len(l.Entries))
			}
			if got := readFile(t, path); !bytes.Equal(got, append(bytes.Clone(good), tc.tail...)) {
				t.Error("Load changed the file")
			}

			s, err := Open(path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !s.Recovered || len(s.Entries) != 2 {
				t.Errorf("Open: Recovered=%v, %d entries", s.Recovered, len(s.Entries))
			}
			if got := readFile(t, path); !bytes.Equal(got, good) {
				t.Errorf("after recovery:\n%q\nwant:\n%q", got, good)
			}
			// Appending afterwards gives a valid file whose new entry
			// continues the chain.
			e := mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("after")})
			if e.ParentID != s.Entries[1].ID {
				t.Errorf("parent %s, want %s", e.ParentID, s.Entries[1].ID)
			}
			s.Close()
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Recovered || len(r.Conversation()) != 3 || r.Conversation()[2].Text() != "after" {
				t.Errorf("reopened: Recovered=%v %+v", r.Recovered, r.Conversation())
			}
		})
	}
}

func TestCorruptLineIsNeverRepaired(t *testing.T) {
	good, _ := sessionBytes(t)
	lines := strings.SplitAfter(string(good), "\n")
	lines = lines[:len(lines)-1] // header, one, two
	for _, tc := range []struct {
		name, file string
		line       int
		reason     string
	}{
		{"torn middle line", lines[0] + lines[1][:40] + "\n" + lines[2], 2, "invalid JSON at column 41: unterminated string"},
		{"empty middle line", lines[0] + "\n" + lines[1] + lines[2], 2, "invalid JSON at column 1: want an object"},
		{"wrong field type", lines[0] + strings.Replace(lines[1], `"text":"one"`, `"text":1`, 1) + lines[2], 2, "message.content[0].text: want a string"},
		{"missing id", lines[0] + strings.Replace(lines[1], `"id":`, `"xid":`, 1) + lines[2], 2, "id: missing"},
		{"bad timestamp", lines[0] + lines[1] + strings.Replace(lines[2], `"timestamp":"2026`, `"timestamp":"x2026`, 1), 3, `timestamp: want an RFC 3339 time, got "x2026-04-25T17:40:15.993Z"`},
		{"second header", lines[0] + lines[1] + lines[0] + lines[2], 3, "a second session header"},
		{"bad last line that is a complete object", lines[0] + lines[1] + lines[2] + `{"type":"message","id":"x"}` + "\n", 4, "message: missing"},
		{"no header", lines[1] + lines[2], 1, "first line is not a session header"},
		{"torn header", lines[0][:30], 1, "incomplete session header (no newline)"},
		{"garbage header", "xx\n" + lines[1], 1, "invalid JSON at column 1: want an object"},
		{"header of the wrong shape", strings.Replace(lines[0], `"cwd":"/w"`, `"cwd":["/w"]`, 1) + lines[1], 1, "cwd: want a string"},
		{"empty file", "", 1, "empty file: no session header"},
		{"header without version", strings.Replace(lines[0], `"version":1,`, "", 1) + lines[1], 1, "version: missing"},
		{"trailing data", lines[0] + strings.TrimSuffix(lines[1], "\n") + " x\n" + lines[2], 2, "invalid JSON at column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			writeFile(t, path, []byte(tc.file))
			for _, open := range []func(string) (*Session, error){Open, Load} {
				_, err := open(path)
				var se *Error
				if !errors.As(err, &se) || se.Kind != KindCorrupt {
					t.Fatalf("want a corrupt error, got %v", err)
				}
				prefix := path + ":" + strconv.Itoa(tc.line) + ": " + tc.reason
				if !strings.HasPrefix(se.Error(), prefix) || se.Line != tc.line || se.Path != path {
					t.Errorf("error %q, want %q", se.Error(), prefix)
				}
				if got := readFile(t, path); string(got) != tc.file {
					t.Errorf("file changed:\n%q", got)
				}
			}
		})
	}
}

func TestNewerVersion(t *testing.T) {
	file := `{"type":"session","version":2,"id":"x","cwd":{"new":"shape"}}` + "\n" + `{"type":"message","id"` // torn, but not ours to trim
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, []byte(file))
	for _, open := range []func(string) (*Session, error){Open, Load} {
		_, err := open(path)
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindNewer || !strings.Contains(err.Error(), "written by a newer awl") {
			t.Errorf("got %v, want a newer-version error", err)
		}
	}
	if string(readFile(t, path)) != file {
		t.Error("file changed")
	}
}

func TestLockedInProcess(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(s.Path)
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindLocked {
		t.Fatalf("second Open: %v", err)
	}
	if !strings.Contains(se.Msg, s.Header.ID) {
		t.Errorf("error %q does not name the session", se.Msg)
	}
	if _, err := os.Stat("/proc/locks"); err == nil && se.Pid != os.Getpid() {
		t.Errorf("pid %d, want %d (%s)", se.Pid, os.Getpid(), se.Msg)
	}
	// Load still works while locked.
	if _, err := Load(s.Path); err != nil {
		t.Errorf("Load while locked: %v", err)
	}
	s.Close()
	s2, err := Open(s.Path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}
