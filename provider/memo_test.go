package provider

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonstr"
)

// memoRequest is a request whose long strings (a prompt, a tool's input and
// result, an image, an answer) a session line would hold escaped, with a
// memo that knows all but one of them (the last tool result), as a
// session's would.
func memoRequest(t *testing.T) (Request, *jsonstr.Memo, []string) {
	t.Helper()
	long := func(s string) string {
		return strings.Repeat(s, jsonstr.MemoMin/len(s)+1)
	}
	prompt := long("line <b> & \"q\" \\ é \u2028 \x01\n")
	input := `{"path":"` + long("x") + `"}`
	result := long("out\tput\n")
	image := long(pngData)
	answer := long("the answer ")
	unknown := long("not known\n")
	req := Request{Model: "m", Tools: testTools, Messages: []conv.Message{
		sys("be brief"),
		user(conv.TextBlock(prompt), conv.Block{Type: conv.BlockImage, MimeType: "image/png", Data: image}),
		assistant("p", conv.TextBlock(answer), conv.Block{Type: conv.BlockToolUse, ID: "call_1", Name: "read", Input: input}),
		user(conv.Block{Type: conv.BlockToolResult, ToolUseID: "call_1", Content: result},
			conv.Block{Type: conv.BlockToolResult, ToolUseID: "call_1", Content: unknown}),
		user(conv.TextBlock("short")),
	}}
	memo := &jsonstr.Memo{}
	known := []string{prompt, input, result, image, answer}
	for _, s := range known {
		memo.Put(s, jsonstr.Append(nil, s))
	}
	return req, memo, known
}

// A body that takes the memo's bytes is, joined, the body escaping makes,
// on every wire API, and the memo's strings are pieces of it, not copies.
func TestMemoBodyIsTheEscapedBody(t *testing.T) {
	for _, name := range []string{NameAnthropic, NameOpenAI, NameOpenAIChat} {
		t.Run(name, func(t *testing.T) {
			req, memo, known := memoRequest(t)
			want, err := EncodeRequest(name, req)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			req.Memo = memo
			b, err := p.(*client).w.encode(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.bytes(); !bytes.Equal(got, want) {
				t.Fatalf("with the memo, %d bytes in %d pieces differ from the %d escaped ones", len(got), len(b), len(want))
			}
			if b.size() != len(want) {
				t.Errorf("size %d, want %d", b.size(), len(want))
			}
			shared := 0
			for _, s := range known {
				j := memo.Get(s)
				for _, piece := range b {
					if unsafe.SliceData(piece) == unsafe.SliceData(j) {
						shared++
					}
				}
			}
			// The prompt and the answer's text are sent as strings on
			// every wire API.
			if shared < 2 {
				t.Errorf("%d of the memo's strings are pieces of the body, want 2 or more", shared)
			}
		})
	}
}

// The memo keeps what a body used and forgets, at the next body, what the
// last one did not.
func TestMemoSweptByTheBody(t *testing.T) {
	req, memo, known := memoRequest(t)
	req.Memo = memo
	gone := strings.Repeat("dropped ", jsonstr.MemoMin)
	memo.Put(gone, jsonstr.Append(nil, gone))
	if _, err := (anthropicWire{}).encode(req); err != nil {
		t.Fatal(err)
	}
	// Put since the last sweep: still known after one body.
	if memo.Get(gone) == nil {
		t.Fatal("a string put before the body was forgotten by it")
	}
	if _, err := (anthropicWire{}).encode(req); err != nil {
		t.Fatal(err)
	}
	if _, err := (anthropicWire{}).encode(req); err != nil {
		t.Fatal(err)
	}
	if memo.Get(gone) != nil {
		t.Error("a string no body used is still known")
	}
	if memo.Get(known[0]) == nil {
		t.Error("the prompt, in every body, was forgotten")
	}
}

// A body in pieces reaches the server whole, with its length, the same
// bytes as one escaped.
func TestMemoBodySent(t *testing.T) {
	req, memo, _ := memoRequest(t)
	want, err := EncodeRequest(NameAnthropic, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var length int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		length = r.ContentLength
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()
	p, err := New(NameAnthropic, Options{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	req.Memo = memo
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || length != int64(len(want)) {
		t.Errorf("the server got %d bytes (Content-Length %d), want the %d escaped ones", len(got), length, len(want))
	}
}
