package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
)

// sentinelKey must never show up in an error or event.
const sentinelKey = "sk-SENTINEL-never-print-me-0123456789"

// recorder collects events and the waits a fake Sleep was asked for.
type recorder struct {
	events []Event
	waits  []time.Duration
}

func (r *recorder) emit(e Event) { r.events = append(r.events, e) }

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.waits = append(r.waits, d)
	return ctx.Err()
}

func (r *recorder) retries() []Event {
	var out []Event
	for _, e := range r.events {
		if e.Kind == EventRetry {
			out = append(out, e)
		}
	}
	return out
}

func newTestProvider(t *testing.T, name string, srv *providertest.Server, rec *recorder, tweak ...func(*Options)) Provider {
	t.Helper()
	opts := Options{APIKey: sentinelKey, BaseURL: srv.URL, MaxRetries: 4, Sleep: rec.sleep, IdleTimeout: 5 * time.Second}
	for _, f := range tweak {
		f(&opts)
	}
	p, err := New(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var hello = Request{Messages: []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hello")}}}}

// noKey fails the test if the sentinel key appears in err or any event.
func noKey(t *testing.T, err error, events []Event) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), sentinelKey) {
		t.Errorf("error text carries the API key: %v", err)
	}
	for _, e := range events {
		if strings.Contains(fmt.Sprintf("%+v", e), sentinelKey) {
			t.Errorf("event carries the API key: %+v", e)
		}
	}
}

func jsonError(status int, msg string, h ...string) providertest.Response {
	r := providertest.Response{Status: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: fmt.Appendf(nil, `{"type":"error","error":{"type":"x","message":%q}}`, msg)}
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	return r
}

func TestRetryAfterHonoured(t *testing.T) {
	for _, name := range wireNames {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(jsonError(429, "rate limited", "retry-after", "7"),
				jsonError(503, "busy", "retry-after-ms", "1500"),
				providertest.Text(name, "fine"))
			rec := &recorder{}
			p := newTestProvider(t, name, srv, rec)
			msg, err := p.Stream(context.Background(), hello, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if msg.Text() != "fine" || msg.StopReason != conv.StopEnd {
				t.Errorf("message = %q %q", msg.Text(), msg.StopReason)
			}
			want := []time.Duration{7 * time.Second, 1500 * time.Millisecond}
			if fmt.Sprint(rec.waits) != fmt.Sprint(want) {
				t.Errorf("waits = %v, want %v", rec.waits, want)
			}
			rs := rec.retries()
			if len(rs) != 2 || rs[0].Attempt != 1 || rs[0].Status != 429 || rs[0].Wait != 7*time.Second ||
				rs[0].Err != "rate limited" || rs[1].Attempt != 2 || rs[1].Status != 503 {
				t.Errorf("retry events = %+v", rs)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
			noKey(t, err, rec.events)
		})
	}
}

func TestRetry529Overloaded(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(jsonError(529, "Overloaded"), providertest.Text(NameAnthropic, "ok"))
	rec := &recorder{}
	msg, err := newTestProvider(t, NameAnthropic, srv, rec).Stream(context.Background(), hello, rec.emit)
	if err != nil || msg.Text() != "ok" {
		t.Fatalf("got %q, %v", msg.Text(), err)
	}
	if len(rec.waits) != 1 || rec.waits[0] < 375*time.Millisecond || rec.waits[0] > 500*time.Millisecond {
		t.Errorf("first backoff = %v, want 0.5s less up to 25%% jitter", rec.waits)
	}
}

