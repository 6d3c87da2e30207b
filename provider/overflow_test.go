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
