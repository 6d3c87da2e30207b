package session

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
)

func TestRemove(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	path := s.Path

	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
		// In use: refused, and the file stays.
		err = Remove(path)
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindLocked || se.Path != path {
			t.Fatalf("Remove of a locked session = %v, want KindLocked", err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("locked session removed: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Remove, Stat = %v", err)
	}
	err = Remove(path)
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Fatalf("Remove of a missing session = %v, want KindNotFound", err)
	}
}

// Remove deletes only files that begin with a session header: anything else
// named by mistake is refused and left byte for byte as it was.
func TestRemoveRefusesNonSessions(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}})
	s.Close()
	session := string(readFile(t, s.Path))
	_, entry, _ := strings.Cut(session, "\n")
	dir := t.TempDir()
	for _, tc := range []struct{ name, data, msg string }{
		{"README.md", "# awl\n\nsome text\n", "not an awl session file"},
		{"data.jsonl", `{"a":1}` + "\n", "not an awl session file"},
		{"entries.jsonl", entry, "not an awl session file"},
		{"empty.jsonl", "", "not an awl session file"},
		{"nonewline.jsonl", "plain text", "not an awl session file"},
		{"badheader.jsonl", `{"type":"session","version":1,"id":5}` + "\n" + entry, "not an awl session file (its header is broken: line 1: id: "},
		{"cut.jsonl", `{"type":"session","version":1,"id":"019d`, "not an awl session file (its header is broken: line 1: incomplete session header)"},
	} {
		path := filepath.Join(dir, tc.name)
		writeFile(t, path, []byte(tc.data))
		err := Remove(path)
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindNotSession || se.Path != path || !strings.HasPrefix(se.Msg, path+": "+tc.msg) {
			t.Errorf("Remove(%s) = %v, want KindNotSession %q", tc.name, err, tc.msg)
		}
		if got := string(readFile(t, path)); got != tc.data {
			t.Errorf("Remove(%s) changed the file: %q", tc.name, got)
		}
	}
	// A header from a newer awl is still a session.
	newer := filepath.Join(dir, "newer.jsonl")
	writeFile(t, newer, []byte(strings.Replace(session, `"version":1`, `"version":2`, 1)))
	if err := Remove(newer); err != nil {
		t.Errorf("Remove(a newer session) = %v", err)
	}
	// A session whose header is fine and a later line broken is a session.
	writeFile(t, s.Path, []byte(session+"garbage\n"+entry))
	if err := Remove(s.Path); err != nil {
		t.Errorf("Remove(a session with a corrupt line) = %v", err)
	}
}

// TestOpenRacingRemove: when `awl sessions rm` unlinks a session between a
// resume's open and its lock, the resume fails (exit 3) instead of writing
// a turn into a file no name reaches; so it does when a new file has taken
// the name meanwhile.
func TestOpenRacingRemove(t *testing.T) {
	st := testStore(t)
	for _, replace := range []bool{false, true} {
		s, err := st.Create("/w", "anthropic", "m")
		if err != nil {
			t.Fatal(err)
		}
		path := s.Path
		s.Close()
		data, _ := os.ReadFile(path)
		testHookOpened = func(p string) {
			if err := Remove(p); err != nil {
				t.Errorf("Remove: %v", err)
			}
			if replace {
				os.WriteFile(p, data, 0o600)
			}
		}
		_, err = Open(path)
		testHookOpened = nil
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindNotFound || !strings.Contains(err.Error(), "was removed") {
			t.Errorf("replace=%v: Open = %v, want a KindNotFound error saying the file was removed", replace, err)
		}
	}
	// Without the race, Open works.
	s, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestRemoveOlderRacingResume: prune chose a session by the age it saw
// when listing; a resume that appended to it before prune took its lock
// (after the listing, or between prune's open and its lock) keeps it:
// RemoveOlder rechecks the modification time under the lock.
func TestRemoveOlderRacingResume(t *testing.T) {
	st := testStore(t)
	old := time.Now().Add(-40 * 24 * time.Hour)
	cutoff := time.Now().Add(-30 * 24 * time.Hour)
	resume := func(path string) {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("resumed")})
		s.Close()
	}
	for _, when := range []string{"after the listing", "between open and lock"} {
		s, err := st.Create("/w", "p", "m")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := os.Chtimes(s.Path, old, old); err != nil {
			t.Fatal(err)
		}
		infos, err := st.List("/w")
		if err != nil || len(infos) == 0 || !infos[len(infos)-1].Modified.Before(cutoff) {
			t.Fatalf("listing: %v %+v", err, infos)
		}
		if when == "after the listing" {
			resume(s.Path)
		} else {
			testHookRemoveOpened = func(p string) {
				testHookRemoveOpened = nil
				resume(p)
			}
		}
		for _, rm := range []func(string, time.Time) error{CheckRemoveOlder, RemoveOlder} {
			err = rm(s.Path, cutoff)
			var se *Error
			if !errors.As(err, &se) || se.Kind != KindModified || !strings.Contains(err.Error(), "after the cut-off") {
				t.Errorf("%s: RemoveOlder = %v, want KindModified", when, err)
			}
		}
		testHookRemoveOpened = nil
		if _, err := os.Stat(s.Path); err != nil {
			t.Fatalf("%s: the resumed session is gone: %v", when, err)
		}
		if c := sameAsLoad(t, s.Path).Conversation(); len(c) != 1 || c[0].Text() != "resumed" {
			t.Errorf("%s: the resumed turn: %+v", when, c)
		}
	}
	// Left alone, an old session goes.
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Chtimes(s.Path, old, old)
	if err := CheckRemoveOlder(s.Path, cutoff); err != nil {
		t.Errorf("CheckRemoveOlder(an old session) = %v", err)
	}
	if err := RemoveOlder(s.Path, cutoff); err != nil {
		t.Errorf("RemoveOlder(an old session) = %v", err)
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an old session was kept: %v", err)
	}
}

// TestRemoveRacingRename: when the name is given to another file between
// rm's open and its lock, rm removes neither: it checked one file and
// would unlink the other.
func TestRemoveRacingRename(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	other := filepath.Join(t.TempDir(), "other.jsonl")
	writeFile(t, other, readFile(t, s.Path))
	testHookRemoveOpened = func(p string) {
		if err := os.Rename(other, p); err != nil {
			t.Fatal(err)
		}
	}
	err = Remove(s.Path)
	testHookRemoveOpened = nil
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("Remove = %v, want a KindNotFound error", err)
	}
	if _, err := os.Stat(s.Path); err != nil {
		t.Errorf("the file that took the name was removed: %v", err)
	}
}