// TestRetryJitterSpreads: the backoff is jittered, not fixed: 200 waits
// for the same retry all fall within the documented range (the base less
// up to a quarter), take at least 150 values, and spread over both halves
// of the range. A fixed delay, or one that always takes the same share
// off, fails; random jitter fails by chance with odds under 2^-190.
func TestRetryJitterSpreads(t *testing.T) {
	for n, base := range []time.Duration{backoffBase, 2 * backoffBase, backoffCap} {
		if n == 2 {
			n = 10 // capped
		}
		lo, hi := base-base/4, base
		mid := lo + (hi-lo)/2
		seen := map[time.Duration]bool{}
		below, above := 0, 0
		for range 200 {
			d := retryWait(n, nil)
			if d < lo || d > hi {
				t.Fatalf("retry %d: wait %v, want within [%v, %v]", n+1, d, lo, hi)
			}
			seen[d] = true
			if d < mid {
				below++
			} else {
				above++
			}
		}
		if len(seen) < 150 || below == 0 || above == 0 {
			t.Errorf("retry %d: 200 waits took %d distinct values, %d below %v and %d above: not jittered", n+1, len(seen), below, mid, above)
		}
	}
}

func TestRetriesExhausted(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	for range 3 {
		srv.Enqueue(jsonError(500, "Internal server error"))
	}
	rec := &recorder{}
	p := newTestProvider(t, NameOpenAIChat, srv, rec, func(o *Options) { o.MaxRetries = 2 })
	_, err := p.Stream(context.Background(), hello, rec.emit)
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindTransient || pe.Status != 500 || pe.Attempts != 3 || pe.Message != "Internal server error" {
		t.Fatalf("err = %#v", err)
	}
	if len(rec.waits) != 2 || rec.waits[1] < 750*time.Millisecond || rec.waits[1] > time.Second {
		t.Errorf("waits = %v, want ~0.5s then ~1s", rec.waits)
	}
}

func TestNotRetried(t *testing.T) {
	cases := []struct {
		name   string
		resp   providertest.Response
		kind   ErrorKind
		status int
		msg    string
	}{
		{"401", jsonError(401, "invalid x-api-key"), KindAuth, 401, "invalid x-api-key"},
		{"403", jsonError(403, "forbidden"), KindAuth, 403, "forbidden"},
		{"404", jsonError(404, "model: nope"), KindAuth, 404, "model: nope"},
		{"400 model", jsonError(400, "The requested model 'x' does not exist."), KindAuth, 400, "The requested model 'x' does not exist."},
		{"400", jsonError(400, "messages: bad"), KindRequest, 400, "messages: bad"},
		{"should-retry false", jsonError(500, "no", "x-should-retry", "false"), KindTransient, 500, "no"},
		{"quota", providertest.Response{Status: 429, Body: []byte(`{"error":{"message":"You exceeded your quota","type":"insufficient_quota","code":"insufficient_quota"}}`)}, KindRequest, 429, "You exceeded your quota"},
		{"plain text", providertest.Response{Status: 400, Body: []byte("bad things\n")}, KindRequest, 400, "bad things"},
		{"key echoed", jsonError(401, "Incorrect API key provided: "+sentinelKey), KindAuth, 401, "Incorrect API key provided: [redacted:OPENAI_API_KEY]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(c.resp)
			rec := &recorder{}
			_, err := newTestProvider(t, NameOpenAI, srv, rec).Stream(context.Background(), hello, rec.emit)
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != c.kind || pe.Status != c.status || pe.Message != c.msg || pe.Attempts != 1 {
				t.Fatalf("err = %#v", err)
			}
			if len(srv.Requests()) != 1 || len(rec.waits) != 0 {
				t.Errorf("retried: %d requests, waits %v", len(srv.Requests()), rec.waits)
			}
			noKey(t, err, rec.events)
		})
	}
}

func TestShouldRetryTrueOverridesStatus(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(jsonError(400, "try again", "x-should-retry", "true"), providertest.Text(NameOpenAI, "ok"))
	rec := &recorder{}
	msg, err := newTestProvider(t, NameOpenAI, srv, rec).Stream(context.Background(), hello, rec.emit)
	if err != nil || msg.Text() != "ok" || len(rec.retries()) != 1 {
		t.Fatalf("got %q, %v, retries %v", msg.Text(), err, rec.retries())
	}
}

