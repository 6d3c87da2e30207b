package provider

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// IsContextOverflow reports whether err is an API's answer that the request
// does not fit the model's context window: Anthropic's "prompt is too long",
// OpenAI's context_length_exceeded ("maximum context length", "exceeds the
// context window"), and the wordings of compatible servers. The caller can
// then shorten the conversation and send it again; retrying it as it is
// cannot help. The Responses API may report it inside a 200 stream (an
// error or response.failed event, code context_length_exceeded): an
// Error of KindRequest with no status.
func IsContextOverflow(err error) bool {
	var e *Error
	if !errors.As(err, &e) || (e.Status != 400 && e.Status != 413 && e.Status != 422 && (e.Status != 0 || e.Kind != KindRequest)) {
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
		"exceed context limit",
	} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// Limits as the refusals state them: Anthropic's "prompt is too long: N
// tokens > M maximum" and "input length and `max_tokens` exceed context
// limit: N + K > M"; OpenAI's (and compatible servers') "maximum context
// length is M tokens", with "(… K in the completion)" when the output cap
// counted.
// They are compiled on the first refusal: most runs never meet one.
var limitPatterns = sync.OnceValue(func() [4]*regexp.Regexp {
	return [4]*regexp.Regexp{
		regexp.MustCompile(`prompt is too long: \d+ tokens > (\d+) maximum`),
		regexp.MustCompile(`exceed context limit: \d+ \+ (\d+) > (\d+)`),
		regexp.MustCompile(`maximum context length is (\d+) tokens`),
		regexp.MustCompile(`(\d+) in the completion`),
	}
})

// ContextLimit returns the most input tokens a request may carry, as an
// overflow refusal (IsContextOverflow) states it, or 0 when it states no
// limit (the Responses API's "Your input exceeds the context window of
// this model" names none). Where the output cap counts toward the limit,
// it is taken off.
func ContextLimit(err error) int64 {
	var e *Error
	if !IsContextOverflow(err) || !errors.As(err, &e) {
		return 0
	}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	m := e.Message
	p := limitPatterns()
	limitAnthropic, limitWithCap, limitOpenAI, limitOutput := p[0], p[1], p[2], p[3]
	if g := limitAnthropic.FindStringSubmatch(m); g != nil {
		return num(g[1])
	}
	if g := limitWithCap.FindStringSubmatch(m); g != nil {
		if lim, out := num(g[2]), num(g[1]); lim > out {
			return lim - out
		}
		return 0
	}
	if g := limitOpenAI.FindStringSubmatch(m); g != nil {
		lim := num(g[1])
		if o := limitOutput.FindStringSubmatch(m); o != nil && num(o[1]) < lim {
			lim -= num(o[1])
		}
		return lim
	}
	return 0
}
