package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestForkCopiesTheActivePath: CreateWith{Fork} writes the header with the
// origin and then the source's active path, each line byte for byte; the
// fork opens like any session, appends after the copied leaf, and its
// listing reports the origin. The source, read under a shared lock with
// a torn last line, is left byte for byte as it was.
func TestForkCopiesTheActivePath(t *testing.T) {
	st := testStore(t)
	src, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, src, Entry{Type: TypeMessage, Provider: "anthropic", Model: "m", Message: userMsg("plan it")})
	leaf := mustAppend(t, src, Entry{Type: "turnContext", Fields: []byte(`{"x":1}`)})
	src.Close()
	// A writer was killed mid-line: the torn line is not the fork's.
	f, err := os.OpenFile(src.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"deadbeef","par`)
	f.Close()
	before := readFile(t, src.Path)

	ref, err := OpenShared(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	// A second reader shares the lock; a writer cannot take it.
	ref2, err := OpenShared(src.Path)
	if err != nil {
		t.Fatalf("second shared open: %v", err)
	}
	if _, err := Open(src.Path); !isKind(err, KindLocked) {
		t.Fatalf("Open while shared: %v, want KindLocked", err)
	}
	if _, err := ref.Append(Entry{Type: TypeMessage, Message: userMsg("x")}); err == nil {
		t.Fatal("append to a shared read succeeded")
	}
	fork, err := st.CreateWith(CreateOptions{Cwd: "/other", Provider: "anthropic", Model: "m", Fork: ref})
	ref.Close()
	ref2.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, src.Path); !bytes.Equal(got, before) {
		t.Fatal("the source changed")
	}
	if fork.Header.ForkedFrom != src.Header.ID || fork.Header.ForkedAt != leaf.ID {
		t.Fatalf("origin %q %q", fork.Header.ForkedFrom, fork.Header.ForkedAt)
	}
	next := mustAppend(t, fork, Entry{Type: TypeMessage, Provider: "anthropic", Model: "m", Message: userMsg("variant")})
	if next.ParentID != leaf.ID {
		t.Fatalf("the fork's first entry's parent is %q, want the copied leaf %q", next.ParentID, leaf.ID)
	}
	fork.Close()
	data := string(readFile(t, fork.Path))
	srcLines := strings.SplitAfter(string(before), "\n")
	forkLines := strings.SplitAfter(data, "\n")
	if !strings.Contains(forkLines[0], `"forkedFrom":"`+src.Header.ID+`","forkedAt":"`+leaf.ID+`"}`) {
		t.Fatalf("header: %s", forkLines[0])
	}
	if forkLines[1] != srcLines[1] || forkLines[2] != srcLines[2] || strings.Contains(data, "deadbeef") {
		t.Fatalf("copied lines differ:\n%s", data)
	}
	if _, err := Open(fork.Path); err != nil {
		t.Fatalf("the fork does not open: %v", err)
	}
	infos, err := st.List("/other")
	if err != nil || len(infos) != 1 || infos[0].ForkedFrom != src.Header.ID || infos[0].ForkedAt != leaf.ID {
		t.Fatalf("listing: %+v, %v", infos, err)
	}
}

