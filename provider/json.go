package provider

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/tidwall/gjson"
)

// get looks path up in data without copying data to a string. The result's
// Str and Raw may alias data, which the SSE decoder reuses: clone anything
// kept beyond the current event (strings.Clone, or str below).
func get(data []byte, path string) gjson.Result {
	if len(data) == 0 {
		return gjson.Result{}
	}
	return gjson.Get(unsafe.String(unsafe.SliceData(data), len(data)), path)
}

// str returns r's string value as a fresh string that does not alias the
// event buffer.
func str(r gjson.Result) string {
	if r.Type != gjson.String {
		if r.Type == gjson.Null || !r.Exists() {
			return ""
		}
		return string([]byte(r.String()))
	}
	return string([]byte(r.Str))
}

// marshal encodes v without HTML escaping, so text reaches the model as
// written, and without a trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// jsonObject returns s as a JSON object for a wire field that must be one
// (Anthropic's tool_use input): s itself when it is a valid object, else {}.
// Input that did not parse (a tool call cut off by max_tokens) can't be sent
// back as anything truer.
func jsonObject(s string) json.RawMessage {
	t := gjson.Parse(s)
	if s == "" || !t.IsObject() || !gjson.Valid(s) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}
