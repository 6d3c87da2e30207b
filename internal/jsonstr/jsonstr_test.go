package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// awkward strings exercise every escape encoding/json makes.
var awkward = []string{
	"", "plain", `quote " and \ backslash`, "<html> & 'single'", "ctl \x00\x01\x07\b\f\n\r\t\x1f\x7f end",
	"héllo wörld ✓ 日本語 🙂", "line\u2028sep\u2029par", "bad utf8 \xff\xfe and \xe2\x80 cut", "\xe2\x80\xa8",
	"\xe2\x80", "\xe2\x80\xa8\xff", strings.Repeat("abcdefg\"", 9), strings.Repeat("x", 17) + "\n" + strings.Repeat("é", 9),
	strings.Repeat("x", 7) + "\u2028" + strings.Repeat("y", 9),
}

// encodingJSON is how encoding/json writes s, HTML escaping off.
func encodingJSON(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendIsEncodingJSON(t *testing.T) {
	for _, s := range awkward {
		if got, want := Append(nil, s), encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
	}
	// U+2028 and U+2029 are escaped: a JavaScript reader of NDJSON or a
	// session file takes them for line ends otherwise.
	if got := string(Append([]byte("x"), "a\u2028b\u2029")); got != `x"a\u2028b\u2029"` {
		t.Errorf("Append = %s", got)
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Append(nil, s), encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}
