package provider

import (
	"errors"
	"fmt"
	"testing"
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
