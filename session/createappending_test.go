package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// CreateAppending writes the header and then the first entries as
// AppendAll does, into a file that only appears with all of them: its
// lines are the header's and the stored entries', each entry the parent of
// the next, and the session goes on from them.
func TestCreateAppendingHeaderThenEntries(t *testing.T) {
	entries := func() []Entry {
		return []Entry{
			{Message: &conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}},
			{Provider: "anthropic", Model: "m", Message: userMsg("hi")},
			{Type: "turnContext", Fields: []byte(`{"cwd":"/w"}`)},
		}
	}
	want := entries()
	want[0].Type, want[1].Type = TypeMessage, TypeMessage
	two := testStore(t)
	b, got, err := two.CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m"}, entries())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(got) != len(want) {
		t.Fatalf("%d entries stored, want %d", len(got), len(want))
	}
	lines := strings.Split(strings.TrimSuffix(string(readFile(t, b.Path)), "\n"), "\n")
	if len(lines) != 1+len(got) {
		t.Fatalf("file has %d lines, want the header and %d entries:\n%s", len(lines), len(got), readFile(t, b.Path))
	}
	if !strings.HasPrefix(lines[0], `{"type":"session"`) {
		t.Errorf("first line %s, want the header", lines[0])
	}
	for i := range got {
		if lines[1+i] != string(got[i].Line) {
			t.Errorf("line %d %s, want the stored entry's %s", 1+i, lines[1+i], got[i].Line)
		}
		if i > 0 && got[i].ParentID != got[i-1].ID || i == 0 && got[i].ParentID != "" {
			t.Errorf("entry %d's parent %q, want the one before it", i, got[i].ParentID)
		}
		if got[i].Type != want[i].Type || !bytes.Equal(got[i].Fields, want[i].Fields) || (got[i].Message == nil) != (want[i].Message == nil) {
			t.Errorf("entry %d stored as %+v, want %+v", i, got[i], want[i])
		}
	}
	next := mustAppend(t, b, Entry{Message: userMsg("more")})
	if next.ParentID != got[len(got)-1].ID {
		t.Errorf("the next entry's parent %q, want the last stored %q", next.ParentID, got[len(got)-1].ID)
	}
	l, err := Load(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != len(got)+1 {
		t.Errorf("reloaded %d entries, want %d", len(l.Entries), len(got)+1)
	}
	if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(b.Path), ".*.tmp")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// When the first entries cannot be stored, no session exists: not one
// with its header alone, nor a temporary file.
func TestCreateAppendingFailureLeavesNothing(t *testing.T) {
	st := testStore(t)
	_, _, err := st.CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m"}, []Entry{{Message: userMsg("ok")}, {}})
	if err == nil {
		t.Fatal("an entry with no type was stored")
	}
	var files []string
	filepath.WalkDir(st.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("files left after a failed creation: %v", files)
	}
}

// A chosen id stays exclusive when the first entries come with the header.
func TestCreateAppendingChosenIDExclusive(t *testing.T) {
	st := testStore(t)
	const id = "01a2334b-7a60-7f3d-be69-e82db7f25669"
	o := CreateOptions{Cwd: "/w", Provider: "p", Model: "m", ID: id}
	s, _, err := st.CreateAppending(o, []Entry{{Message: userMsg("one")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = st.CreateAppending(o, []Entry{{Message: userMsg("two")}})
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindExists {
		t.Fatalf("second creation with the same id: %v, want KindExists", err)
	}
}

// A session that cannot be made durable is a session error (exit 3), as
// one whose directory cannot be written, whichever step failed, and it
// leaves no file behind.
func TestCreateFailureIsASessionError(t *testing.T) {
	for _, es := range [][]Entry{nil, {{Provider: "anthropic", Model: "m", Message: userMsg("hi")}}} {
		st := testStore(t)
		st.Fsync = func(*os.File) error { return errors.New("disk on fire") }
		_, _, err := st.CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m"}, es)
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindAccess || se.ExitCode() != 3 || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("%d entries: err %v (%T), want a KindAccess session error naming the cause", len(es), err, err)
		}
		left, _ := filepath.Glob(filepath.Join(st.Dir, "*", "*"))
		hidden, _ := filepath.Glob(filepath.Join(st.Dir, "*", ".*"))
		if len(left)+len(hidden) != 0 {
			t.Errorf("%d entries: files left: %v %v", len(es), left, hidden)
		}
	}
}
