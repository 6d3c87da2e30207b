package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walkLines returns what a Walk of path hands over: its header, active
// model, whether it recovered, and the stored lines of the active path;
// or the error.
func walkLines(path string) (string, error) {
	w, err := OpenWalk(path)
	if err != nil {
		return "", err
	}
	defer w.Close()
	var b strings.Builder
	b.WriteString(w.Header.ID + " " + w.Provider + "/" + w.Model)
	if w.Recovered {
		b.WriteString(" recovered")
	}
	b.WriteString("\n")
	err = w.Lines(func(line []byte) error {
		b.Write(line)
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		return "", err
	}
	// Entries decodes the same lines, in place: the same ids in turn.
	var ids strings.Builder
	err = w.Entries(func(e *Entry) error {
		ids.WriteString(e.ID + " ")
		return nil
	})
	return b.String() + ids.String(), err
}

// loadLines is walkLines by Load, which reads the whole file at once.
func loadLines(path string) (string, error) {
	s, err := Load(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	p, m := s.ActiveModel()
	b.WriteString(s.Header.ID + " " + p + "/" + m)
	if s.Recovered {
		b.WriteString(" recovered")
	}
	b.WriteString("\n")
	var ids strings.Builder
	for _, e := range s.ActivePath() {
		b.Write(e.Line)
		b.WriteString("\n")
		ids.WriteString(e.ID + " ")
	}
	return b.String() + ids.String(), nil
}

// TestWalkAgreesWithLoad: a Walk, a line at a time, hands over what Load
// reads at once, and fails with Load's error, for sound files (a branch
// back, a model switch, a torn last line, a line longer than the read
// buffer) and broken ones.
func TestWalkAgreesWithLoad(t *testing.T) {
	data := realisticSession(300, 7)
	lines := bytes.SplitAfter(data, []byte("\n"))
	header, body := lines[0], bytes.Join(lines[1:], nil)
	// A long last line, as a 1 MB prompt makes: longer than the reader's
	// buffer. A branch back: its parent is the fourth entry, not the last.
	long := bytes.Replace(lines[41], []byte(`"text":"`), []byte(`"text":"`+strings.Repeat("x", 1<<20)), 1)
	long = bytes.Replace(long, []byte(`"id":"00000029"`), []byte(`"id":"eeeeeeee"`), 1)
	long = bytes.Replace(long, []byte(`"parentId":"00000028"`), []byte(`"parentId":"00000004"`), 1)
	cases := map[string][]byte{
		"realistic":      data,
		"branch back":    append(append([]byte{}, data...), long...),
		"torn last line": append(append([]byte{}, data...), `{"type":"message","id":"ab`...),
		"no newline":     append(append([]byte{}, data...), lines[5][:len(lines[5])-1]...),
		"header only":    header,
		"empty":          nil,
		"torn header":    header[:20],
		"bad utf-8":      append(append(append([]byte{}, header...), lines[1]...), "{\"type\":\"x\",\"id\":\"\xff\"}\n{}\n"...),
		"unknown parent": append(append([]byte{}, header...), bytes.Replace(body, []byte(`"parentId":"00000001"`), []byte(`"parentId":"99999999"`), 1)...),
		"duplicate id":   append(append([]byte{}, data...), lines[3]...),
		"second header":  append(append([]byte{}, data...), append(header, lines[2]...)...),
		"not an entry":   append(append([]byte{}, header...), "[1,2]\n{}\n"...),
	}
	dir := t.TempDir()
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			want, wantErr := loadLines(p)
			got, gotErr := walkLines(p)
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Fatalf("Walk: %v\nLoad: %v", gotErr, wantErr)
			}
			if got != want {
				t.Fatalf("Walk handed over %d bytes, Load %d:\n%.300s\nwant\n%.300s", len(got), len(want), got, want)
			}
		})
	}
	if got, _ := walkLines(filepath.Join(dir, "branch-back.jsonl")); strings.Contains(got, `"id":"00000029"`) || !strings.Contains(got, `"id":"eeeeeeee"`) {
		t.Error("the branch back: the abandoned entries were handed over, or the new leaf was not")
	}
}

// TestWalkReadEntry: while EntriesAt hands over a tool call, ReadEntry
// reads the later entry that holds its result into a buffer of its own:
// the call handed over stays intact, and the same index again is not
// read again.
func TestWalkReadEntry(t *testing.T) {
	data := realisticSession(40, 3)
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWalk(p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	found := 0
	err = w.EntriesAt(func(i int, e *Entry) error {
		if e.Message == nil || len(e.Message.ToolUses()) == 0 || i+1 == len(w.onPath) {
			return nil // the last call has no result
		}
		call := e.Message.ToolUses()[0]
		id, input := strings.Clone(call.ID), strings.Clone(call.Input)
		r, err := w.ReadEntry(i + 1)
		if err != nil {
			return err
		}
		if len(r.Message.Content) == 0 || r.Message.Content[0].ToolUseID != id || len(r.Message.Content[0].Content) < 1000 {
			t.Fatalf("entry %d: %+v is not the result of %s", i+1, r.Message, id)
		}
		if again, _ := w.ReadEntry(i + 1); again != r {
			t.Fatal("the same index read again")
		}
		if call.ID != id || call.Input != input {
			t.Fatalf("the call handed over changed under ReadEntry: %q %q", call.ID, call.Input)
		}
		found++
		return nil
	})
	if err != nil || found < 10 {
		t.Fatalf("%d calls with results, %v", found, err)
	}
	if _, err := w.ReadEntry(len(w.onPath)); err == nil {
		t.Error("an entry past the end was read")
	}
}
