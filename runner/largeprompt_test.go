package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/internal/jsonstr"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// A long prompt (with a secret in it) and a long tool result are sent from
// their session lines' escaped bytes: the requests of the run, and the
// one a resume builds by escaping them again from the file, agree byte for
// byte on every message they share, and the secret is redacted in all of
// them as in the session.
func TestLongStringsSentAsTheirLinesSpellThem(t *testing.T) {
	for api := range wires {
		t.Run(api, func(t *testing.T) { testLongStrings(t, api) })
	}
}

func testLongStrings(t *testing.T, api string) {
	const secret = "s3cr3t-t0ken-value"
	work := t.TempDir()
	store := &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
	srv := providertest.New()
	defer srv.Close()
	prov, err := provider.New(api, provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	prompt := strings.Repeat("line <b> & \"q\" \\ é \u2028 \x01\t"+secret+"\n", 4000) // ~200 KB
	// ~100 KB for read to return, with the secret in it.
	var big strings.Builder
	for i := range 1800 {
		fmt.Fprintf(&big, "out\t%d \"%s\" \\ <>\n", i, secret)
	}
	if err := os.WriteFile(filepath.Join(work, "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SHELL": "/bin/bash", "XDG_CONFIG_HOME": filepath.Join(work, "no-config")}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	path := ""
	for i, p := range []string{prompt, "again"} {
		if i == 0 {
			srv.Enqueue(providertest.Stream(api, providertest.Turn{Calls: []providertest.Call{
				{ID: "c1", Name: "read", Input: `{"path":"big.txt"}`}}}))
		}
		srv.Enqueue(providertest.Stream(api, providertest.Turn{Text: fmt.Sprintf("done %d", i+1)}))
		res := runner.Run(context.Background(), runner.Config{
			Store: store, Cwd: work, Resume: openResumed(t, path), Prompt: p, Provider: prov, Model: "m-1",
			Tools:  tool.Builtins(tool.Env{Dir: work}),
			Known:  []string{"read"},
			Events: event.NewEmitter(nil, nil),
			Now:    func() time.Time { return now },
			Getenv: func(k string) string { return env[k] },
			Redact: redact.New([]redact.Secret{{Name: "TOKEN", Value: secret}}),
		})
		if res.Err != nil {
			t.Fatalf("run %d: %v", i+1, res.Err)
		}
		path = res.SessionPath
	}
	// Both long strings are long enough for the memo.
	sess, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	long := 0
	for _, e := range sess.Entries {
		if e.Message == nil {
			continue
		}
		for _, b := range e.Message.Content {
			if len(b.Text) >= jsonstr.MemoMin || len(b.Content) >= jsonstr.MemoMin {
				long++
			}
		}
	}
	if long != 2 {
		t.Fatalf("%d strings of the session are long enough for the memo, want 2 (the prompt, the read)", long)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var prev []string
	for i, rq := range reqs {
		body := string(rq.Body)
		if strings.Contains(body, secret) || !strings.Contains(body, "[redacted:TOKEN]") {
			t.Fatalf("request %d: the secret is not redacted", i+1)
		}
		var cur []string
		for _, m := range gjson.GetBytes(rq.Body, wires[api].messages).Array() {
			cur = append(cur, strip(m.Raw))
		}
		for j := range prev {
			if j >= len(cur) || cur[j] != prev[j] {
				t.Fatalf("request %d: message %d differs from the request before", i+1, j)
			}
		}
		prev = cur
	}
}