func TestStallRetried(t *testing.T) {
	for _, name := range wireNames {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			full := providertest.Text(name, "after the stall")
			stalled := full
			stalled.StallAfter = len(full.Body) / 2
			srv.Enqueue(stalled, full)
			rec := &recorder{}
			p := newTestProvider(t, name, srv, rec, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
			msg, err := p.Stream(context.Background(), hello, rec.emit)
			if err != nil || msg.Text() != "after the stall" {
				t.Fatalf("got %q, %v", msg.Text(), err)
			}
			rs := rec.retries()
			if len(rs) != 1 || rs[0].Status != 0 || !strings.Contains(rs[0].Err, "stalled") {
				t.Errorf("retries = %+v", rs)
			}
		})
	}
}

func TestStallBeforeHeaders(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Response{Delay: time.Hour}, providertest.Text(NameAnthropic, "ok"))
	rec := &recorder{}
	p := newTestProvider(t, NameAnthropic, srv, rec, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
	msg, err := p.Stream(context.Background(), hello, rec.emit)
	if err != nil || msg.Text() != "ok" || len(rec.retries()) != 1 {
		t.Fatalf("got %q, %v, %+v", msg.Text(), err, rec.retries())
	}
}

func TestTruncatedStreamRetried(t *testing.T) {
	for _, name := range wireNames {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			full := providertest.Text(name, "whole")
			// Drop the terminal event: cut at the last event boundary.
			body := string(full.Body)
			cut := strings.LastIndex(strings.TrimSuffix(body, "\n\n"), "\n\n") + 2
			srv.Enqueue(providertest.Response{Body: []byte(body[:cut])}, full)
			rec := &recorder{}
			msg, err := newTestProvider(t, name, srv, rec).Stream(context.Background(), hello, rec.emit)
			if err != nil || msg.Text() != "whole" {
				t.Fatalf("got %q, %v", msg.Text(), err)
			}
			rs := rec.retries()
			if len(rs) != 1 || !strings.Contains(rs[0].Err, "terminal event") {
				t.Errorf("retries = %+v", rs)
			}
		})
	}
}

func TestConnectionRefusedRetried(t *testing.T) {
	addr := closedPort(t)
	rec := &recorder{}
	p, err := New(NameOpenAIChat, Options{APIKey: sentinelKey, BaseURL: "http://" + addr, MaxRetries: 1, Sleep: rec.sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), hello, rec.emit)
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindTransient || pe.Attempts != 2 || len(rec.retries()) != 1 {
		t.Fatalf("err = %#v, retries %+v", err, rec.retries())
	}
	noKey(t, err, rec.events)
}