// TestCreateWithID: a chosen id names the file and header; a taken one, or
// one not in canonical form, is refused before anything is written.
func TestCreateWithID(t *testing.T) {
	st := testStore(t)
	const id = "3f2c1e0a-9b8d-4c7e-a6f5-0123456789ab"
	s, err := st.CreateWith(CreateOptions{Cwd: "/w", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Header.ID != id || SessionIDFromPath(s.Path) != id {
		t.Fatalf("id %q path %s", s.Header.ID, s.Path)
	}
	if _, err := st.CreateWith(CreateOptions{Cwd: "/elsewhere", ID: id}); !isKind(err, KindExists) {
		t.Fatalf("a taken id: %v, want KindExists", err)
	}
	for _, bad := range []string{"3F2C1E0A-9B8D-4C7E-A6F5-0123456789AB", "nope", "{" + id + "}"} {
		if _, err := st.CreateWith(CreateOptions{Cwd: "/w", ID: bad}); err == nil {
			t.Fatalf("id %q accepted", bad)
		}
	}
	if _, err := os.Stat(st.Dir + "/--elsewhere--"); err == nil {
		t.Fatal("a refused id left a directory")
	}
	infos, _ := st.List("")
	if len(infos) != 1 {
		t.Fatalf("%d sessions, want 1", len(infos))
	}
}

// TestCreateWithIDConcurrently: twenty creations given one id at once,
// each through its own Store as separate processes would: exactly one
// makes the session, every other one is KindExists, and the store holds
// one valid session file.
func TestCreateWithIDConcurrently(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	const id = "3f2c1e0a-9b8d-4c7e-a6f5-0123456789ab"
	const n = 20
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			st := &Store{Dir: dir}
			start.Wait()
			// Each in a directory of its own: the file names differ, only
			// the id is shared.
			s, err := st.CreateWith(CreateOptions{Cwd: fmt.Sprintf("/w%d", i), Provider: "anthropic", Model: "m", ID: id})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	start.Done()
	done.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !isKind(err, KindExists):
			t.Errorf("creation %d: %v, want KindExists", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d creations succeeded, want 1", won)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	if len(paths) != 1 || SessionIDFromPath(paths[0]) != id {
		t.Fatalf("session files %q, want one", paths)
	}
	if _, err := Load(paths[0]); err != nil {
		t.Fatal(err)
	}
}

// TestForkCopiesOnlyTheActivePathFromTheFile: of a source whose last entry
// branches back (its parent is not the entry before it), the fork copies
// the active path's lines, byte for byte, from the source's file, and not
// the abandoned branch; the source's entries and the fork's keep no lines
// in memory.
func TestForkCopiesOnlyTheActivePathFromTheFile(t *testing.T) {
	st := testStore(t)
	src, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	a := mustAppend(t, src, Entry{Type: TypeMessage, Provider: "anthropic", Model: "m", Message: userMsg("first")})
	b := mustAppend(t, src, Entry{Type: TypeMessage, Provider: "anthropic", Model: "m", Message: userMsg("second, abandoned")})
	src.Close()
	lines := strings.SplitAfter(string(readFile(t, src.Path)), "\n")
	// c, a child of a: the line of b with another id and text.
	c := strings.Replace(strings.Replace(lines[2], `"id":"`+b.ID+`"`, `"id":"cccccccc"`, 1), "second, abandoned", "third \\u00e9\\t", 1)
	if c == lines[2] || !strings.Contains(c, `"parentId":"`+a.ID+`"`) {
		t.Fatalf("could not make the branch from %s", lines[2])
	}
	f, err := os.OpenFile(src.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(c)
	f.Close()

	ref, err := OpenShared(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ref.Entries {
		if e.Line != nil {
			t.Errorf("entry %d of the source keeps its line in memory", i)
		}
	}
	fork, err := st.CreateWith(CreateOptions{Cwd: "/other", Provider: "anthropic", Model: "m", Fork: ref})
	ref.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(fork.Entries) != 2 || fork.Entries[1].ID != "cccccccc" || fork.Entries[1].Message.Content[0].Text != "third é\t" || fork.Entries[0].Line != nil {
		t.Fatalf("the fork's entries: %+v", fork.Entries)
	}
	fork.Close()
	got := strings.SplitAfter(string(readFile(t, fork.Path)), "\n")
	if len(got) != 4 || got[1] != lines[1] || got[2] != c || got[3] != "" {
		t.Fatalf("the fork's file:\n%s\nwant the header, then\n%s%s", strings.Join(got, ""), lines[1], c)
	}
	if fork.Header.ForkedAt != "cccccccc" {
		t.Errorf("forkedAt %q", fork.Header.ForkedAt)
	}
	if _, err := Open(fork.Path); err != nil {
		t.Fatalf("the fork does not open: %v", err)
	}
}

// copySpans, in the kernel where it can, and its buffered fallback write
// the same bytes after what dst holds: spans of a source larger than the
// 1 MiB buffer, one crossing a buffer boundary, one empty, appended to a
// file opened for appending (as a session's is), which copy_file_range
// cannot write through.
func TestCopySpansKernelAndBufferAgree(t *testing.T) {
	dir := t.TempDir()
	srcBytes := make([]byte, 3<<20+17)
	for i := range srcBytes {
		srcBytes[i] = byte(i*7 + i>>11)
	}
	srcPath := filepath.Join(dir, "src")
	if err := os.WriteFile(srcPath, srcBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	spans := []span{{5, 9}, {100, 100}, {1<<20 - 3, 2<<20 + 5}, {3 << 20, 3<<20 + 17}}
	want := []byte("header\n")
	for _, sp := range spans {
		want = append(want, srcBytes[sp.off:sp.end]...)
	}
	for name, copyFn := range map[string]func(dst *os.File) (int64, error){
		"copySpans":         func(dst *os.File) (int64, error) { return copySpans(dst, src, spans, 7) },
		"copySpansBuffered": func(dst *os.File) (int64, error) { return copySpansBuffered(dst, src, spans) },
	} {
		p := filepath.Join(dir, name)
		dst, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		dst.WriteString("header\n")
		n, err := copyFn(dst)
		dst.Close()
		if err != nil || n != int64(len(want)-7) {
			t.Fatalf("%s: %d bytes, %v; want %d", name, n, err, len(want)-7)
		}
		if got := readFile(t, p); !bytes.Equal(got, want) {
			t.Errorf("%s wrote %d bytes unlike the source's spans (%d)", name, len(got), len(want))
		}
	}
}
