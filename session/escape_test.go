package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestLineSeparatorsEscapedAsRequestsSpellThem: U+2028 and U+2029 in a
// message are written \u2028 and \u2029, as encoding/json, the request
// writer and the events spell them (one escaper, internal/jsonstr), and
// read back as the characters. A raw U+2028 is a line end to a JavaScript
// reader of the file.
func TestLineSeparatorsEscapedAsRequestsSpellThem(t *testing.T) {
	text := "a\u2028b\u2029c <&> \xff"
	s, err := testStore(t).Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Type: TypeMessage, Message: userMsg(text)})
	path := s.Path
	s.Close()
	lines := bytes.Split(bytes.TrimSpace(readFile(t, path)), []byte("\n"))
	line := lines[len(lines)-1]
	if bytes.Contains(line, []byte("\u2028")) || bytes.Contains(line, []byte("\u2029")) {
		t.Errorf("raw line separators in %s", line)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.Encode(text)
	if !bytes.Contains(line, bytes.TrimSpace(want.Bytes())) {
		t.Errorf("line %s does not hold the text as encoding/json writes it, %s", line, want.Bytes())
	}
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	got := o.Entries[len(o.Entries)-1].Message.Content[0].Text
	if got != strings.ToValidUTF8(text, "\uFFFD") {
		t.Errorf("read back %q", got)
	}
}
