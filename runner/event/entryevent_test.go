package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The entry event written around its line is byte for byte what
// encoding/json writes for it.
func TestEntryEventBytes(t *testing.T) {
	base := Base{Type: "entry", SessionID: "01a2334b-7a60-7f3d-be69-e82db7f25669", Timestamp: "2026-12-01T20:28:34.272Z"}
	for _, line := range []string{
		`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-12-01T20:28:34.272Z","message":{"role":"user","content":[{"type":"text","text":"hi <b> & \"q\" \\ \u00e9 \t"}]}}`,
		`{"type":"turnContext","id":"x","parentId":"y","timestamp":"t","a":[1,2,{"b":null}],"s":"\u2028 line sep"}`,
		`{"type":"message","text":"` + strings.Repeat("line\\n", 10000) + `"}`,
		`{"a" : 1}`,
		"{\"a\":\"\u2028\"}",
	} {
		ee := Entry{Base: base, Entry: json.RawMessage(line)}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ee); err != nil {
			t.Fatal(err)
		}
		got, err := marshalEvent(ee)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("line %.60s:\n got %.200s\nwant %.200s", line, got, buf.Bytes())
		}
		// Emitted, as a session line (unchecked) or not, to a plain
		// writer and to one that takes parts: the same bytes, and the
		// line itself is one of the parts, not a copy.
		valid := json.Valid([]byte(line))
		for _, stored := range []bool{false, true} {
			if stored && !valid {
				continue // a session line is valid JSON
			}
			ee.Stored = stored
			var plain bytes.Buffer
			NewEmitter(&plain, nil).Emit(ee)
			pw := &partsBuf{}
			NewEmitter(pw, nil).Emit(ee)
			if !bytes.Equal(plain.Bytes(), buf.Bytes()) || !bytes.Equal(Join(pw.parts...), buf.Bytes()) {
				t.Errorf("stored %v, line %.60s:\n plain %.200s\n parts %.200s\n want %.200s", stored, line, plain.Bytes(), Join(pw.parts...), buf.Bytes())
			}
			if isCompact(ee.Entry) && (len(pw.parts) != 3 || &pw.parts[1][0] != &ee.Entry[0]) {
				t.Errorf("line %.60s: %d parts, the line copied", line, len(pw.parts))
			}
		}
	}
}

// partsBuf keeps what WriteParts was given.
type partsBuf struct{ parts [][]byte }

func (p *partsBuf) Write(b []byte) (int, error) {
	p.parts = append(p.parts, b)
	return len(b), nil
}

func (p *partsBuf) WriteParts(parts ...[]byte) error {
	p.parts = append(p.parts, parts...)
	return nil
}

// compactByByte is isCompact as it was, a byte at a time: the oracle of
// the word-at-a-time one.
func compactByByte(b []byte) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return false
		case in && (c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xa8 || b[i+2] == 0xa9)):
			return false
		}
	}
	return true
}

// isCompact skips the inside of strings a word at a time and still sees
// every quote, escape, U+2028 and U+2029 in them, and the white space
// after them, wherever they fall in a word.
func TestIsCompactSkipsStrings(t *testing.T) {
	inner := []string{`\"`, `\\`, `\n`, " ", "\u2028", "\u2029", "\xe2\x80", "\xe2", "é", `\u2028`}
	after := []string{"}", " }", `,"t":1}`, `, "t":1}`, `,"t":"x y"}`, `,"t":"` + strings.Repeat("z", 9) + " \n\"}"}
	n := 0
	for _, x := range inner {
		for at := range 17 {
			for tail := range 10 {
				for _, a := range after {
					line := []byte(`{"s":"` + strings.Repeat("a", at) + x + strings.Repeat("b", tail) + `"` + a)
					if got, want := isCompact(line), compactByByte(line); got != want {
						t.Fatalf("isCompact(%q) = %v, want %v", line, got, want)
					}
					if isCompact(line) {
						n++
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no compact line among the cases")
	}
}
