package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/awlrun/awl/internal/jsonstr"
)

// jsonWriter appends a request body by hand, byte for byte what
// encoding/json (HTML escaping off) makes of the wire structs, without its
// reflection, its intermediate buffer and the copy out of it: a resumed
// session of 100 MB is projected on every turn. A string its memo knows
// (a session line already holds it escaped) is not copied: the body is
// then in pieces, what was written before it, its bytes in the line, and
// what comes after.
type jsonWriter struct {
	b     []byte
	parts reqBody // the pieces before b
	memo  *jsonstr.Memo
	err   error
}

// newJSONWriter starts a body sized for req, so that it rarely grows; a
// string the memo holds takes no room in it.
func newJSONWriter(req Request) *jsonWriter {
	memo := req.Memo
	size := func(s string) int {
		if memo.Get(s) != nil {
			return 0
		}
		return len(s)
	}
	n := 4096
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, m := range req.Messages {
		n += 64
		for i := range m.Content {
			b := &m.Content[i]
			n += 128 + size(b.Text) + size(b.Thinking) + len(b.Signature) + len(b.Redacted) + len(b.ItemID) +
				len(b.ID) + len(b.Name) + size(b.Input) + len(b.ToolUseID) + size(b.Content) + size(b.Data)
			for _, a := range b.Attachments {
				n += 128 + size(a.Data)
			}
		}
	}
	return &jsonWriter{b: make([]byte, 0, n+n/16), memo: memo}
}

// writeJSON returns body, a request body built from req, as JSON. With a
// memo, what the body did not use is then swept from it.
func writeJSON(req Request, v interface{ appendJSON(*jsonWriter) }) (reqBody, error) {
	w := newJSONWriter(req)
	v.appendJSON(w)
	if w.err != nil {
		return nil, w.err
	}
	req.Memo.Sweep()
	if len(w.b) > 0 || len(w.parts) == 0 {
		w.parts = append(w.parts, w.b)
	}
	return w.parts, nil
}

// last is the last byte written, 0 at the start.
func (w *jsonWriter) last() byte {
	if n := len(w.b); n > 0 {
		return w.b[n-1]
	}
	if n := len(w.parts); n > 0 {
		p := w.parts[n-1] // no piece is empty
		return p[len(p)-1]
	}
	return 0
}

// key appends an object key (a plain ASCII literal), after a comma unless
// it is the object's first.
func (w *jsonWriter) key(k string) {
	if c := w.last(); c != 0 && c != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) begin() { w.b = append(w.b, '{') }

func (w *jsonWriter) end() { w.b = append(w.b, '}') }

// str appends s as a JSON string: the memo's bytes for it, as a piece of
// their own, or s escaped.
func (w *jsonWriter) str(s string) {
	if j := w.memo.Get(s); j != nil {
		if len(w.b) > 0 {
			w.parts = append(w.parts, w.b[:len(w.b):len(w.b)])
			w.b = w.b[len(w.b):]
		}
		w.parts = append(w.parts, j)
		return
	}
	w.b = jsonstr.Append(w.b, s)
}

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

// reqBody is a request body in pieces, sent one after the other: most often
// one, the whole body.
type reqBody [][]byte

func (b reqBody) size() int {
	n := 0
	for _, p := range b {
		n += len(p)
	}
	return n
}

// bytes is the body as one slice: its only piece, or the pieces joined.
func (b reqBody) bytes() []byte {
	if len(b) == 1 {
		return b[0]
	}
	return bytes.Join(b, nil)
}

// reader reads the body from its start, without copying it.
func (b reqBody) reader() io.Reader {
	if len(b) == 1 {
		return bytes.NewReader(b[0])
	}
	rs := make([]io.Reader, len(b))
	for i, p := range b {
		rs[i] = bytes.NewReader(p)
	}
	return io.MultiReader(rs...)
}
