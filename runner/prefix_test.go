package runner_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// A tiny valid PNG (1×1), for image turns.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

// cacheMarker matches Anthropic's cache breakpoints, which move with the end
// of the conversation and are the one permitted difference between requests.
var cacheMarker = regexp.MustCompile(`,?"cache_control":\{[^}]*\}`)

// wire is what the prefix test compares in each request of one wire API.
type wire struct {
	messages string // gjson path of the message list
	fixed    []string
}

var wires = map[string]wire{
	"anthropic":   {messages: "messages", fixed: []string{"system", "tools", "model"}},
	"openai":      {messages: "input", fixed: []string{"instructions", "tools", "model"}},
	"openai-chat": {messages: "messages", fixed: []string{"tools", "model"}},
}

// TestResumedRequestsExtendThePreviousOnesByteForByte runs a 20-turn session
// as four runs (the first and three resumes, each opening the session file
// afresh as a new process would), with tool calls, an image prompt and a
// view_image result in between, and a resume on another day. Every request
// must begin with exactly the messages of the one before, serialised
// identically, so provider prompt caches hit.
func TestResumedRequestsExtendThePreviousOnesByteForByte(t *testing.T) {
	for api := range wires {
		t.Run(api, func(t *testing.T) { testPrefix(t, api) })
	}
}

func testPrefix(t *testing.T, api string) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "shot.png"), pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "AGENTS.md"), []byte("Run the tests with make test.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
	srv := providertest.New()
	defer srv.Close()
	prov, err := provider.New(api, provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	env := map[string]string{"SHELL": "/bin/bash", "XDG_CONFIG_HOME": filepath.Join(work, "no-config")}
	img, err := tool.LoadImage(filepath.Join(work, "shot.png"))
	if err != nil {
		t.Fatal(err)
	}

	runs := []struct {
		prompt string
		images []conv.Attachment
		now    time.Time
		calls  [][]providertest.Call // one entry per tool-call turn
	}{
		{prompt: "start", now: day, calls: [][]providertest.Call{
			{{ID: "c1", Name: "bash", Input: `{"command":"echo one"}`}},
			{{ID: "c2", Name: "bash", Input: `{"command":"echo two"}`}, {ID: "c3", Name: "ls", Input: `{}`}},
			{{ID: "c4", Name: "read", Input: `{"path":"AGENTS.md"}`}},
			{{ID: "c5", Name: "write", Input: `{"path":"out.txt","content":"hello"}`}},
		}},
		{prompt: "look at this", images: []conv.Attachment{img}, now: day.Add(time.Hour), calls: [][]providertest.Call{
			{{ID: "c6", Name: "view_image", Input: `{"path":"shot.png"}`}},
			{{ID: "c7", Name: "bash", Input: `{"command":"echo three"}`}},
			{{ID: "c8", Name: "grep", Input: `{"pattern":"hello"}`}},
			{{ID: "c9", Name: "nosuch", Input: `{}`}},
		}},
		{prompt: "again", now: day.Add(2 * time.Hour), calls: [][]providertest.Call{
			{{ID: "c10", Name: "bash", Input: `{"command":"exit 3"}`}},
			{{ID: "c11", Name: "glob", Input: `{"pattern":"*.txt"}`}},
			{{ID: "c12", Name: "edit", Input: `{"path":"out.txt","old_string":"hello","new_string":"bye"}`}},
			{{ID: "c13", Name: "read", Input: `{"path":"out.txt"}`}},
		}},
		{prompt: "next day", now: day.Add(26 * time.Hour), calls: [][]providertest.Call{
			{{ID: "c14", Name: "bash", Input: `{"command":"echo four"}`}},
			{{ID: "c15", Name: "ls", Input: `{"path":"."}`}},
			{{ID: "c16", Name: "bash", Input: `{"command":"echo five"}`}},
			{{ID: "c17", Name: "read", Input: `{"path":"out.txt"}`}},
		}},
	}
	path := ""
	for i, r := range runs {
		for _, calls := range r.calls {
			srv.Enqueue(providertest.Stream(api, providertest.Turn{Calls: calls, InputTokens: 10, OutputTokens: 5}))
		}
		srv.Enqueue(providertest.Stream(api, providertest.Turn{Text: fmt.Sprintf("done %d", i+1), InputTokens: 10, OutputTokens: 5}))
		now := r.now
		res := runner.Run(context.Background(), runner.Config{
			Store:    store,
			Cwd:      work,
			Resume:   openResumed(t, path),
			Prompt:   r.prompt,
			Images:   r.images,
			Provider: prov,
			Model:    "m-1",
			Tools:    tool.Builtins(tool.Env{Dir: work}),
			Known:    []string{"bash", "read", "write", "edit", "ls", "glob", "grep", "view_image"},
			Events:   event.NewEmitter(nil, nil),
			Now:      func() time.Time { return now },
			Getenv:   func(k string) string { return env[k] },
		})
		if res.Err != nil {
			t.Fatalf("run %d: %v", i+1, res.Err)
		}
		if res.Text != fmt.Sprintf("done %d", i+1) {
			t.Fatalf("run %d: text %q", i+1, res.Text)
		}
		path = res.SessionPath
	}

	reqs := srv.Requests()
	if len(reqs) != 20 {
		t.Fatalf("%d requests, want 20", len(reqs))
	}
	w := wires[api]
	var prev []string
	for i, rq := range reqs {
		for _, f := range w.fixed {
			if a, b := strip(gjson.GetBytes(reqs[0].Body, f).Raw), strip(gjson.GetBytes(rq.Body, f).Raw); a != b {
				t.Fatalf("request %d: %s changed:\n%s\nwas\n%s", i+1, f, b, a)
			}
		}
		var cur []string
		for _, m := range gjson.GetBytes(rq.Body, w.messages).Array() {
			cur = append(cur, strip(m.Raw))
		}
		if len(cur) <= len(prev) {
			t.Fatalf("request %d has %d messages, not more than the %d before", i+1, len(cur), len(prev))
		}
		for j := range prev {
			if cur[j] != prev[j] {
				t.Fatalf("request %d: message %d differs from the previous request:\nnow  %s\nwas  %s", i+1, j, cur[j], prev[j])
			}
		}
		prev = cur
	}

	// The image went out, from the durable log, on every request after it.
	for i := 5; i < 20; i++ {
		if !strings.Contains(string(reqs[i].Body), base64.StdEncoding.EncodeToString(pngBytes)) {
			t.Fatalf("request %d lacks the image", i+1)
		}
	}
	// Resuming on another day appended a date diff, and the first request of
	// that run carries it after everything the previous run sent.
	last := string(reqs[15].Body)
	if !strings.Contains(last, "2026-11-30") || strings.Contains(string(reqs[14].Body), "2026-11-30") {
		t.Fatalf("the next-day resume did not add the new date at the end")
	}
	// Nothing was re-sent on same-day resumes: the environment context
	// appears once until the day changes.
	if n := strings.Count(string(reqs[14].Body), "<environment_context>"); n != 1 {
		t.Fatalf("environment context sent %d times by request 15, want 1", n)
	}
}

func strip(s string) string { return cacheMarker.ReplaceAllString(s, "") }