func TestInStreamErrors(t *testing.T) {
	cases := []struct {
		name, provider, body string
		retried              bool
		retryErr             string // the retry event's text: no HTTP status, so it says what failed
	}{
		{"anthropic overloaded", NameAnthropic, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", true, "overloaded_error: Overloaded (in stream)"},
		{"anthropic invalid", NameAnthropic, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n", false, ""},
		{"responses failed server", NameOpenAI, "data: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n", true, "server_error: boom (in stream)"},
		{"responses failed rate limit", NameOpenAI, "data: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"}}}\n\n", true, "rate_limit_exceeded: slow down (in stream)"},
		{"responses error event nested", NameOpenAI, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"server_error\",\"code\":\"server_error\",\"message\":\"oops\"}}\n\n", true, "server_error: oops (in stream)"},
		{"responses error event", NameOpenAI, "data: {\"type\":\"error\",\"code\":\"invalid_prompt\",\"message\":\"no\"}\n\n", false, ""},
		{"chat 500 in stream", NameOpenAIChat, "data: {\"error\":{\"message\":\"upstream\",\"code\":502}}\n\n", true, "502: upstream (in stream)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(providertest.Response{Body: []byte(c.body)}, providertest.Text(c.provider, "ok"))
			rec := &recorder{}
			msg, err := newTestProvider(t, c.provider, srv, rec).Stream(context.Background(), hello, rec.emit)
			if c.retried {
				if err != nil || msg.Text() != "ok" || len(rec.retries()) != 1 {
					t.Fatalf("got %q, %v, %+v", msg.Text(), err, rec.retries())
				}
				if r := rec.retries()[0]; r.Err != c.retryErr || r.Status != 0 {
					t.Errorf("retry event Err %q status %d, want %q", r.Err, r.Status, c.retryErr)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindRequest || len(srv.Requests()) != 1 {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

func TestCancelReturnsPromptly(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	full := providertest.Text(NameAnthropic, "never")
	full.StallAfter = 20
	srv.Enqueue(full)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	p := newTestProvider(t, NameAnthropic, srv, rec, func(o *Options) { o.IdleTimeout = time.Hour })
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	msg, err := p.Stream(ctx, hello, rec.emit)
	if !errors.Is(err, context.Canceled) || len(msg.Content) != 0 {
		t.Fatalf("got %+v, %v; want context.Canceled and no message", msg, err)
	}
	if len(rec.retries()) != 0 {
		t.Errorf("retried after cancel: %+v", rec.retries())
	}
}

func TestHeaders(t *testing.T) {
	for _, name := range wireNames {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(providertest.Text(name, "ok"))
			rec := &recorder{}
			if _, err := newTestProvider(t, name, srv, rec).Stream(context.Background(), hello, rec.emit); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			wantPath := map[string]string{NameAnthropic: "/v1/messages", NameOpenAI: "/responses", NameOpenAIChat: "/chat/completions"}[name]
			if r.Path != wantPath || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s content-type %q", r.Method, r.Path, r.Header.Get("Content-Type"))
			}
			if name == NameAnthropic {
				if r.Header.Get("x-api-key") != sentinelKey || r.Header.Get("anthropic-version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
					t.Errorf("headers %v", r.Header)
				}
			} else if r.Header.Get("Authorization") != "Bearer "+sentinelKey || r.Header.Get("x-api-key") != "" {
				t.Errorf("headers %v", r.Header)
			}
			if strings.Contains(string(r.Body), sentinelKey) {
				t.Error("request body carries the API key")
			}
			if want, err := EncodeRequest(name, hello); err != nil || string(r.Body) != string(want) {
				t.Errorf("sent body differs from Project:\n%s\n%s (%v)", r.Body, want, err)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	cases := []struct{ name, base, want string }{
		{NameAnthropic, "", "https://api.anthropic.com/v1/messages"},
		{NameOpenAI, "", "https://api.openai.com/v1/responses"},
		{NameOpenAIChat, "", "https://api.openai.com/v1/chat/completions"},
		{NameOpenAIChat, "http://localhost:11434/v1/", "http://localhost:11434/v1/chat/completions"},
		{NameAnthropic, "https://proxy.example/anthropic//", "https://proxy.example/anthropic/v1/messages"},
	}
	for _, c := range cases {
		p, err := New(c.name, Options{BaseURL: c.base})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.(*client).url; got != c.want {
			t.Errorf("%s %q: url %q, want %q", c.name, c.base, got, c.want)
		}
	}
	for _, bad := range []struct{ name, base string }{{"gemini", ""}, {NameOpenAI, "localhost:8080"}} {
		_, err := New(bad.name, Options{BaseURL: bad.base})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindConfig {
			t.Errorf("New(%q, %q) = %v, want a KindConfig error", bad.name, bad.base, err)
		}
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"120"}, "Retry-After": {"9"}}, 120 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(10 * time.Second).Format(http.TimeFormat)}}, 10 * time.Second, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{"Retry-After": {"Inf"}}, 0, false},
		{http.Header{}, 0, false},
	}
	for _, c := range cases {
		got, ok := retryAfter(c.h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("retryAfter(%v) = %v, %v; want %v, %v", c.h, got, ok, c.want, c.ok)
		}
	}
	if got := retryWait(0, http.Header{"Retry-After": {"3600"}}); got != retryAfterCap {
		t.Errorf("an hour's retry-after waits %v, want the %v cap", got, retryAfterCap)
	}
	for n := range 12 {
		if got := retryWait(n, nil); got > backoffCap || got < backoffBase*3/4 {
			t.Errorf("backoff %d = %v out of bounds", n, got)
		}
	}
}

// TestFakeStreams decodes every canned stream providertest renders, for
// every provider, since the rest of awl's tests rely on them.
func TestFakeStreams(t *testing.T) {
	turn := providertest.Turn{Model: "m-1", Thinking: "hmm", Text: "Reading.", InputTokens: 12, OutputTokens: 5,
		Calls: []providertest.Call{{ID: "c1", Name: "read", Input: `{"path":"a"}`}, {ID: "c2", Name: "ls", Input: ""}}}
	for _, name := range wireNames {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			trunc := providertest.Turn{Text: "cut", Length: true}
			srv.Enqueue(providertest.Stream(name, turn), providertest.Stream(name, trunc),
				providertest.Response{Body: []byte(`{"error":{"message":"nope"}}`), Status: 400})
			rec := &recorder{}
			p := newTestProvider(t, name, srv, rec)
			msg, err := p.Stream(context.Background(), hello, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			uses := msg.ToolUses()
			if msg.Text() != "Reading." || msg.Model != "m-1" || msg.StopReason != conv.StopToolUse || len(uses) != 2 ||
				uses[0].ID != "c1" || uses[0].Input != `{"path":"a"}` || uses[1].Input != "{}" || msg.Usage == nil || msg.Usage.Output != 5 {
				t.Errorf("decoded %+v usage %+v", msg, msg.Usage)
			}
			if msg.Content[0].Type != conv.BlockThinking || msg.Content[0].Thinking != "hmm" {
				t.Errorf("thinking block = %+v", msg.Content[0])
			}
			msg, err = p.Stream(context.Background(), hello, rec.emit)
			if err != nil || msg.StopReason != conv.StopLength || msg.Text() != "cut" {
				t.Errorf("truncated turn: %+v, %v", msg, err)
			}
			if _, err := p.Stream(context.Background(), hello, rec.emit); err == nil || !strings.Contains(err.Error(), "nope") {
				t.Errorf("error turn: %v", err)
			}
		})
	}
}

// TestChatCompatQuirks feeds habits of compatible servers that no recording
// shows: tool calls without ids or indexes, arguments as an object, no
// usage, finish_reason stop after tool calls, and reasoning_content.
func TestChatCompatQuirks(t *testing.T) {
	body := strings.Join([]string{
		`data: {"id":"gen-9","model":"local","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think"}}]}`,
		`data: {"id":"gen-9","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"read","arguments":"{\"path\":"}}]}}]}`,
		`data: {"id":"gen-9","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"a\"}"}}]}}]}`,
		`data: {"id":"gen-9","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"ls","arguments":{"dir":"."}}}]}}]}`,
		`data: {"id":"gen-9","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`data: [DONE]`,
	}, "\n\n") + "\n\n"
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Response{Body: []byte(body)}, providertest.Response{Body: []byte(body)})
	rec := &recorder{}
	p := newTestProvider(t, NameOpenAIChat, srv, rec)
	msg, err := p.Stream(context.Background(), hello, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	uses := msg.ToolUses()
	if msg.StopReason != conv.StopToolUse || len(uses) != 2 || msg.Usage != nil || msg.Content[0].Thinking != "think" {
		t.Fatalf("got %+v", msg)
	}
	if uses[0].Name != "read" || uses[0].Input != `{"path":"a"}` || uses[1].Name != "ls" || uses[1].Input != `{"dir":"."}` {
		t.Errorf("tool calls %+v", uses)
	}
	if uses[0].ID == "" || uses[0].ID == uses[1].ID {
		t.Errorf("ids %q %q: want distinct synthesized ids", uses[0].ID, uses[1].ID)
	}
	again, err := p.Stream(context.Background(), hello, rec.emit)
	if err != nil || again.ToolUses()[0].ID != uses[0].ID || again.ToolUses()[1].ID != uses[1].ID {
		t.Errorf("synthesized ids are not stable: %+v vs %+v", again.ToolUses(), uses)
	}
}

// TestWebPageNotRetried: a 200 answer that is a web page (a proxy's login
// page, a wrong base URL) fails at once, as a request error (exit 5), and
// the error names the status, the Content-Type and the page's first bytes.
// It is HTML by its type, or by its first byte whatever the type says.
func TestWebPageNotRetried(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>Sign in – Corp Proxy</title></head><body>key " + sentinelKey + strings.Repeat("é", 300) + "</body></html>"
	for _, ct := range []string{"text/html; charset=utf-8", "text/plain", "text/event-stream"} {
		for _, name := range wireNames {
			t.Run(name+"/"+ct, func(t *testing.T) {
				srv := providertest.New()
				defer srv.Close()
				h := http.Header{"Content-Type": {ct}}
				srv.Enqueue(providertest.Response{Header: h, Body: []byte(page)}, providertest.Text(name, "never"))
				rec := &recorder{}
				_, err := newTestProvider(t, name, srv, rec).Stream(context.Background(), hello, rec.emit)
				var pe *Error
				if !errors.As(err, &pe) || pe.Kind != KindRequest || pe.Attempts != 1 {
					t.Fatalf("err = %#v, want a KindRequest error after one attempt", err)
				}
				for _, w := range []string{"(200)", "Content-Type " + ct, "<!DOCTYPE html> <html><head><title>Sign in – Corp Proxy"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if !utf8.ValidString(err.Error()) || len(err.Error()) > 600 {
					t.Errorf("error is not short valid UTF-8: %q", err)
				}
				noKey(t, err, rec.events)
				if n := len(rec.retries()); n != 0 {
					t.Errorf("%d retries, want none", n)
				}
				if len(srv.Requests()) != 1 {
					t.Errorf("%d requests, want 1", len(srv.Requests()))
				}
			})
		}
	}
}

// TestStallBudget: a server that stays silent costs a request at most its
// stall budget in all (the stalls and the waits after them), however many
// retries are allowed. With a 100 ms idle timeout and a 1.25 s budget, the
// first stall and its wait (at most 0.5 s) leave room for a second attempt;
// the second stall and its wait (at least 0.75 s) do not: two attempts, not
// five, and the error says why.
func TestStallBudget(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	for range 5 {
		srv.Enqueue(providertest.Response{Delay: time.Hour})
	}
	rec := &recorder{}
	p := newTestProvider(t, NameAnthropic, srv, rec, func(o *Options) {
		o.IdleTimeout = 100 * time.Millisecond
		o.StallBudget = 1250 * time.Millisecond
	})
	_, err := p.Stream(context.Background(), hello, rec.emit)
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindTransient || pe.Attempts != 2 {
		t.Fatalf("err = %#v, want a KindTransient error after 2 attempts", err)
	}
	if !strings.Contains(err.Error(), "stalled") || !strings.Contains(err.Error(), "--stall-timeout 1.25s") {
		t.Errorf("error %q does not say the stall budget is spent", err)
	}
	if len(rec.retries()) != 1 {
		t.Errorf("retries = %+v, want 1", rec.retries())
	}
}

// TestStallBudgetDefault: 3 minutes in all by default.
func TestStallBudgetDefault(t *testing.T) {
	p, err := New(NameAnthropic, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.(*client).opts.StallBudget; got != 3*time.Minute {
		t.Errorf("default stall budget %s, want 3m", got)
	}
}
