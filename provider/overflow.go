package provider

import (
	"errors"
	"strings"
)

// IsContextOverflow reports whether err is an API's answer that the request
// does not fit the model's context window: Anthropic's "prompt is too long",
// OpenAI's context_length_exceeded ("maximum context length", "exceeds the
// context window"), and the wordings of compatible servers. The caller can
// then shorten the conversation and send it again; retrying it as it is
// cannot help.
func IsContextOverflow(err error) bool {
	var e *Error
	if !errors.As(err, &e) || (e.Status != 400 && e.Status != 413 && e.Status != 422) {
		return false
	}
	m := strings.ToLower(e.Message)
	for _, p := range []string{
		"prompt is too long",
		"context_length_exceeded",
		"maximum context length",
		"context window",
		"context length",
		"too many tokens",
		"input is too long",
		"request too large",
	} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}
