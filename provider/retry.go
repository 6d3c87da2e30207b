package provider

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
)

// Backoff bounds. Without a server hint the wait is 0.5s·2^n, capped at
// backoffCap, less up to a quarter of random jitter. A server's retry-after
// is honoured up to retryAfterCap.
const (
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 8 * time.Second
	retryAfterCap = 60 * time.Second
)

// wireError is one failed attempt, before the retry policy turns it into an
// *Error.
type wireError struct {
	retry  bool
	kind   ErrorKind // for a failure that is not retried; 0 means derive from status
	status int
	msg    string
	header http.Header
	// inStream marks a failure the server reported inside a 200 response
	// (an error event), with its code or type; a retry event names both,
	// having no HTTP status to show.
	inStream bool
	code     string
	// stall is, for an attempt that went quiet, the idle time it waited.
	stall time.Duration
}

// eventText is the error text of a retry event for we.
func (we *wireError) eventText(text string) string {
	if !we.inStream {
		return text
	}
	if we.code != "" && we.code != text {
		text = we.code + ": " + text
	}
	return text + " (in stream)"
}

func (e *wireError) Error() string { return e.msg }

// retry runs attempts until one completes, a failure is final, retries run
// out or ctx is done.
func (c *client) retry(ctx context.Context, to endpoint, body reqBody, emit func(Event)) (conv.Message, error) {
	// stalled is what stalls have cost this request: their idle time and
	// the waits after them (Options.StallBudget).
	var stalled time.Duration
	for n := 0; ; n++ {
		idle := min(c.opts.IdleTimeout, c.opts.StallBudget-stalled)
		msg, err := c.attempt(ctx, to, body, emit, idle)
		if err == nil {
			return msg, nil
		}
		if ctx.Err() != nil {
			return conv.Message{}, ctx.Err()
		}
		var we *wireError
		if !errors.As(err, &we) {
			return conv.Message{}, err
		}
		text := c.redact(we.msg)
		wait := retryWait(n, we.header)
		if we.stall > 0 {
			stalled += we.stall
			if stalled+wait >= c.opts.StallBudget {
				// No time left for another attempt to wait for data.
				we.retry = false
				we.kind = KindTransient
				text += fmt.Sprintf(" (stalls have cost this request %s of its stall budget, --stall-timeout %s)", stalled.Round(time.Millisecond), c.opts.StallBudget)
			}
			stalled += wait
		}
		if !we.retry || n >= c.opts.MaxRetries {
			kind := we.kind
			switch {
			case we.retry:
				kind = KindTransient
			case kind == 0:
				kind = statusKind(we.status, we.msg)
			}
			return conv.Message{}, &Error{Kind: kind, Provider: c.name, Status: we.status, Message: text, Attempts: n + 1}
		}
		emit(Event{Kind: EventRetry, Attempt: n + 1, Status: we.status, Wait: wait, Err: we.eventText(text)})
		if err := c.opts.Sleep(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return conv.Message{}, ctx.Err()
			}
			return conv.Message{}, err
		}
	}
}

// redact removes the API key from text that may reach a user: some servers
// echo the key they were given in their error messages. The placeholder is
// the one the run's redactor writes, [redacted:ANTHROPIC_API_KEY].
func (c *client) redact(s string) string {
	if k := c.opts.APIKey; len(k) >= 4 && strings.Contains(s, k) {
		s = strings.ReplaceAll(s, k, conv.Redacted(cmp.Or(c.keyVar, "API_KEY")))
	}
	return s
}

// classifyStatus turns a non-2xx response into a wireError. x-should-retry
// decides first when present; otherwise 408, 409, 429 and 5xx (Anthropic's
// 529 included) are retried, except a 429 that says the quota is spent.
func classifyStatus(status int, h http.Header, body []byte) *wireError {
	msg, code := errorMessage(body)
	if msg == "" {
		msg = StatusText(status)
	}
	e := &wireError{status: status, msg: msg, header: h}
	switch strings.ToLower(strings.TrimSpace(h.Get("x-should-retry"))) {
	case "true":
		e.retry = true
		return e
	case "false":
		return e
	}
	switch {
	case status == http.StatusTooManyRequests:
		e.retry = code != "insufficient_quota"
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		e.retry = true
	}
	if code == "model_not_found" {
		e.kind = KindAuth
	}
	return e
}

// statusKind is the kind of a failure that is not retried.
func statusKind(status int, msg string) ErrorKind {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusNotFound:
		return KindAuth
	case status == http.StatusBadRequest && modelNotFound(msg):
		return KindAuth
	case status >= 400 && status < 500:
		return KindRequest
	}
	return KindTransient
}

// modelNotFound reports whether an error message says the model is unknown.
func modelNotFound(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") &&
		(strings.Contains(m, "not found") || strings.Contains(m, "does not exist") || strings.Contains(m, "not exist"))
}

// errorMessage extracts the server's own message and code from an error
// body: {"error":{"message","code"|"type"}} (Anthropic, OpenAI and most
// compatible servers), {"error":"text"} or {"message":"text"}. A body that
// isn't JSON is returned trimmed and shortened.
func errorMessage(body []byte) (msg, code string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return "", ""
	}
	if !gjson.ValidBytes(body) {
		s := string(body)
		if len(s) > 512 {
			s = s[:512] + "…"
		}
		return s, ""
	}
	e := gjson.GetBytes(body, "error")
	switch {
	case e.IsObject():
		msg = e.Get("message").String()
		code = e.Get("code").String()
		if code == "" {
			code = e.Get("type").String()
		}
		if raw := e.Get("metadata.raw").String(); raw != "" && raw != msg {
			msg += ": " + raw
		}
	case e.Type == gjson.String:
		msg = e.String()
	default:
		msg = gjson.GetBytes(body, "message").String()
	}
	if msg == "" {
		msg = string(body)
		if len(msg) > 512 {
			msg = msg[:512] + "…"
		}
	}
	return msg, code
}

// retryWait is how long to wait before retry n+1 (n counts from 0): the
// server's retry-after-ms or retry-after (seconds or an HTTP date) when
// given, up to retryAfterCap, else exponential backoff with jitter.
func retryWait(n int, h http.Header) time.Duration {
	if d, ok := retryAfter(h, time.Now()); ok {
		return min(d, retryAfterCap)
	}
	d := backoffBase << min(n, 10)
	d = min(d, backoffCap)
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// retryAfter reads the server's requested delay, if any.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
