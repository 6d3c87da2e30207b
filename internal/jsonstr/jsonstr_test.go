package jsonstr

import (
	"bytes"
	"encoding/json"
	"slices"
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

// lenCases are awkward strings and each of them with every one of the 256
// bytes put at each of the first nine places (so that every escape falls
// at every offset of the eight-byte words Len skips).
func lenCases() []string {
	cases := slices.Clone(awkward)
	for c := range 256 {
		for at := range 9 {
			cases = append(cases, strings.Repeat("a", at)+string([]byte{byte(c)})+strings.Repeat("b", 16))
		}
	}
	for _, s := range awkward {
		cases = append(cases, strings.Repeat(s, 5), "0123456"+s+"89abcdef")
	}
	return cases
}

func TestLenIsAppendLen(t *testing.T) {
	for _, s := range lenCases() {
		if got, want := Len(s), len(Append(nil, s)); got != want {
			t.Errorf("Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzLen(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Len(s), len(Append(nil, s)); got != want {
			t.Fatalf("Len(%q) = %d, want %d", s, got, want)
		}
	})
}

// SkipPlain stops at or before the first byte a string's reader must see,
// wherever it falls in a word, and skips a long plain run to its last
// partial word.
func TestSkipPlain(t *testing.T) {
	special := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' || c == 0xE2 }
	for c := range 256 {
		for at := range 20 {
			b := []byte(strings.Repeat("a", at) + string([]byte{byte(c)}) + strings.Repeat("b", 11))
			for from := 0; from <= at; from++ {
				got := SkipPlain(b, from)
				first := len(b)
				for i := from; i < len(b); i++ {
					if special(b[i]) {
						first = i
						break
					}
				}
				if got > first || got < from {
					t.Fatalf("SkipPlain(%q, %d) = %d, first special byte at %d", b, from, got, first)
				}
				if first == len(b) && len(b)-got >= 8 {
					t.Fatalf("SkipPlain(%q, %d) = %d: a whole plain word left", b, from, got)
				}
			}
		}
	}
}

// TestEscapeTable: the literal table holds, for every ASCII byte, what
// encoding/json writes for it (HTML escaping off) when that is not the byte
// itself, and "" otherwise.
func TestEscapeTable(t *testing.T) {
	for c := range len(jsonEscape) {
		q := encodingJSON(t, string(rune(c)))
		got := string(q[1 : len(q)-1])
		want := got
		if got == string(rune(c)) {
			want = ""
		}
		if jsonEscape[c] != want {
			t.Errorf("jsonEscape[%#x] = %q, encoding/json writes %q", c, jsonEscape[c], got)
		}
	}
}
