package mcp

import (
	"encoding/base64"
	"encoding/json"
	"github.com/awlrun/awl/runner/mcp/jsonrpc"
	"strings"
	"testing"
	"unicode/utf8"
)

// wire decodes a tools/call result as it comes from a server.
func wire(t *testing.T, s string) *jsonrpc.CallResult {
	t.Helper()
	var r jsonrpc.CallResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return &r
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestConvertResult(t *testing.T) {
	res := convertResult(wire(t, `{"content":[
		{"type":"text","text":"{\"b\": 2, \"a\": 1}"},
		{"type":"image","data":"`+b64("\x89PNG\r\n\x1a\nnot really")+`","mimeType":"image/png"},
		{"type":"audio","data":"`+b64("xx")+`","mimeType":"audio/wav"},
		{"type":"resource_link","uri":"file:///x.txt","name":"x","mimeType":"text/plain","description":"a file"},
		{"type":"resource","resource":{"uri":"mem://a","text":"inline text"}},
		{"type":"resource","resource":{"uri":"mem://b","blob":"`+b64("\x01\x02")+`","mimeType":"application/gzip"}},
		{"type":"image","data":"not base64!","mimeType":"image/png"},
		{"type":"video","uri":"x"},
		[1,2]
	],
	"structuredContent":{"a":1,"b":2}}`))
	want := []string{
		`{"b": 2, "a": 1}`,
		"[image (image/png) left out: not a valid PNG image",
		"[audio (audio/wav, 2 bytes) left out",
		"Resource: file:///x.txt (x, text/plain): a file",
		"Resource mem://a:\ninline text",
		"[embedded resource mem://b (application/gzip, 2 bytes) left out: binary]",
		"[image (image/png) left out: its data is not base64]",
		`[a content item of type "video" left out]`,
		"[a content item that does not decode left out]",
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("result lacks %q:\n%s", w, res.Content)
		}
	}
	// The same JSON as the text block: not repeated.
	if strings.Count(res.Content, `"a"`) != 1 || res.IsError || len(res.Attachments) != 0 {
		t.Errorf("result: %+v", res)
	}

	// Structured content alone becomes JSON text, its keys sorted; isError
	// is kept.
	res = convertResult(wire(t, `{"content":[],"structuredContent":[1,"two",{"z":1,"a":2}],"isError":true}`))
	if res.Content != `[1,"two",{"a":2,"z":1}]` || !res.IsError {
		t.Errorf("structured: %+v", res)
	}
	res = convertResult(wire(t, `{"isError":true}`))
	if !res.IsError || res.Content == "" {
		t.Errorf("empty error: %+v", res)
	}
	res = convertResult(wire(t, `{"content":[],"structuredContent":null}`))
	if res.Content != "(no output)" {
		t.Errorf("null structured content: %+v", res)
	}

	// A huge text keeps its head and tail, cut on rune boundaries.
	huge := strings.Repeat("é", maxText) + "END"
	q, _ := json.Marshal(huge)
	res = convertResult(wire(t, `{"content":[{"type":"text","text":`+string(q)+`}]}`))
	if len(res.Content) > maxText+100 || !strings.HasSuffix(res.Content, "END") || !strings.Contains(res.Content, "bytes cut") || !strings.HasPrefix(res.Content, "é") {
		t.Errorf("huge: %d bytes, %q…%q", len(res.Content), res.Content[:10], res.Content[len(res.Content)-10:])
	}
	if !utf8Valid(res.Content) {
		t.Errorf("huge: invalid UTF-8")
	}
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }
