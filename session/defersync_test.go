package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// heldFsync is a Store.Fsync whose first call waits for release (at most
// 5 s, so that a creation which waits for its fsync fails the test rather
// than hanging it), and which reports when that call began.
type heldFsync struct {
	once    sync.Once
	began   chan struct{}
	release chan struct{}
	err     error // the first call's result, after the wait
}

func newHeldFsync() *heldFsync {
	return &heldFsync{began: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldFsync) fsync(f *os.File) error {
	first := false
	h.once.Do(func() { first = true })
	if !first {
		return f.Sync()
	}
	close(h.began)
	select {
	case <-h.release:
	case <-time.After(5 * time.Second): // a creation that waited for it
	}
	if h.err != nil {
		return h.err
	}
	return f.Sync()
}

// tmpFiles is the hidden temporary files in the store.
func tmpFiles(t *testing.T, s *Store) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(s.Dir, "*", ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// With DeferSync, CreateAppending returns with the header and entries
// written but not yet durable: the file has no name at Path until its
// fsync returns, Durable and every later write wait for it, and then the
// file is in place with every line.
func TestCreateDeferSync(t *testing.T) {
	s := testStore(t)
	h := newHeldFsync()
	s.Fsync = h.fsync
	sess, stored, err := s.CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m", DeferSync: true},
		[]Entry{{Message: userMsg("one")}, {Message: userMsg("two")}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.began:
	case <-time.After(10 * time.Second):
		t.Fatal("the background fsync never began")
	}
	if len(stored) != 2 || stored[1].ParentID != stored[0].ID || len(stored[0].Line) == 0 {
		t.Fatalf("stored %+v, want two entries with their lines, the second the child of the first", stored)
	}
	if _, err := os.Stat(sess.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the session is at %s before its fsync returned (%v)", sess.Path, err)
	}
	if n := len(tmpFiles(t, s)); n != 1 {
		t.Errorf("%d temporary files while the fsync waits, want the one being made", n)
	}
	durable := make(chan error, 1)
	go func() { durable <- sess.Durable() }()
	appended := make(chan error, 1)
	go func() {
		_, err := sess.Append(Entry{Message: userMsg("three")})
		appended <- err
	}()
	select {
	case err := <-durable:
		t.Fatalf("Durable returned %v before the fsync did", err)
	case err := <-appended:
		t.Fatalf("Append returned %v before the creation's fsync did", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(h.release)
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(readFile(t, sess.Path)), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `{"type":"session"`) ||
		lines[1] != string(stored[0].Line) || lines[2] != string(stored[1].Line) || !strings.Contains(lines[3], "three") {
		t.Errorf("file holds\n%s\nwant the header, the two stored entries and the one appended after", strings.Join(lines, "\n"))
	}
	if m := tmpFiles(t, s); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
}

// A deferred creation whose fsync fails leaves nothing behind: Durable
// says why, naming the session, no file is at Path and no temporary file
// is left, and the session takes no more entries.
func TestCreateDeferSyncFails(t *testing.T) {
	s := testStore(t)
	h := newHeldFsync()
	h.err = errors.New("disk on fire")
	s.Fsync = h.fsync
	close(h.release)
	sess, _, err := s.CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m", DeferSync: true},
		[]Entry{{Message: userMsg("one")}})
	if err != nil {
		t.Fatal(err)
	}
	err = sess.Durable()
	if err == nil || !strings.Contains(err.Error(), "create session "+sess.Header.ID) || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("Durable: %v, want the creation's failure naming the session", err)
	}
	if _, err := sess.Append(Entry{Message: userMsg("two")}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Append after the failed creation: %v, want its failure", err)
	}
	if _, err := os.Stat(sess.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a session that was never durable is at %s (%v)", sess.Path, err)
	}
	if m := tmpFiles(t, s); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	if err := sess.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A chosen id stays taken while its deferred creation is being made
// durable: another creation with that id waits for it, then fails with
// KindExists, rather than making a second session of the same id.
func TestCreateDeferSyncHoldsChosenID(t *testing.T) {
	s := testStore(t)
	h := newHeldFsync()
	s.Fsync = h.fsync
	const id = "01234567-89ab-7def-8123-456789abcdef"
	sess, _, err := s.CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m", ID: id, DeferSync: true},
		[]Entry{{Message: userMsg("one")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	<-h.began
	second := make(chan error, 1)
	go func() {
		other, err := s.CreateWith(CreateOptions{Cwd: "/elsewhere", Provider: "p", Model: "m", ID: id})
		if other != nil {
			other.Close()
		}
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("the second creation returned %v while the first was being made durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(h.release)
	err = <-second
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindExists {
		t.Fatalf("second creation: %v, want KindExists", err)
	}
	if err := sess.Durable(); err != nil {
		t.Fatal(err)
	}
}

// A session's file name is its header's timestamp with ':' and '.' made
// '-', then its id: the form docs/session-format.md gives.
func TestFileName(t *testing.T) {
	got := FileName(time.Date(2026, 4, 25, 14, 3, 7, 123e6, time.UTC), "019dc5ba-53f6-71a5-ab8f-b1f8709c2572")
	if want := "2026-04-25T14-03-07-123Z_019dc5ba-53f6-71a5-ab8f-b1f8709c2572.jsonl"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
}
