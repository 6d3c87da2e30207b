package tool

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

// naiveGrep is the reference: regexp.Match on each line.
func naiveGrep(t testing.TB, expr string, text []byte) string {
	t.Helper()
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	lines := bytes.Split(text, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			fmt.Fprintf(&b, "%d:%s\n", i+1, l)
		}
	}
	return b.String()
}

func engineGrep(t testing.TB, expr string, text []byte, bufSize int, oneByte bool) (string, error) {
	t.Helper()
	m, err := newLineMatcher(expr)
	if err != nil {
		t.Fatal(err)
	}
	s := newSearcher(m)
	if bufSize > 0 {
		s.buf = s.buf[:bufSize]
	}
	var b strings.Builder
	var r = bytes.NewReader(text)
	var rd interface{ Read([]byte) (int, error) } = r
	if oneByte {
		rd = iotest.OneByteReader(r)
	}
	err = s.search(context.Background(), rd, func(n int, line []byte) { fmt.Fprintf(&b, "%d:%s\n", n, line) })
	return b.String(), err
}

var engineText = "package main\n\nfunc NewReader(r io.Reader) *Reader {\n\treturn &Reader{r: r}\n}\n" +
	"// TODO(rsc): fix\nABC12( x\nabc12(\nthe Kelvin \u212a sign and ſ\nCREATESERVER createServer\n" +
	"word boundary: foo_bar foo bar\n$end\n\n\nlast line without newline é"

func TestSearcherAgreesWithRegexp(t *testing.T) {
	exprs := []string{
		`func NewReader\(`, `TODO\(rsc\)`, `[A-Z]{3}[0-9]{2}\(`, `(?i)createserver`, `(?i)k`, `(?i)s`,
		`\bfoo\b`, `\Bbar`, `^$`, `^\s*$`, `^func`, `\)$`, `é$`, `x*`, `.`, `^`, `(?i)KELVIN`,
		`[^a-z]`, `\pL+\s`, `a|b`, `(?m)^\w+$`, `\Afunc`, `line\z`, `\$end`, `[[:upper:]]+\d`,
		`(foo|bar)_?bar`, `R.a.e.`, `\x{212a}`, `ſ`, `(?s).+`, `(?U)a+?`, `ne\b`,
		`(?i)newreader`, `(?i)reader\(`, `(?i)todo\(RSC\)`, `(?i)the kelvin`, `x(?i)ABC12`, `(?i)er`, `(?i)ine`, `(?i)LINE WITHOUT`,
	}
	for _, expr := range exprs {
		want := naiveGrep(t, expr, []byte(engineText))
		for _, buf := range []int{0, 64, 41} {
			for _, one := range []bool{false, true} {
				got, err := engineGrep(t, expr, []byte(engineText), buf, one)
				if err != nil {
					t.Fatalf("%s: %v", expr, err)
				}
				if got != want {
					t.Errorf("%q (buffer %d, one-byte reads %v):\n%s\nwant\n%s", expr, buf, one, got, want)
				}
			}
		}
	}
}

// TestSearcherLongLine: a line longer than the buffer is searched in its
// head, the rest is skipped, and the lines after it keep their numbers.
func TestSearcherLongLine(t *testing.T) {
	text := "a\n" + "needle" + strings.Repeat("x", 200) + "needle\nb needle\n"
	got, err := engineGrep(t, "needle", []byte(text), 64, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "2:needle" + strings.Repeat("x", 58) + "\n3:b needle\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// A needle only past the buffer's worth of a line is not seen.
	got, _ = engineGrep(t, "needle", []byte(strings.Repeat("y", 100)+"needle\n"), 64, false)
	if got != "" {
		t.Errorf("match past the searched head: %q", got)
	}
}

// TestDFACacheReset: an expression whose automaton has more states than the
// cache holds still matches every line it should.
func TestDFACacheReset(t *testing.T) {
	var b strings.Builder
	x := uint32(7)
	for range 6000 {
		for range 80 {
			x = x*1664525 + 1013904223
			b.WriteByte("aaaabbbbc"[x>>16%9])
		}
		b.WriteByte('\n')
	}
	text := []byte(b.String())
	const expr = `a[ab]{14}c`
	m, err := newLineMatcher(expr)
	if err != nil || m.dfa == nil {
		t.Fatalf("no automaton for %s: %v", expr, err)
	}
	s := newSearcher(m)
	var got strings.Builder
	if err := s.search(context.Background(), bytes.NewReader(text), func(n int, line []byte) { fmt.Fprintf(&got, "%d:%s\n", n, line) }); err != nil {
		t.Fatal(err)
	}
	if want := naiveGrep(t, expr, text); got.String() != want {
		t.Errorf("got %d bytes, want %d", got.Len(), len(want))
	}
	if s.dfa.resets == 0 {
		t.Errorf("the cache never started over (%d states); the test does not test that", len(s.dfa.states))
	}
}

func TestSearcherBinary(t *testing.T) {
	_, err := engineGrep(t, "x", []byte("x\x00y\n"), 0, false)
	if err != errBinary {
		t.Errorf("err = %v, want errBinary", err)
	}
}

func FuzzSearcher(f *testing.F) {
	f.Add(`[A-Z]{3}\d`, engineText)
	f.Add(`(?i)server`, engineText)
	f.Add(`\bfoo`, "foo\nxfoo\n foo")
	f.Add(`^a*$`, "\n\naaa\nb")
	f.Add(`(?i)abc\d`, "xABC1 aBc2\nabC\n")
	f.Fuzz(func(t *testing.T, expr, text string) {
		if _, err := regexp.Compile(expr); err != nil {
			return
		}
		if strings.IndexByte(text[:min(len(text), sniffBytes)], 0) >= 0 || looksBinary([]byte(text[:min(len(text), sniffBytes)])) {
			return
		}
		want := naiveGrep(t, expr, []byte(text))
		got, err := engineGrep(t, expr, []byte(text), 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q on %q:\n%s\nwant\n%s", expr, text, got, want)
		}
	})
}
