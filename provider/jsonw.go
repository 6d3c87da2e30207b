package provider

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// jsonWriter appends a request body by hand, byte for byte what
// encoding/json (HTML escaping off) makes of the wire structs, without its
// reflection, its intermediate buffer and the copy out of it: a resumed
// session of 100 MB is projected on every turn.
type jsonWriter struct {
	b   []byte
	err error
}

// newJSONWriter starts a body sized for req, so that it rarely grows.
func newJSONWriter(req Request) *jsonWriter {
	n := 4096
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, m := range req.Messages {
		n += 64
		for i := range m.Content {
			b := &m.Content[i]
			n += 128 + len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Redacted) + len(b.ItemID) +
				len(b.ID) + len(b.Name) + len(b.Input) + len(b.ToolUseID) + len(b.Content) + len(b.Data)
			for _, a := range b.Attachments {
				n += 128 + len(a.Data)
			}
		}
	}
	return &jsonWriter{b: make([]byte, 0, n+n/16)}
}

// writeJSON returns body, a request body built from req, as JSON.
func writeJSON(req Request, body interface{ appendJSON(*jsonWriter) }) ([]byte, error) {
	w := newJSONWriter(req)
	body.appendJSON(w)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// key appends an object key (a plain ASCII literal), after a comma unless
// it is the object's first.
func (w *jsonWriter) key(k string) {
	if n := len(w.b); n > 0 && w.b[n-1] != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) begin() { w.b = append(w.b, '{') }

func (w *jsonWriter) end() { w.b = append(w.b, '}') }

func (w *jsonWriter) str(s string) { w.b = appendJSONString(w.b, s) }

func (w *jsonWriter) strField(k, s string) { w.key(k); w.str(s) }

// optStr is a string field with omitempty.
func (w *jsonWriter) optStr(k, s string) {
	if s != "" {
		w.strField(k, s)
	}
}

// optPtrStr is a *string field with omitempty: absent when nil.
func (w *jsonWriter) optPtrStr(k string, s *string) {
	if s != nil {
		w.strField(k, *s)
	}
}

func (w *jsonWriter) intField(k string, n int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(n), 10)
}

func (w *jsonWriter) boolField(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *jsonWriter) rawField(k string, m json.RawMessage) {
	w.key(k)
	w.raw(m)
}

// raw appends m compacted, as encoding/json does a json.RawMessage (nil is
// null).
func (w *jsonWriter) raw(m json.RawMessage) {
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	buf := bytes.NewBuffer(w.b)
	if err := json.Compact(buf, m); err != nil && w.err == nil {
		w.err = err
	}
	w.b = buf.Bytes()
}

// any appends a content value: a string, a slice of parts or blocks, or
// anything else through encoding/json.
func (w *jsonWriter) any(v any) {
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, "null"...)
	case string:
		w.str(v)
	case []*anthBlock:
		appendSlice(w, v, (*anthBlock).appendJSON)
	case []*respPart:
		appendSlice(w, v, (*respPart).appendJSON)
	case []*chatPart:
		appendSlice(w, v, (*chatPart).appendJSON)
	default:
		b, err := marshal(v)
		if err != nil && w.err == nil {
			w.err = err
		}
		w.b = append(w.b, b...)
	}
}

// optAnyField is an interface field with omitempty: absent when nil (an
// empty string in it is still sent).
func (w *jsonWriter) optAnyField(k string, v any) {
	if v != nil {
		w.key(k)
		w.any(v)
	}
}

// appendSlice appends s as an array (nil is null), each element by f.
// Elements are never nil pointers.
func appendSlice[E any](w *jsonWriter, s []E, f func(E, *jsonWriter)) {
	if s == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, e := range s {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		f(e, w)
	}
	w.b = append(w.b, ']')
}

func sliceField[E any](w *jsonWriter, k string, s []E, f func(E, *jsonWriter)) {
	w.key(k)
	appendSlice(w, s, f)
}

// optSliceField is a slice field with omitempty: absent when empty.
func optSliceField[E any](w *jsonWriter, k string, s []E, f func(E, *jsonWriter)) {
	if len(s) > 0 {
		sliceField(w, k, s, f)
	}
}

// optObjField is a pointer-to-struct field with omitempty: absent when nil.
func optObjField[T any, P interface {
	*T
	appendJSON(*jsonWriter)
}](w *jsonWriter, k string, v P) {
	if v != nil {
		w.key(k)
		v.appendJSON(w)
	}
}

func strElem(s string, w *jsonWriter) { w.str(s) }

// jsonEscape is how encoding/json (HTML escaping off) writes each ASCII
// byte: "" for as it is.
var jsonEscape = func() (t [utf8.RuneSelf]string) {
	const hex = "0123456789abcdef"
	for c := range 0x20 {
		t[c] = `\u00` + hex[c>>4:c>>4+1] + hex[c&0xf:c&0xf+1]
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = `\b`, `\f`, `\n`, `\r`, `\t`
	t['"'], t['\\'] = `\"`, `\\`
	return t
}()

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

// appendValidJSONString is appendJSONString for valid UTF-8, where only
// ASCII bytes and U+2028/U+2029 need escaping. Plain bytes are copied as
// they are scanned, eight at a time, never by a call per run.
func appendValidJSONString(dst []byte, s string) []byte {
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

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it with HTML escaping off: the escapes of jsonEscape, invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u2028 and \u2029. Runs of plain ASCII
// are skipped eight bytes at a time.
func appendJSONString(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendValidJSONString(dst, s)
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
