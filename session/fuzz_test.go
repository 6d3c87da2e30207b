package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
)

// Seed corpora live in testdata/fuzz/<target>/ (plain go test replays them);
// these f.Add calls cover the basic shapes besides.

func FuzzParseLine(f *testing.F) {
	for _, name := range []string{"header", "system", "user-prompt-stamped", "assistant-tool-call", "user-tool-results-stamped"} {
		b, err := os.ReadFile(filepath.Join("testdata", "seed", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"turnContext","id":"00000001","parentId":null,"timestamp":"2026-04-25T14:00:00.000Z","x":{"y":[1,-2.5e3,"\ud83c\udf89"]}}`))
	f.Add([]byte(`{"id":"a","type":"message","message":{"content":[{"text":"x","type":"text"},{"type":"toolResult","isError":true,"attachments":[{"type":"image","mimeType":"image/png","data":"AA=="}]}],"role":"user","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var h Header
		var e Entry
		d := decoder{data: line, copyStrings: true}
		kind, err := d.line(&h, &e)
		// Decoding in place (as Open does) reads the same, or fails alike.
		var hp Header
		var ep Entry
		dp := decoder{data: bytes.Clone(line), inPlace: true}
		kindP, errP := dp.line(&hp, &ep)
		if (err == nil) != (errP == nil) || err != nil && err.Error() != errP.Error() {
			t.Fatalf("in place: %v, copying: %v", errP, err)
		}
		if err != nil {
			return
		}
		if kindP != kind || hp != h || !reflect.DeepEqual(ep, e) {
			t.Fatalf("in place read %q as\n%+v %+v\ncopying as\n%+v %+v", line, hp, ep, h, e)
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		if !utf8.Valid(line) {
			return // the writer replaces invalid UTF-8, so no exact round trip
		}
		// What was read is written back and read again unchanged.
		if kind == parsedHeader {
			h.Timestamp = h.Timestamp.Truncate(time.Millisecond)
			var h2 Header
			d := decoder{data: appendHeader(nil, &h), copyStrings: true}
			if _, err := d.line(&h2, nil); err != nil || h2 != h {
				t.Fatalf("header round trip: %v\n%+v\n%+v", err, h, h2)
			}
			return
		}
		e.Timestamp = e.Timestamp.Truncate(time.Millisecond)
		out, err := appendEntry(nil, &e, nil)
		if err != nil {
			return // e.g. a role the writer refuses
		}
		var e2 Entry
		d = decoder{data: out, copyStrings: true}
		if _, err := d.line(nil, &e2); err != nil {
			t.Fatalf("rereading %s: %v", out, err)
		}
		if e.Fields != nil {
			var c bytes.Buffer
			json.Compact(&c, e.Fields)
			e.Fields = c.Bytes()
		}
		e.Line, e2.Line = nil, nil
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("round trip of %q:\n%+v\n%+v", line, e, e2)
		}
	})
}

// FuzzOpen opens arbitrary files: never a panic; Load never changes a byte;
// Open changes nothing or removes exactly the last line; Open (which
// unescapes in place) and Load (which copies) fail alike or decode the same
// entries, Load keeping each line's exact bytes; and after a successful Open
// an append yields a file that reads back cleanly.
func FuzzOpen(f *testing.F) {
	header := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/w","provider":"p","model":"m"}` + "\n"
	entry := `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n"
	f.Add([]byte(header))
	f.Add([]byte(header + entry))
	f.Add([]byte(header + entry[:50]))
	f.Add([]byte(header + entry + "\n"))
	f.Add([]byte(header + "{}\n" + entry))
	f.Add([]byte(header + strings.Replace(entry, `"hi"`, `"h\u00e9\n\ud83c\udf89\"\\"`, 1) +
		`{"x":1,"type":"t\"c\\","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2026-04-25T14:00:02.000Z","k\u0065y":"\n"}` + "\n"))
	dir := f.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, lerr := Load(path)
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Fatal("Load changed the file")
		}
		s, err := Open(path)
		got, _ := os.ReadFile(path)
		if err != nil {
			if !bytes.Equal(got, data) {
				t.Fatalf("failed Open (%v) changed the file", err)
			}
			if lerr == nil || lerr.Error() != err.Error() {
				t.Fatalf("Open failed (%v), Load: %v", err, lerr)
			}
			return
		}
		defer s.Close()
		if lerr != nil || len(l.Entries) != len(s.Entries) || l.Recovered != s.Recovered {
			t.Fatalf("Load and Open disagree: %v", lerr)
		}
		lines := bytes.SplitAfter(data, []byte("\n"))[1:]
		for i := range s.Entries {
			le, oe := l.Entries[i], s.Entries[i]
			if !bytes.Equal(le.Line, bytes.TrimSuffix(lines[i], []byte("\n"))) || oe.Line != nil {
				t.Fatalf("entry %d: Load's Line %q, Open's %q, line %q", i, le.Line, oe.Line, lines[i])
			}
			le.Line = nil
			if !reflect.DeepEqual(le, oe) {
				t.Fatalf("entry %d: Load and Open decode differently:\n%+v\n%+v", i, le, oe)
			}
		}
		if !s.Recovered {
			if !bytes.Equal(got, data) {
				t.Fatal("Open changed the file without recovering")
			}
		} else if want := data[:lastLineStart(data)]; !bytes.Equal(got, want) {
			t.Fatalf("recovery left %q, want %q", got, want)
		}
		if _, err := s.Append(Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("x")}}}); err != nil {
			t.Fatal(err)
		}
		r, err := Load(path)
		if err != nil || r.Recovered || len(r.Entries) != len(s.Entries) {
			t.Fatalf("after append: %v", err)
		}
	})
}

// lastLineStart returns where the file's last line begins: after the last
// newline, or, when the file ends with one, after the one before.
func lastLineStart(data []byte) int {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	return bytes.LastIndexByte(data[:end], '\n') + 1
}
