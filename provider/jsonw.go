package provider

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/awlrun/awl/internal/jsonstr"
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

func (w *jsonWriter) str(s string) { w.b = jsonstr.Append(w.b, s) }

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
