package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConvertResult(t *testing.T) {
	res := convertResult(&mcpsdk.CallToolResult{
		Content: []mcpsdk.Content{
			&mcpsdk.TextContent{Text: `{"b": 2, "a": 1}`},
			&mcpsdk.ImageContent{Data: []byte("\x89PNG\r\n\x1a\nnot really"), MIMEType: "image/png"},
			&mcpsdk.AudioContent{Data: []byte("xx"), MIMEType: "audio/wav"},
			&mcpsdk.ResourceLink{URI: "file:///x.txt", Name: "x", MIMEType: "text/plain", Description: "a file"},
			&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "mem://a", Text: "inline text"}},
			&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "mem://b", Blob: []byte{1, 2}, MIMEType: "application/gzip"}},
		},
		// The same JSON as the text block: not repeated.
		StructuredContent: map[string]any{"a": 1, "b": 2},
	})
	want := []string{
		`{"b": 2, "a": 1}`,
		"[image (image/png) left out: not a valid PNG image",
		"[audio (audio/wav, 2 bytes) left out",
		"Resource: file:///x.txt (x, text/plain): a file",
		"Resource mem://a:\ninline text",
		"[embedded resource mem://b (application/gzip, 2 bytes) left out: binary]",
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("result lacks %q:\n%s", w, res.Content)
		}
	}
	if strings.Count(res.Content, `"a"`) != 1 || res.IsError || len(res.Attachments) != 0 {
		t.Errorf("result: %+v", res)
	}

	// Structured content alone becomes JSON text; isError is kept.
	res = convertResult(&mcpsdk.CallToolResult{StructuredContent: []any{1, "two"}, IsError: true})
	if res.Content != `[1,"two"]` || !res.IsError {
		t.Errorf("structured: %+v", res)
	}
	res = convertResult(&mcpsdk.CallToolResult{IsError: true})
	if !res.IsError || res.Content == "" {
		t.Errorf("empty error: %+v", res)
	}

	// A huge text keeps its head and tail, cut on rune boundaries.
	huge := strings.Repeat("é", maxText) + "END"
	res = convertResult(&mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: huge}}})
	if len(res.Content) > maxText+100 || !strings.HasSuffix(res.Content, "END") || !strings.Contains(res.Content, "bytes cut") || !strings.HasPrefix(res.Content, "é") {
		t.Errorf("huge: %d bytes, %q…%q", len(res.Content), res.Content[:10], res.Content[len(res.Content)-10:])
	}
	if !utf8Valid(res.Content) {
		t.Errorf("huge: invalid UTF-8")
	}
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }
