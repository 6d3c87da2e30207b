package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
)

func TestIsContextOverflow(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
		want   bool
	}{
		{400, "prompt is too long: 208315 tokens > 200000 maximum", true},
		{400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130211 tokens.", true},
		{400, "Your input exceeds the context window of this model. Please adjust your input and try again.", true},
		{400, "context_length_exceeded", true},
		{413, "request too large", true},
		{400, "messages.1.content: tool_use ids must be unique", false},
		{429, "too many tokens per minute", false}, // a rate limit, retried as such
		{500, "prompt is too long", false},
	} {
		err := fmt.Errorf("wrapped: %w", &Error{Kind: KindRequest, Status: tc.status, Message: tc.msg})
		if got := IsContextOverflow(err); got != tc.want {
			t.Errorf("%d %q: got %v, want %v", tc.status, tc.msg, got, tc.want)
		}
	}
	if IsContextOverflow(errors.New("prompt is too long")) {
		t.Error("a plain error is not a provider's answer")
	}
}

// TestContextLimit: the limit each API's refusal states (bodies quoted in
// public issue threads, see testdata/wire/SOURCES.md), less the output cap
// where it counted; none where the refusal names none.
func TestContextLimit(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
		want   int64
	}{
		{400, "prompt is too long: 208310 tokens > 200000 maximum", 200000},
		{400, "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and try again", 184648},
		{400, "This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.", 4097},
		{400, "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.", 122880},
		{400, "This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input).", 32768},
		{400, "Your input exceeds the context window of this model. Please adjust your input and try again.", 0},
		{0, "Your input exceeds the context window of this model. Please adjust your input and try again.", 0},
		{400, "messages: bad block; maximum context length is 9 tokens", 9},
		{500, "prompt is too long: 9 tokens > 8 maximum", 0}, // not an overflow refusal
		{400, "prompt is too long: 9 tokens > 99999999999999999999 maximum", 0},
	} {
		err := fmt.Errorf("wrapped: %w", &Error{Kind: KindRequest, Status: tc.status, Message: tc.msg})
		if got := ContextLimit(err); got != tc.want {
			t.Errorf("%d %q: got %d, want %d", tc.status, tc.msg, got, tc.want)
		}
	}
	// The Responses API reports it inside the stream: no status.
	if !IsContextOverflow(&Error{Kind: KindRequest, Message: "Your input exceeds the context window of this model."}) {
		t.Error("an in-stream context_length_exceeded is an overflow")
	}
	if IsContextOverflow(&Error{Kind: KindTransient, Message: "context window: connection reset"}) {
		t.Error("a network failure is no overflow")
	}
}

// TestRecordedRefusals: the APIs' real refusal bodies (testdata/wire/
// refusals) are a request error (exit 5), an overflow with the limit
// learnt where one is stated, and a schema refusal that turns the native
// parameter off.
func TestRecordedRefusals(t *testing.T) {
	for _, tc := range []struct {
		file, api string
		overflow  bool
		limit     int64
		schema    bool
	}{
		{"anthropic-too-long.json", NameAnthropic, true, 200000, false},
		{"anthropic-bad-schema.json", NameAnthropic, false, 0, true},
		{"openai-chat-too-long.json", NameOpenAIChat, true, 4097, false},
		{"openai-responses-too-long.json", NameOpenAI, true, 0, false},
		{"openai-chat-bad-schema.json", NameOpenAIChat, false, 0, true},
		{"openai-responses-bad-schema.json", NameOpenAI, false, 0, true},
		{"openai-chat-bad-tool-schema.json", NameOpenAIChat, false, 0, false},
		{"openai-responses-bad-tool-schema.json", NameOpenAI, false, 0, false},
		{"anthropic-bad-tool-schema.json", NameAnthropic, false, 0, false},
		{"anthropic-thinking-enabled.json", NameAnthropic, false, 0, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "wire", "refusals", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(providertest.Response{Status: 400, Body: body})
			p, err := New(tc.api, Options{APIKey: "k", BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Stream(context.Background(), Request{Model: "m", Messages: []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}}}, nil)
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindRequest || e.Status != 400 {
				t.Fatalf("error %v, want a request error with status 400", err)
			}
			if want := tc.file == "anthropic-thinking-enabled.json"; RefusesBudgetThinking(err) != want {
				t.Errorf("RefusesBudgetThinking = %v, want %v", !want, want)
			}
			if IsContextOverflow(err) != tc.overflow || ContextLimit(err) != tc.limit || RejectsOutputSchema(err) != tc.schema {
				t.Errorf("overflow %v limit %d schema %v; want %v %d %v", IsContextOverflow(err), ContextLimit(err), RejectsOutputSchema(err), tc.overflow, tc.limit, tc.schema)
			}
		})
	}
}

// TestRecordedSchemaRefusalInStream: the Responses API's refusal of an
// output schema as an error event (the body Codex logged, in an SSE error
// event of a 200 answer) is a request error that turns the native
// parameter off, as the same refusal as an HTTP 400 is.
func TestRecordedSchemaRefusalInStream(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "wire", "refusals", "openai-responses-bad-schema-event.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Response{Body: []byte("event: error\ndata: " + compact.String() + "\n\n")})
	p, err := New(NameOpenAI, Options{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), Request{Model: "m", Messages: []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}}}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindRequest || !strings.Contains(e.Message, "Invalid schema for response_format 'codex_output_schema'") {
		t.Fatalf("error %v, want a request error with the API's message", err)
	}
	if !RejectsOutputSchema(err) || IsContextOverflow(err) {
		t.Errorf("schema %v overflow %v; want true false", RejectsOutputSchema(err), IsContextOverflow(err))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: a refused schema is not retried", n)
	}
}
