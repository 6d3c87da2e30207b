// Package jsonstr writes a Go string as a JSON string, byte for byte as
// encoding/json writes it with HTML escaping off: the one JSON string
// escaper of awl's hand-written encoders (request bodies, session lines),
// so that what a session stores and what a request sends spell a string
// alike, U+2028 and U+2029 included.
package jsonstr

import (
	"encoding/binary"
	"unicode/utf8"
)

// jsonEscape is how encoding/json (HTML escaping off) writes each ASCII
// byte: "" for as it is. A literal, which the linker lays out, where a
// computed table needs an initialiser at every start of awl
// (TestEscapeTable checks it against the rule).
var jsonEscape = [utf8.RuneSelf]string{
	0: `\u0000`, 1: `\u0001`, 2: `\u0002`, 3: `\u0003`, 4: `\u0004`, 5: `\u0005`,
	6: `\u0006`, 7: `\u0007`, 8: `\b`, 9: `\t`, 10: `\n`, 11: `\u000b`, 12: `\f`, 13: `\r`,
	14: `\u000e`, 15: `\u000f`, 16: `\u0010`, 17: `\u0011`, 18: `\u0012`, 19: `\u0013`,
	20: `\u0014`, 21: `\u0015`, 22: `\u0016`, 23: `\u0017`, 24: `\u0018`, 25: `\u0019`,
	26: `\u001a`, 27: `\u001b`, 28: `\u001c`, 29: `\u001d`, 30: `\u001e`, 31: `\u001f`,
	'"': `\"`, '\\': `\\`,
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// load8 is the 8 bytes of s from i, little-endian.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasEscape reports whether any of the 8 bytes in x is a control byte,
// '"', '\\' or 0xE2 (which starts U+2028 and U+2029).
func hasEscape(x uint64) bool {
	ctl := (x - lsb8*0x20) &^ x
	q := x ^ (lsb8 * '"')
	bs := x ^ (lsb8 * '\\')
	e2 := x ^ (lsb8 * 0xE2)
	return (ctl|(q-lsb8)&^q|(bs-lsb8)&^bs|(e2-lsb8)&^e2)&msb8 != 0
}

// appendValid is Append for valid UTF-8, where only
// ASCII bytes and U+2028/U+2029 need escaping. Plain bytes are copied as
// they are scanned, eight at a time, never by a call per run.
func appendValid(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if x := load8(s, i); !hasEscape(x) {
				dst = binary.LittleEndian.AppendUint64(dst, x)
				i += 8
				continue
			}
		}
		c := s[i]
		switch {
		case c < utf8.RuneSelf && jsonEscape[c] != "":
			dst = append(dst, jsonEscape[c]...)
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8:
			dst = append(dst, '\\', 'u', '2', '0', '2', '8'+s[i+2]-0xA8)
			i += 3
			continue
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}

// hasSpecial reports whether any of the 8 bytes in x is a control byte, '"',
// '\\' or not ASCII.
func hasSpecial(x uint64) bool {
	ctl := (x - lsb8*0x20) &^ x
	q := x ^ (lsb8 * '"')
	bs := x ^ (lsb8 * '\\')
	return (ctl|(q-lsb8)&^q|(bs-lsb8)&^bs|x)&msb8 != 0
}

// Append appends s as a JSON string exactly as encoding/json writes it
// with HTML escaping off: the escapes of jsonEscape, invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u2028 and \u2029. Runs of plain ASCII
// are skipped eight bytes at a time.
func Append(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendValid(dst, s)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && !hasSpecial(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		var esc string
		size := 1
		if c := s[i]; c < utf8.RuneSelf {
			esc = jsonEscape[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				esc = `\ufffd`
			case r == '\u2028':
				esc = `\u2028`
			case r == '\u2029':
				esc = `\u2029`
			}
		}
		if esc != "" {
			dst = append(dst, s[start:i]...)
			dst = append(dst, esc...)
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Len is len(Append(nil, s)), counted in one pass without writing: the
// exact room a buffer needs for s. Runs of plain ASCII are skipped eight
// bytes at a time, as Append does.
func Len(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); {
		if i+8 <= len(s) && !hasSpecial(load8(s, i)) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if e := jsonEscape[c]; e != "" {
				n += len(e) - 1
			}
			i++
			continue
		}
		// Append writes an invalid byte as \ufffd (6 bytes for 1) and
		// U+2028, U+2029 as \u2028, \u2029 (6 for 3), whether or not the
		// string is otherwise valid.
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5
		case r == '\u2028' || r == '\u2029':
			n += 3
		}
		i += size
	}
	return n
}

// SkipPlain returns where a reader of the inside of a JSON string in b
// must go on from i byte by byte: past the whole eight-byte words from i
// that hold no control byte, '"', '\\' or 0xE2 (which starts U+2028 and
// U+2029). It is i itself when the word at i holds one, and never past the
// first such byte.
func SkipPlain(b []byte, i int) int {
	for i+8 <= len(b) && !hasEscape(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	return i
}
